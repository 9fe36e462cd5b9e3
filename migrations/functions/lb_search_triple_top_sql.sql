-- lb_search_triple_top_sql: the statement reading one plateau of one word
-- of a three-word query whole (lb_search_triples): every Record of branch b
-- of Domain d holding word p_w[p_x] at score p_xs (a range of the rank
-- index) and both other words, by one probe of each other word's posting
-- per Record (primary key; the third probed only when the second is held;
-- lateral subqueries with a LIMIT, never pulled up into a join, so a nested
-- loop whatever the statistics: a hash join would read a common word's
-- every posting),
-- with the sum of the three postings scores, added in word order (p_w[1]
-- first) as lb_search_triples adds a triple of plateaus. The Domain and
-- branch are constants: every side reads the Domain's partition alone.
CREATE OR REPLACE FUNCTION lb_search_triple_top_sql(d integer, b integer, p_w text[], p_x integer, p_xs real)
 RETURNS text
 LANGUAGE sql
 IMMUTABLE
AS $function$
SELECT format($q$SELECT coalesce(array_agg(a.key), '{}'), coalesce(array_agg(%7$s), '{}')
  FROM mat_search_words a
  CROSS JOIN LATERAL (SELECT b.score FROM mat_search_words b
                       WHERE b.domain_id = %1$s AND b.branch_id = %2$s AND b.key = a.key AND b.word = %5$L LIMIT 1) b
  CROSS JOIN LATERAL (SELECT c.score FROM mat_search_words c
                       WHERE c.domain_id = %1$s AND c.branch_id = %2$s AND c.key = a.key AND c.word = %6$L LIMIT 1) c
 WHERE a.domain_id = %1$s AND a.branch_id = %2$s AND a.word = %3$L AND a.score = %4$L::real$q$,
       d, b, p_w[p_x], p_xs,
       (p_w[1:p_x - 1] || p_w[p_x + 1:3])[1], (p_w[1:p_x - 1] || p_w[p_x + 1:3])[2],
       CASE p_x WHEN 1 THEN 'a.score::float8 + b.score + c.score'
                WHEN 2 THEN 'b.score::float8 + a.score + c.score'
                ELSE 'b.score::float8 + c.score + a.score' END)
$function$;
