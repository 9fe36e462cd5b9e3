CREATE OR REPLACE FUNCTION lb_search_full_sql(src text, p_kind text, q tsquery, p_candidates integer, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT c.key::text, c.kind::text, c.title, ts_rank(c.search, %2$L::tsquery) AS score, 'full'::text, NULL::jsonb
  FROM (SELECT m.key, m.kind, m.title, m.search %1$s
           AND m.search @@ %2$L::tsquery%3$s
         LIMIT %4$s) c
 ORDER BY score DESC, c.key
 LIMIT %5$s$q$, src, q::text,
    CASE WHEN coalesce(p_kind, '') <> '' THEN format(' AND m.kind = %L', p_kind) ELSE '' END,
    p_candidates, p_limit)
$function$;
