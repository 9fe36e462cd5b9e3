-- lb_search_triple_sql: the statement reading the first p_limit Records,
-- in key order, that hold word p_x at score p_xs, word p_y at score p_ys
-- and word p_z at score p_zs on branch b of Domain d (the meeting of three
-- plateaus, lb_search_plateaus), as an array of keys: a merge join of the
-- ranges of the rank index of the first two (the two smaller plateaus),
-- each Record both hold probed for p_z's posting at p_zs (a lateral
-- subquery: a nested loop whatever the settings), stopping at the
-- p_limit-th Record all three hold (lb_search_triple_merge runs it). Both
-- merged ranges keep between the largest of the three plateaus' first keys
-- and the smallest of their last (lb_search_plateaus_from_sql): no Record
-- outside holds all three.
CREATE OR REPLACE FUNCTION lb_search_triple_sql(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, p_z text, p_zs real, p_limit integer)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(x.key ORDER BY x.key), '{}') FROM (
  SELECT m.key FROM (SELECT s.key FROM mat_search_words s
    JOIN mat_search_words t ON t.domain_id = %1$s AND t.branch_id = %2$s AND t.word = %5$L AND t.score = %6$L::real
                           AND t.key = s.key
   WHERE s.domain_id = %1$s AND s.branch_id = %2$s AND s.word = %3$L AND s.score = %4$L::real
     AND s.key >= %10$s AND t.key >= %10$s AND s.key <= %11$s AND t.key <= %11$s
   ORDER BY s.key OFFSET 0) m
  CROSS JOIN LATERAL (SELECT FROM mat_search_words u
                       WHERE u.domain_id = %1$s AND u.branch_id = %2$s AND u.key = m.key AND u.word = %7$L AND u.score = %8$L::real
                       LIMIT 1) v
  ORDER BY m.key LIMIT %9$s) x$q$, d, b, p_x, p_xs, p_y, p_ys, p_z, p_zs, p_limit,
       lb_search_plateaus_from_sql(d, b, ARRAY[p_x, p_y, p_z], ARRAY[p_xs, p_ys, p_zs]),
       lb_search_plateaus_from_sql(d, b, ARRAY[p_x, p_y, p_z], ARRAY[p_xs, p_ys, p_zs], true))
$function$;
