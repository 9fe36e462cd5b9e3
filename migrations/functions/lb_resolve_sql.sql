CREATE OR REPLACE FUNCTION lb_resolve_sql(p_branch text, p_mention text, p_kind text, p_limit integer, p_candidates integer DEFAULT 1000, p_partial_candidates integer DEFAULT 100)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
    kind_e text := '';
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_resolve_sql_single(p_branch, p_mention, p_kind, p_limit, p_candidates, p_partial_candidates);
    END IF;
    IF coalesce(p_kind, '') <> '' THEN
        kind_e := format(' AND e.kind = %L', p_kind);
    END IF;
    RETURN format($q$WITH k AS (
    SELECT e.key::text AS key, e.kind::text AS kind, e.title FROM %1$s e WHERE e.present%2$s),
s AS (
    SELECT s.key, s.kind, s.title, s.score, s.match
      FROM lb_search(%4$L, %3$L, %5$L, %6$s, NULL, %7$s, %6$s, %8$s) s
     WHERE s.match IN ('full', 'partial') AND s.key NOT IN (SELECT key FROM k)),
c AS (
    SELECT k.key, k.kind, k.title, 1::real AS score, 'key'::text AS reason, 0 AS prio FROM k
    UNION ALL
    SELECT s.key, s.kind, s.title, s.score, z.reason, z.prio
      FROM s CROSS JOIN LATERAL (
        SELECT CASE WHEN lower(s.title) = lower(%3$L) THEN 'title'
                    WHEN s.match = 'full' AND NOT EXISTS (
                         SELECT 1 FROM %9$s e
                          WHERE e.present AND coalesce(e.search, lb_search_vector(%10$L, e.branch_id, e.kind, e.title, e."values"))
                                @@ plainto_tsquery('simple', %3$L)) THEN 'typo'
                    ELSE 'partial' END AS reason) r
      CROSS JOIN LATERAL (SELECT r.reason, CASE r.reason WHEN 'title' THEN 1 WHEN 'typo' THEN 2 ELSE 3 END AS prio) z)
SELECT c.key, c.kind, c.title, c.score, c.reason FROM c
 ORDER BY c.prio, c.score DESC, c.key
 LIMIT %6$s$q$,
        lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, format('%L', p_mention)), kind_e, p_mention, p_branch,
        coalesce(p_kind, ''), p_limit, p_candidates, p_partial_candidates,
        lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, 's.key'), c.d);
END
$function$;
