-- lb_search_pair_sql: the statement reading the first p_limit Records, in
-- key order, that hold word p_x at score p_xs and word p_y at score p_ys
-- on branch b of Domain d (the meeting of two plateaus,
-- lb_search_plateaus), as an array of keys. Both plateaus are ranges of
-- the rank index in key order: lb_search_pair_merge runs it as a merge
-- join of the two ranges, stopping at the p_limit-th Record both hold
-- (lb_search_pair_probe reads the same Records by lb_search_pair_probe_sql,
-- a nested loop probing p_y's posting of each Record of p_x's plateau,
-- the smaller). Both ranges keep between the
-- larger of the two plateaus' first keys and the smaller of their last
-- (lb_search_plateaus_from_sql): no Record outside holds both. At 10M the
-- merge of sa's only plateau with pump's largest read 120,176 pages of
-- pump's to the first Supplier key without it.
-- With p_lo_sql and p_hi_sql, the span's bounds are those SQL expressions
-- (lb_search_pair_merge gives its keys, read by lb_search_pair_bounds, as
-- literals); without, the statement reads them (lb_search_plateaus_from_sql).
CREATE OR REPLACE FUNCTION lb_search_pair_sql(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_limit integer, p_lo_sql text, p_hi_sql text)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(x.key ORDER BY x.key), '{}') FROM (
  SELECT s.key FROM mat_search_words s
    JOIN mat_search_words t ON t.domain_id = %1$s AND t.branch_id = %2$s AND t.word = %5$L AND t.score = %6$L::real
                           AND t.key = s.key
   WHERE s.domain_id = %1$s AND s.branch_id = %2$s AND s.word = %3$L AND s.score = %4$L::real
     AND s.key >= %8$s AND t.key >= %8$s AND s.key <= %9$s AND t.key <= %9$s
   ORDER BY s.key LIMIT %7$s) x$q$, d, b, p_x, p_xs, p_y, p_ys, p_limit, p_lo_sql, p_hi_sql)
$function$;
CREATE OR REPLACE FUNCTION lb_search_pair_sql(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT lb_search_pair_sql(d, b, p_x, p_xs, p_y, p_ys, p_limit,
       lb_search_plateaus_from_sql(d, b, ARRAY[p_x, p_y], ARRAY[p_xs, p_ys]),
       lb_search_plateaus_from_sql(d, b, ARRAY[p_x, p_y], ARRAY[p_xs, p_ys], true))
$function$;
