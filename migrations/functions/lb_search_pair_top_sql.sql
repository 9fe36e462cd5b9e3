-- lb_search_pair_top_sql: the statement of lb_search_pair_top (every
-- Record of branch b holding word p_x at a score of at least p_min and
-- word p_y, with the sum of the two scores), the Domain and branch as
-- constants.
-- STABLE, as format is: the planner inlines it into its caller's
-- expression instead of planning its body on every call.
CREATE OR REPLACE FUNCTION lb_search_pair_top_sql(d integer, b integer, p_x text, p_min real, p_y text)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(s.key), '{}'), coalesce(array_agg(s.score::double precision + t.score), '{}')
  FROM mat_search_words s
  JOIN mat_search_words t ON t.domain_id = %1$s AND t.branch_id = %2$s AND t.key = s.key AND t.word = %5$L
 WHERE s.domain_id = %1$s AND s.branch_id = %2$s AND s.word = %3$L AND s.score >= %4$L::real$q$, d, b, p_x, p_min, p_y)
$function$;
