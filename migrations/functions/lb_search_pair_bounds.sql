-- lb_search_pair_bounds: the span of keys two plateaus both cover (word
-- p_x at score p_xs and word p_y at score p_ys, lb_search_plateaus): the
-- larger of their first keys and the smaller of their last, the only keys
-- a Record holding both can have; lo and hi are NULL when a plateau is
-- empty or the two do not overlap. Four descents of the rank index by one
-- static statement (a plan kept for the session), where the span was read
-- before by a statement built as text for each pair of plateaus
-- (lb_search_plateaus_from_sql): at 10M, of the 1.6 ms a pair's span took
-- to count, 0.35 ms was that statement's. Keys compare as the column does
-- (COLLATE "C"). OFFSET 0 keeps the four descents one each: pulled up,
-- each reference to a key would run its descent again.
CREATE OR REPLACE FUNCTION lb_search_pair_bounds(d integer, b integer, p_x text, p_xs real, p_y text, p_ys real, OUT lo text, OUT hi text)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
BEGIN
    SELECT CASE WHEN v.ok THEN v.lo END, CASE WHEN v.ok THEN v.hi END INTO lo, hi
      FROM (SELECT greatest(u.xf, u.yf) AS lo, least(u.xl, u.yl) AS hi,
                   u.xf IS NOT NULL AND u.yf IS NOT NULL AND greatest(u.xf, u.yf) <= least(u.xl, u.yl) AS ok
              FROM (SELECT (SELECT m.key FROM mat_search_words m
                             WHERE m.domain_id = d AND m.branch_id = b AND m.word = p_x AND m.score = p_xs
                             ORDER BY m.key LIMIT 1) AS xf,
                           (SELECT m.key FROM mat_search_words m
                             WHERE m.domain_id = d AND m.branch_id = b AND m.word = p_x AND m.score = p_xs
                             ORDER BY m.key DESC LIMIT 1) AS xl,
                           (SELECT m.key FROM mat_search_words m
                             WHERE m.domain_id = d AND m.branch_id = b AND m.word = p_y AND m.score = p_ys
                             ORDER BY m.key LIMIT 1) AS yf,
                           (SELECT m.key FROM mat_search_words m
                             WHERE m.domain_id = d AND m.branch_id = b AND m.word = p_y AND m.score = p_ys
                             ORDER BY m.key DESC LIMIT 1) AS yl
                    OFFSET 0) u) v;
END
$function$;
