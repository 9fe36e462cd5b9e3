-- lb_search_present: of the words p_words, those that some Record of
-- branch b holds (the lexicon), in word order, with their Records.
-- Each word's count is a subquery by the lexicon's primary key: as a join
-- of the words to the lexicon, the generic plan a session keeps (the
-- Domain and branch unknown, one branch's lexicon estimated at a few rows)
-- hashed the branch's whole lexicon, 3,231 buffers a call at 10M and
-- growing with the vocabulary (TestSearchLexiconCountsProbeByWord).
-- PL/pgSQL, not SQL: the planner cannot inline its body, so as an SQL
-- function it was planned again on every call; PL/pgSQL keeps the plan
-- of its statement for the session.
CREATE OR REPLACE FUNCTION lb_search_present(d integer, b integer, p_words text[], OUT words text[], OUT counts bigint[])
 RETURNS record
 LANGUAGE plpgsql
 STABLE
AS $function$
#variable_conflict use_column
BEGIN
    SELECT array_agg(y.w ORDER BY y.w COLLATE "C"), array_agg(y.n::bigint ORDER BY y.w COLLATE "C")
      INTO words, counts
      FROM (SELECT u.w, (SELECT l.records FROM mat_lexicon l
                          WHERE l.domain_id = d AND l.branch_id = b AND l.word = u.w) AS n
              FROM (SELECT DISTINCT w FROM unnest(p_words) w) u) y
     WHERE y.n > 0;
END
$function$;
