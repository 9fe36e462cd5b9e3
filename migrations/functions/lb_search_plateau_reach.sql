-- lb_search_plateau_reach: lb_search_plateau_count (how many postings of
-- word w on branch b of Domain d score s, counted up to p_cap) and the
-- greatest key among those counted: the plateau's first p_cap keys in key
-- order reach that far. Of two plateaus counted to the cap, the one whose
-- keys reach further is the sparser, the smaller (the keys of a word's
-- postings are spread over the branch's Records alike, whatever the word).
CREATE OR REPLACE FUNCTION lb_search_plateau_reach(d integer, b integer, w text, s real, p_cap integer, OUT n integer, OUT reach text)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    SELECT count(*), max(x.key) INTO n, reach
      FROM (SELECT m.key FROM mat_search_words m
             WHERE m.domain_id = d AND m.branch_id = b AND m.word = w AND m.score = s
             ORDER BY m.key LIMIT p_cap) x;
END
$function$;
