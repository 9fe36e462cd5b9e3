-- lb_state_records: the effective, present Records among p_keys.
CREATE OR REPLACE FUNCTION lb_state_records(p_branch integer, p_keys text[])
 RETURNS TABLE(key text, kind text, title text, "values" jsonb, lineage jsonb, created_seq bigint, seq bigint, versions integer)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_state_levels(p_branch);
    IF cardinality(c.bs) = 1 THEN
        RETURN QUERY EXECUTE format($q$SELECT m.key::text, m.kind::text, m.title, m."values", m.lineage, m.created_seq, m.seq, m.versions
  FROM mat_records m
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = ANY ($1) AND NOT m.deleted$q$, c.d, p_branch) USING p_keys;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format($q$SELECT e.key::text, e.kind::text, e.title, e."values", m.lineage, m.created_seq, e.seq, m.versions
  FROM (SELECT DISTINCT k COLLATE "C" AS key FROM unnest($1::text[]) k) q
 CROSS JOIN LATERAL %1$s e
 CROSS JOIN LATERAL %2$s m(lineage, created_seq, versions)
 WHERE e.present$q$, lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, 'q.key'), lb_rec_meta_sql(c.d, c.bs, c.cs)) USING p_keys;
END
$function$;
