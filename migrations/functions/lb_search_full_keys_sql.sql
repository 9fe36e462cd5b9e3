-- lb_search_full_keys_sql: the statement of lb_search_full_keys, from the
-- GIN index (a bitmap scan: the index's matches, then their rows until
-- p_limit are found). The Domain and branch are compared as bigint so the
-- GIN index is scanned for the words alone (as in lb_search_or_sql); other
-- Domains' Records of the partition the words find are dropped by the
-- filter. With p_index, the GIN index reads p_index, at most p_cap + 1 of
-- its Records are read and each is checked against q (its third column
-- counts them: more than p_cap says the answer may be short); the first
-- p_limit that match, in the order read, are answered.
-- STABLE, as format is: the planner inlines it into its caller's
-- expression instead of planning its body on every call.
CREATE OR REPLACE FUNCTION lb_search_full_keys_sql(d integer, b integer, q tsquery, p_rank tsquery, p_limit integer, p_index tsquery DEFAULT NULL::tsquery, p_cap integer DEFAULT NULL::integer)
 RETURNS text
 LANGUAGE sql
 STABLE
AS $function$
SELECT CASE WHEN p_index IS NULL THEN
format($q$SELECT coalesce(array_agg(x.key), '{}'), coalesce(array_agg(x.score), '{}') FROM (
  SELECT m.key::text AS key, ts_rank(m.search, %4$L::tsquery) AS score FROM mat_records m
   WHERE m.domain_id = %1$L::bigint AND m.branch_id = %2$L::bigint AND NOT m.deleted AND m.search @@ %3$L::tsquery
   LIMIT %5$s) x$q$, d, b, q::text, p_rank::text, p_limit)
ELSE
format($q$SELECT coalesce((array_agg(x.key) FILTER (WHERE x.ok))[1:%5$s], '{}'),
       coalesce((array_agg(CASE WHEN x.ok THEN ts_rank(x.search, %4$L::tsquery) END) FILTER (WHERE x.ok))[1:%5$s], '{}'),
       count(*) FROM (
  SELECT m.key::text AS key, m.search, m.search @@ %3$L::tsquery AS ok FROM mat_records m
   WHERE m.domain_id = %1$L::bigint AND m.branch_id = %2$L::bigint AND NOT m.deleted AND m.search @@ %6$L::tsquery
   LIMIT %7$s) x$q$, d, b, q::text, p_rank::text, p_limit, p_index::text, p_cap::bigint + 1)
END
$function$;
