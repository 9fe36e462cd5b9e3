-- lb_search_present: of the words p_words, those that some Record of
-- branch b holds (the lexicon), in word order, with their Records.
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
    SELECT array_agg(l.word ORDER BY l.word), array_agg(l.records::bigint ORDER BY l.word)
      INTO words, counts
      FROM (SELECT DISTINCT w FROM unnest(p_words) w) u
      JOIN mat_lexicon l ON l.domain_id = d AND l.branch_id = b AND l.word = u.w
     WHERE l.records > 0;
END
$function$;
