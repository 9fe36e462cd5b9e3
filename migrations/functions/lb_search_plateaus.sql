-- lb_search_plateaus: the distinct postings scores of word p_word on branch
-- b of Domain d, best first, at most p_max of them: each a descent of the
-- rank index (domain_id, branch_id, word, score DESC, key) below the one
-- before (one cached statement, run once a plateau). A word's score
-- depends only on the weights and order of its positions in a Record, so
-- a word has few (its plateaus), each holding its Records in key order in
-- the index.
CREATE OR REPLACE FUNCTION lb_search_plateaus(d integer, b integer, p_word text, p_max integer)
 RETURNS real[]
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    out real[] := '{}';
    x real := 'Infinity';
BEGIN
    WHILE cardinality(out) < p_max LOOP
        SELECT s.score INTO x FROM mat_search_words s
         WHERE s.domain_id = d AND s.branch_id = b AND s.word = p_word AND s.score < x
         ORDER BY s.score DESC LIMIT 1;
        EXIT WHEN NOT FOUND;
        out := out || x;
    END LOOP;
    RETURN out;
END
$function$;
