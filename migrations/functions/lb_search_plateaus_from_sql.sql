-- lb_search_plateaus_from_sql: an expression for the larger of the first
-- keys (with p_last, the smaller of the last keys) of the plateaus of words
-- p_w at scores p_s on branch b of Domain d: each the first (last) entry of
-- a range of the rank index (domain_id, branch_id, word, score DESC, key),
-- one descent, in a scalar subquery the planner runs once (an InitPlan).
-- No Record before the first bound (after the last) holds every word at
-- its plateau's score, so the reads of the meeting of those plateaus
-- (lb_search_pair_sql, lb_search_pair_probe_sql) keep within them: a merge
-- would otherwise read the larger plateau from its start (a word of
-- Supplier names, whose keys sort after the Parts' and the
-- PurchaseOrders', against a word of every Kind). NULL when a plateau is
-- empty (no Record holds them all).
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_plateaus_from_sql(d integer, b integer, p_w text[], p_s real[], p_last boolean DEFAULT false)
 RETURNS text
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
#variable_conflict use_column
BEGIN
    RETURN (
        SELECT format('(SELECT %s(f.k) FROM (%s) f(k) HAVING count(f.k) = %s)',
                      CASE WHEN p_last THEN 'min' ELSE 'max' END,
                      string_agg(format('SELECT (SELECT e.key FROM mat_search_words e WHERE e.domain_id = %s AND e.branch_id = %s'
                                        || ' AND e.word = %L AND e.score = %L::real ORDER BY e.key%s LIMIT 1)',
                                        d, b, x.w, x.s, CASE WHEN p_last THEN ' DESC' ELSE '' END),
                                 ' UNION ALL ' ORDER BY x.o),
                      cardinality(p_w))
          FROM unnest(p_w, p_s) WITH ORDINALITY x(w, s, o));
END
$function$;
