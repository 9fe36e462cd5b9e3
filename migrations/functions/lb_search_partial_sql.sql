-- lb_search_partial_sql: Records matching some of the terms but not all,
-- ranked by the number of terms they match, then by rank. The candidates
-- are the first p_candidates matches found: truncated when the cap was
-- reached; ranked is the number of candidates ranked.
CREATE OR REPLACE FUNCTION lb_search_partial_sql(src text, p_kind text, terms tsquery[], full_q tsquery, p_candidates integer, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT c.key::text, c.kind::text, c.title,
       (ts_rank(c.search, %2$L::tsquery) * (%3$s) / %4$s)::real AS score, 'partial'::text, NULL::jsonb,
       (count(*) OVER ())::integer AS ranked, count(*) OVER () >= %7$s AS truncated
  FROM (SELECT m.key, m.kind, m.title, m.search %1$s
           AND m.search @@ %2$L::tsquery AND NOT m.search @@ %5$L::tsquery%6$s
         LIMIT %7$s) c
 ORDER BY (%3$s) DESC, score DESC, c.key
 LIMIT %8$s$q$, src,
    (SELECT string_agg('(' || t::text || ')', ' | ') FROM unnest(terms) t),
    (SELECT string_agg(format('(c.search @@ %L::tsquery)::int', t::text), ' + ') FROM unnest(terms) t),
    cardinality(terms), full_q::text,
    CASE WHEN coalesce(p_kind, '') <> '' THEN format(' AND m.kind = %L', p_kind) ELSE '' END,
    p_candidates, p_limit)
$function$;
