-- lb_state_unique: the effective, present Records of Kind p_kind whose
-- values ->> p_attr is among p_values (literal predicates, the ivals form
-- where the per-Attribute index is ready, lb_attr_expr: the partial indexes
-- match). SECURITY DEFINER, Domain from lb_domain(): under
-- row-level security ->> is not leakproof and could only filter.
CREATE OR REPLACE FUNCTION lb_state_unique(p_branch integer, p_kind text, p_attr text, p_values text[])
 RETURNS TABLE(key text, value text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_state_levels(p_branch);
    IF cardinality(c.bs) = 1 THEN
        RETURN QUERY EXECUTE format($q$SELECT m.key::text, m."values" ->> %3$L FROM mat_records m
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.kind = %4$L AND %6$s = ANY (%5$L::text[])
   AND NOT m.deleted$q$, c.d, p_branch, p_attr, p_kind, coalesce(p_values, '{}'),
            lb_attr_expr(c.d, ARRAY[p_branch], p_kind, p_attr, 'm'));
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format($q$SELECT e.key::text, e."values" ->> %3$L
  FROM (SELECT DISTINCT u.key FROM %1$s u) c
 CROSS JOIN LATERAL %2$s e
 WHERE e.present AND e.kind = %4$L AND (e."values" ->> %3$L) = ANY (%5$L::text[])$q$,
        lb_rec_cands_sql(c.d, c.bs, c.cs, c.hs,
                         format(' AND m.kind = %L AND %s = ANY (%L::text[])', p_kind, lb_attr_expr(c.d, c.bs, p_kind, p_attr, 'm'),
                                coalesce(p_values, '{}')),
                         true, ''),
        lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, 'c.key'), p_attr, p_kind, coalesce(p_values, '{}'));
END
$function$;
