-- lb_search_full_sql: the full match of the terms (every term) over the
-- FROM clause src, ranked by ts_rank of the OR of the terms (the sum of
-- each matched word's rank alone over the number of words, as the partial
-- matches and the postings walk of lb_search_postings rank). The
-- candidates are at most p_candidates matches: with p_ordered (the RUM
-- index) the first in the index's order of the AND of the terms, else the
-- first ones the GIN index finds, and then the ranking is truncated when
-- the cap was reached. ranked is the number of candidates ranked.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_full_sql(src text, p_kind text, terms tsquery[], p_candidates integer, p_limit integer, p_ordered boolean DEFAULT false)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
#variable_conflict use_column
BEGIN
RETURN (
SELECT format($q$SELECT c.key::text, c.kind::text, c.title, ts_rank(c.search, %8$L::tsquery) AS score, 'full'::text AS match, NULL::jsonb AS corrections,
       (count(*) OVER ())::integer AS ranked, %6$s AS truncated
  FROM (SELECT m.key, m.kind, m.title, m.search %1$s
           AND m.search @@ %2$L::tsquery%3$s%7$s
         LIMIT %4$s) c
 ORDER BY score DESC, c.key
 LIMIT %5$s$q$, src, q::text,
    CASE WHEN coalesce(p_kind, '') <> '' THEN format(' AND m.kind = %L', p_kind) ELSE '' END,
    p_candidates, p_limit,
    CASE WHEN p_ordered THEN 'false' ELSE format('count(*) OVER () >= %s', p_candidates) END,
    CASE WHEN p_ordered THEN format(' ORDER BY m.search <=> %L::tsquery', q::text) ELSE '' END,
    (SELECT string_agg('(' || t::text || ')', ' | ') FROM unnest(terms) t))
  FROM (SELECT string_agg('(' || t::text || ')', ' & ')::tsquery AS q FROM unnest(terms) t) x);
END
$function$;
