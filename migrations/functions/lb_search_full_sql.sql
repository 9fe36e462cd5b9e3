-- lb_search_full_sql: the full match over the FROM clause src. The
-- candidates are at most p_candidates matches: with p_ordered (the RUM
-- index) the best by rank, read in rank order (search <=> q is
-- 1 / ts_rank), else the first ones the GIN index finds, and then the
-- ranking is truncated when the cap was reached. ranked is the number of
-- candidates ranked.
CREATE OR REPLACE FUNCTION lb_search_full_sql(src text, p_kind text, q tsquery, p_candidates integer, p_limit integer, p_ordered boolean DEFAULT false)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT c.key::text, c.kind::text, c.title, ts_rank(c.search, %2$L::tsquery) AS score, 'full'::text AS match, NULL::jsonb AS corrections,
       (count(*) OVER ())::integer AS ranked, %6$s AS truncated
  FROM (SELECT m.key, m.kind, m.title, m.search %1$s
           AND m.search @@ %2$L::tsquery%3$s%7$s
         LIMIT %4$s) c
 ORDER BY score DESC, c.key
 LIMIT %5$s$q$, src, q::text,
    CASE WHEN coalesce(p_kind, '') <> '' THEN format(' AND m.kind = %L', p_kind) ELSE '' END,
    p_candidates, p_limit,
    CASE WHEN p_ordered THEN 'false' ELSE format('count(*) OVER () >= %s', p_candidates) END,
    CASE WHEN p_ordered THEN format(' ORDER BY m.search <=> %L::tsquery', q::text) ELSE '' END)
$function$;
