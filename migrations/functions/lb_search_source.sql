-- lb_search_source is the FROM clause of the search statements: the
-- branch's Records at the head, or as of seq p_at (Records unchanged since
-- p_at from mat_records, the others from their history row at p_at, with
-- the search vector computed as the commit computes it).
-- STABLE, as format is: the planner inlines it into its caller's
-- expression instead of planning its body on every call.
CREATE OR REPLACE FUNCTION lb_search_source(d integer, b integer, p_at bigint)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
SELECT CASE WHEN p_at IS NULL THEN
    format('FROM mat_records m WHERE m.domain_id = %L AND m.branch_id = %L AND NOT m.deleted', d, b)
ELSE format($q$FROM (
    SELECT r.key, r.kind, r.title, r.search FROM mat_records r
     WHERE r.domain_id = %1$L AND r.branch_id = %2$L AND NOT r.deleted AND r.seq <= %3$L
    UNION ALL
    SELECT x.key, x.kind, x.title,
           setweight(to_tsvector('simple', x.title), 'A') || setweight(to_tsvector('simple', coalesce((
               SELECT string_agg(x.values ->> (a ->> 'name'), ' ')
                 FROM schemas sc, jsonb_array_elements(sc.compiled -> 'kinds' -> x.kind -> 'attributes') a
                WHERE sc.domain_id = %1$L AND sc.branch_id = %2$L AND (a ->> 'search')::boolean
                  AND a ->> 'name' IS DISTINCT FROM sc.compiled -> 'kinds' -> x.kind ->> 'title'), '')), 'B')
      FROM (SELECT DISTINCT c ->> 'key' AS key FROM revisions v, jsonb_array_elements(v.changes) c
             WHERE v.domain_id = %1$L AND v.branch_id = %2$L AND v.seq > %3$L
               AND c ->> 'op' IN ('put', 'patch', 'delete')) ck
     CROSS JOIN LATERAL (SELECT * FROM mat_history h
             WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = ck.key AND h.seq <= %3$L
             ORDER BY h.seq DESC LIMIT 1) x
     WHERE x.op <> 'delete') m WHERE true$q$, d, b, p_at)
END
$function$;
