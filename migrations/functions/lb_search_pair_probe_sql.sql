-- lb_search_pair_probe_sql: the statement of lb_search_pair_probe: the
-- first p_limit Records, in key order, of word p_x's plateau at score p_xs
-- (read within the span of keys both plateaus cover,
-- lb_search_plateaus_from_sql) that hold word p_y at score p_ys, each
-- probed by one primary-key lookup of p_y's posting (a lateral subquery
-- with a LIMIT, never pulled up into a join: with the span's bounds on
-- both sides, as lb_search_pair_sql writes them for a merge, the planner
-- may scan p_y's range once per Record instead, as it did at 10M for bolt
-- and trading, 16,719,850 rows filtered in 2.5 s).
-- With p_lo_sql and p_hi_sql, the span's bounds are those SQL expressions
-- (lb_search_pair_probe gives its keys, read by lb_search_pair_bounds, as
-- literals); without, the statement reads them (lb_search_plateaus_from_sql).
CREATE OR REPLACE FUNCTION lb_search_pair_probe_sql(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_limit integer, p_lo_sql text, p_hi_sql text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(x.key ORDER BY x.key), '{}') FROM (
  SELECT s.key FROM mat_search_words s
  CROSS JOIN LATERAL (SELECT FROM mat_search_words t
                       WHERE t.domain_id = %1$s AND t.branch_id = %2$s AND t.key = s.key AND t.word = %5$L AND t.score = %6$L::real
                       LIMIT 1) t
   WHERE s.domain_id = %1$s AND s.branch_id = %2$s AND s.word = %3$L AND s.score = %4$L::real
     AND s.key >= %8$s AND s.key <= %9$s
   ORDER BY s.key LIMIT %7$s) x$q$, d, b, p_x, p_xs, p_y, p_ys, p_limit, p_lo_sql, p_hi_sql)
$function$;
CREATE OR REPLACE FUNCTION lb_search_pair_probe_sql(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT lb_search_pair_probe_sql(d, b, p_x, p_xs, p_y, p_ys, p_limit,
       lb_search_plateaus_from_sql(d, b, ARRAY[p_x, p_y], ARRAY[p_xs, p_ys]),
       lb_search_plateaus_from_sql(d, b, ARRAY[p_x, p_y], ARRAY[p_xs, p_ys], true))
$function$;
