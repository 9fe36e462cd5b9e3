-- lb_search_or: the answer lb_search_or_sql's statement gives for a
-- one-term query whose present words p_words (in Records p_counts each)
-- are one or two: each word's best p_limit postings, and the Records
-- holding both words from the GIN index (none for one word), ranked as
-- the index's scan reads them (their best p_limit kept), not read again
-- by key: at 10M "setel" (steel and set) has 5,980 such Records, whose
-- second read cost 30,055 buffers of the call's 37,188. The branch is
-- compared as branch_id + 0, a filter no index reads: the session's
-- generic plan (the words unknown to the planner) otherwise ANDed the GIN
-- scan with the branch's whole range of mat_records_iseq_idx (10 million
-- entries, 408 ms at 10M once main's statistics were refreshed after
-- commits) to save heap reads it estimated; the Domain stays a plain
-- equality, which prunes the partitions. An SQL
-- function the planner inlines into lb_search_run's static statement, so
-- its plan is kept for the session instead of a statement built as text
-- and planned on every call. The Domain is compared as bigint, as in
-- lb_search_or_sql, so the GIN index is scanned for the words alone, not
-- for its btree_gin entries of the Domain (the branch, as branch_id + 0,
-- is none of its entries either); with one word the GIN read is not run
-- (a one-time filter).
CREATE OR REPLACE FUNCTION lb_search_or(d integer, b integer, p_words text[], p_counts bigint[], term tsquery, p_limit integer)
 RETURNS TABLE(key text, kind text, title text, score real, match text, corrections jsonb, ranked integer, truncated boolean)
 LANGUAGE sql
 STABLE
AS $function$
WITH several AS (
    SELECT m.key, m.kind, m.title, ts_rank(m.search, term) AS score
      FROM mat_records m
     WHERE cardinality(p_words) = 2
       AND m.domain_id = d::bigint AND m.branch_id + 0 = b AND NOT m.deleted
       AND m.search @@ (lb_lexeme(p_words[1]) || ' & ' || lb_lexeme(p_words[2]))::tsquery),
one AS (
    SELECT DISTINCT p.key FROM unnest(p_words) w(w)
     CROSS JOIN LATERAL (SELECT s.key FROM mat_search_words s
                          WHERE s.domain_id = d AND s.branch_id = b AND s.word = w.w
                          ORDER BY s.score DESC, s.key LIMIT p_limit) p
     WHERE p.key NOT IN (SELECT several.key FROM several))
SELECT r.key::text, r.kind::text, r.title, r.score, 'full'::text AS match, NULL::jsonb AS corrections,
       ((SELECT coalesce(sum(c.n), 0) FROM unnest(p_counts) c(n)) - (SELECT count(*) FROM several))::integer AS ranked,
       false AS truncated
  FROM (SELECT m.key, m.kind, m.title, ts_rank(m.search, term) AS score
          FROM one JOIN mat_records m ON m.domain_id = d AND m.branch_id = b AND m.key = one.key AND NOT m.deleted
        UNION ALL
        SELECT x.key, x.kind, x.title, x.score
          FROM (SELECT v.key, v.kind, v.title, v.score FROM several v ORDER BY v.score DESC, v.key LIMIT p_limit) x) r
 ORDER BY r.score DESC, r.key
 LIMIT p_limit
$function$;
