-- lb_search_or: the answer lb_search_or_sql's statement gives for a
-- one-term query whose present words p_words (in Records p_counts each)
-- are one or two: each word's best p_limit postings, and the Records
-- holding both words from the GIN index (none for one word). An SQL
-- function the planner inlines into lb_search_run's static statement, so
-- its plan is kept for the session instead of a statement built as text
-- and planned on every call. The Domain and branch are compared as bigint
-- for the GIN index, as in lb_search_or_sql; with one word the GIN read is
-- not run (a one-time filter).
CREATE OR REPLACE FUNCTION lb_search_or(d integer, b integer, p_words text[], p_counts bigint[], term tsquery, p_limit integer)
 RETURNS TABLE(key text, kind text, title text, score real, match text, corrections jsonb, ranked integer, truncated boolean)
 LANGUAGE sql
 STABLE
AS $function$
WITH several AS (
    SELECT m.key, ((m.search @@ lb_lexeme(p_words[1])::tsquery)::int + (m.search @@ lb_lexeme(p_words[2])::tsquery)::int) AS n
      FROM mat_records m
     WHERE cardinality(p_words) = 2
       AND m.domain_id = d::bigint AND m.branch_id = b::bigint AND NOT m.deleted
       AND m.search @@ (lb_lexeme(p_words[1]) || ' & ' || lb_lexeme(p_words[2]))::tsquery),
cand AS (
    SELECT p.key FROM unnest(p_words) w(w)
     CROSS JOIN LATERAL (SELECT s.key FROM mat_search_words s
                          WHERE s.domain_id = d AND s.branch_id = b AND s.word = w.w
                          ORDER BY s.score DESC, s.key LIMIT p_limit) p
    UNION SELECT several.key FROM several)
SELECT m.key::text, m.kind::text, m.title, ts_rank(m.search, term) AS score, 'full'::text AS match, NULL::jsonb AS corrections,
       ((SELECT coalesce(sum(c.n), 0) FROM unnest(p_counts) c(n)) - (SELECT coalesce(sum(s.n - 1), 0) FROM several s))::integer AS ranked,
       false AS truncated
  FROM cand JOIN mat_records m ON m.domain_id = d AND m.branch_id = b AND m.key = cand.key AND NOT m.deleted
 ORDER BY score DESC, m.key
 LIMIT p_limit
$function$;
