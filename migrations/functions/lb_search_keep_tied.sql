-- lb_search_keep_tied: of Records p_keys scored p_scores (those in p_skip
-- left out), the best p_limit and every other tied with the p_limit-th
-- (sums within a millionth of each other are tied: two sums that differ in
-- their last bits give one ts_rank, a real), best first (score, then key).
-- The walks over score plateaus (lb_search_pairs, lb_search_tier_pairs)
-- answer so, for their caller to rank the tied Records by ts_rank and key
-- and keep p_limit: which tied Records come back does not depend on the
-- limit asked.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_keep_tied(p_keys text[], p_scores double precision[], p_limit integer, p_skip text[] DEFAULT NULL::text[], OUT keys text[], OUT scores double precision[])
 RETURNS record
 LANGUAGE plpgsql
 IMMUTABLE
AS $function$
#variable_conflict use_column
BEGIN
    WITH u AS (
        SELECT u.k, u.s FROM unnest(p_keys, p_scores) u(k, s) WHERE u.k <> ALL (coalesce(p_skip, '{}'))),
    kth AS (
        SELECT coalesce((SELECT u.s FROM u ORDER BY u.s DESC OFFSET p_limit - 1 LIMIT 1), 0) AS s)
    SELECT coalesce(array_agg(u.k ORDER BY u.s DESC, u.k), '{}'), coalesce(array_agg(u.s ORDER BY u.s DESC, u.k), '{}')
      INTO keys, scores
      FROM u, kth
     WHERE u.s * (1 + 1e-6) >= kth.s;
END
$function$;
