-- lb_search_partial_sql: Records matching some of the terms but not all,
-- ranked by the number of terms they match, then by rank. With p_matched
-- only those matching exactly p_matched terms (one tier: lb_search reads
-- the tiers best first). The candidates are at most p_candidates: with
-- p_ordered read in rank order from the RUM index (within a tier the
-- score is the rank of the OR of the terms), else the first ones found,
-- and the ranking is truncated when the cap was reached. ranked is the
-- number of candidates ranked.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_partial_sql(src text, p_kind text, terms tsquery[], full_q tsquery, p_candidates integer, p_limit integer, p_ordered boolean DEFAULT false, p_matched integer DEFAULT NULL::integer)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
#variable_conflict use_column
BEGIN
RETURN (
SELECT format($q$SELECT c.key::text, c.kind::text, c.title,
       (ts_rank(c.search, %2$L::tsquery) * (%3$s) / %4$s)::real AS score, 'partial'::text AS match, NULL::jsonb AS corrections,
       (count(*) OVER ())::integer AS ranked, %9$s AS truncated
  FROM (SELECT m.key, m.kind, m.title, m.search %1$s
           AND %5$s%6$s%10$s
         LIMIT %7$s) c
 ORDER BY (%3$s) DESC, score DESC, c.key
 LIMIT %8$s$q$, src,
    (SELECT string_agg('(' || t::text || ')', ' | ') FROM unnest(terms) t),
    (SELECT string_agg(format('(c.search @@ %L::tsquery)::int', t::text), ' + ') FROM unnest(terms) t),
    cardinality(terms),
    CASE WHEN p_matched IS NULL
         THEN format('m.search @@ %L::tsquery AND NOT m.search @@ %L::tsquery',
                     (SELECT string_agg('(' || t::text || ')', ' | ') FROM unnest(terms) t), full_q::text)
         ELSE format('m.search @@ %L::tsquery AND NOT m.search @@ %L::tsquery',
                     lb_search_atleast(terms, p_matched)::text,
                     CASE WHEN p_matched + 1 >= cardinality(terms) THEN full_q ELSE lb_search_atleast(terms, p_matched + 1) END::text)
    END,
    CASE WHEN coalesce(p_kind, '') <> '' THEN format(' AND m.kind = %L', p_kind) ELSE '' END,
    p_candidates, p_limit,
    CASE WHEN p_ordered THEN 'false' ELSE format('count(*) OVER () >= %s', p_candidates) END,
    CASE WHEN p_ordered THEN format(' ORDER BY m.search <=> %L::tsquery',
                                    (SELECT string_agg('(' || t::text || ')', ' | ') FROM unnest(terms) t)) ELSE '' END));
END
$function$;
