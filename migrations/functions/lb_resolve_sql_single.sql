CREATE OR REPLACE FUNCTION lb_resolve_sql_single(p_branch text, p_mention text, p_kind text, p_limit integer, p_candidates integer DEFAULT 1000, p_partial_candidates integer DEFAULT 100)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int;
    b int;
    h bigint;
    kind_m text := '';
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF coalesce(p_kind, '') <> '' THEN
        kind_m := format(' AND m.kind = %L', p_kind);
    END IF;
    RETURN format($q$WITH k AS (
    SELECT m.key::text AS key, m.kind::text AS kind, m.title FROM mat_records m
     WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = %3$L AND NOT m.deleted%4$s),
s AS (
    SELECT s.key, s.kind, s.title, s.score, s.match
      FROM lb_search(%5$L, %3$L, %6$L, %7$s, NULL, %8$s, %7$s, %9$s) s
     WHERE s.match IN ('full', 'partial') AND s.key NOT IN (SELECT key FROM k)),
c AS (
    SELECT k.key, k.kind, k.title, 1::real AS score, 'key'::text AS reason, 0 AS prio FROM k
    UNION ALL
    SELECT s.key, s.kind, s.title, s.score, z.reason, z.prio
      FROM s CROSS JOIN LATERAL (
        SELECT CASE WHEN lower(s.title) = lower(%3$L) THEN 'title'
                    WHEN s.match = 'full' AND NOT EXISTS (
                         SELECT 1 FROM mat_records m
                          WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = s.key
                            AND m.search @@ plainto_tsquery('simple', %3$L)) THEN 'typo'
                    ELSE 'partial' END AS reason) r
      CROSS JOIN LATERAL (SELECT r.reason, CASE r.reason WHEN 'title' THEN 1 WHEN 'typo' THEN 2 ELSE 3 END AS prio) z)
SELECT c.key, c.kind, c.title, c.score, c.reason FROM c
 ORDER BY c.prio, c.score DESC, c.key
 LIMIT %7$s$q$, d, b, p_mention, kind_m, p_branch, coalesce(p_kind, ''), p_limit, p_candidates, p_partial_candidates);
END
$function$;
