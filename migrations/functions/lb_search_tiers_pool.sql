-- lb_search_tiers_pool: lb_search_tiers' Records scored so far (k, c the
-- number of terms matched, s the sum of the postings' scores; the best
-- p_limit of each number of terms, best first) with new Records added:
-- p_fresh scored from their postings of every word of p_words (primary
-- key), and p_new_k already scored (masks p_new_m, sums p_new_s, from
-- lb_search_tiers_gin_sql). Full matches (every term) are left out;
-- Records already kept are not scored again. n is the number of Records
-- scored.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_tiers_pool(d integer, b integer, p_words text[], p_masks integer[], p_terms integer, p_limit integer, p_fresh text[], p_k text[], p_c integer[], p_s double precision[], p_new_k text[] DEFAULT '{}'::text[], p_new_m integer[] DEFAULT '{}'::integer[], p_new_s double precision[] DEFAULT '{}'::double precision[], OUT k text[], OUT c integer[], OUT s double precision[], OUT n integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
#variable_conflict use_column
BEGIN
    WITH f AS (SELECT DISTINCT u.k FROM unnest(p_fresh) u(k) WHERE u.k <> ALL (p_k)),
    sc AS (
        SELECT w.key AS k, bit_or(x.mask) AS mask, sum(w.score::double precision) AS sum_s
          FROM f
          JOIN mat_search_words w ON w.domain_id = d AND w.branch_id = b AND w.key = f.k AND w.word = ANY (p_words)
          JOIN unnest(p_words, p_masks) x(word, mask) ON x.word = w.word
         GROUP BY w.key
        UNION ALL
        SELECT DISTINCT ON (u.k) u.k, u.m, u.s FROM unnest(p_new_k, p_new_m, p_new_s) u(k, m, s)
         WHERE u.k <> ALL (p_k) AND u.k NOT IN (SELECT f.k FROM f)),
    cand AS (
        SELECT sc.k, bit_count(sc.mask::bit(32))::int AS c, sc.sum_s FROM sc WHERE sc.mask <> (1 << p_terms) - 1
        UNION ALL
        SELECT * FROM unnest(p_k, p_c, p_s)),
    best AS (
        SELECT cand.*, row_number() OVER (PARTITION BY cand.c ORDER BY cand.sum_s DESC, cand.k) AS r FROM cand)
    SELECT coalesce(array_agg(best.k ORDER BY best.c DESC, best.sum_s DESC, best.k), '{}'),
           coalesce(array_agg(best.c ORDER BY best.c DESC, best.sum_s DESC, best.k), '{}'),
           coalesce(array_agg(best.sum_s ORDER BY best.c DESC, best.sum_s DESC, best.k), '{}'),
           ((SELECT count(*) FROM f) + (SELECT count(*) FROM sc) - (SELECT count(*) FROM f f2 WHERE f2.k IN (SELECT sc.k FROM sc)))::int
      INTO k, c, s, n
      FROM best WHERE best.r <= p_limit;
END
$function$;
