-- lb_search_plateaus: the distinct postings scores of word p_word on branch
-- b of Domain d, best first, at most p_max of them: each a descent of the
-- rank index (domain_id, branch_id, word, score DESC, key) below the one
-- before. A word's score depends only on the weights and order of its
-- positions in a Record, so a word has few (its plateaus), each holding
-- its Records in key order in the index.
CREATE OR REPLACE FUNCTION lb_search_plateaus(d integer, b integer, p_word text, p_max integer)
 RETURNS real[]
 LANGUAGE sql
 STABLE
AS $function$
WITH RECURSIVE p(s, n) AS (
    (SELECT s.score, 1 FROM mat_search_words s
      WHERE s.domain_id = d AND s.branch_id = b AND s.word = p_word
      ORDER BY s.score DESC LIMIT 1)
    UNION ALL
    SELECT (SELECT s.score FROM mat_search_words s
             WHERE s.domain_id = d AND s.branch_id = b AND s.word = p_word AND s.score < p.s
             ORDER BY s.score DESC LIMIT 1), p.n + 1
      FROM p WHERE p.s IS NOT NULL AND p.n < p_max)
SELECT coalesce(array_agg(p.s ORDER BY p.s DESC) FILTER (WHERE p.s IS NOT NULL), '{}') FROM p
$function$;
