-- lb_search_present: of the words p_words, those that some Record of
-- branch b holds (the lexicon), in word order, with their Records.
CREATE OR REPLACE FUNCTION lb_search_present(d integer, b integer, p_words text[], OUT words text[], OUT counts bigint[])
 RETURNS record
 LANGUAGE sql
 STABLE
AS $function$
SELECT array_agg(l.word ORDER BY l.word), array_agg(l.records::bigint ORDER BY l.word)
  FROM (SELECT DISTINCT w FROM unnest(p_words) w) u
  JOIN mat_lexicon l ON l.domain_id = d AND l.branch_id = b AND l.word = u.w
 WHERE l.records > 0
$function$;
