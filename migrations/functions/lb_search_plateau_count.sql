-- lb_search_plateau_count: how many postings of word w on branch b of
-- Domain d score s (a plateau of lb_search_plateaus), counted up to p_cap
-- (one range of the rank index, read at most p_cap rows deep; one cached
-- statement).
CREATE OR REPLACE FUNCTION lb_search_plateau_count(d integer, b integer, w text, s real, p_cap integer)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    RETURN (SELECT count(*) FROM (SELECT FROM mat_search_words m
             WHERE m.domain_id = d AND m.branch_id = b AND m.word = w AND m.score = s
             LIMIT p_cap) x);
END
$function$;
