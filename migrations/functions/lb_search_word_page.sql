-- lb_search_word_page: the next p_want postings of word p_word on branch b
-- of Domain d after position (p_score, p_key) in rank order (score
-- descending, then key), as their keys and scores in that order. The
-- postings walks of lb_search_postings and lb_search_tiers read a word's
-- list page by page with it: the postings tied at p_score after p_key,
-- then those below p_score, each from the rank index.
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_word_page(d integer, b integer, p_word text, p_score real, p_key text, p_want integer, OUT keys text[], OUT scores real[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
AS $function$
#variable_conflict use_column
BEGIN
    SELECT coalesce(array_agg(x.key ORDER BY x.score DESC, x.key), '{}'), coalesce(array_agg(x.score ORDER BY x.score DESC, x.key), '{}')
      INTO keys, scores
      FROM ((SELECT s.key, s.score FROM mat_search_words s
              WHERE s.domain_id = d AND s.branch_id = b AND s.word = p_word
                AND s.score = p_score AND s.key > p_key
              ORDER BY s.key LIMIT p_want)
            UNION ALL
            (SELECT s.key, s.score FROM mat_search_words s
              WHERE s.domain_id = d AND s.branch_id = b AND s.word = p_word
                AND s.score < p_score
              ORDER BY s.score DESC, s.key LIMIT p_want)
            LIMIT p_want) x;
END
$function$;
