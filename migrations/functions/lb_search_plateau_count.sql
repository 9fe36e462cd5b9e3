-- lb_search_plateau_count: how many postings of word w on branch b of
-- Domain d score s (a plateau of lb_search_plateaus), counted up to p_cap
-- (one range of the rank index, read at most p_cap rows deep; one cached
-- statement); with p_lo and p_hi, only those whose key is within them (the
-- span lb_search_pair_span counts).
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
CREATE OR REPLACE FUNCTION lb_search_plateau_count(d integer, b integer, w text, s real, p_lo text, p_hi text, p_cap integer)
 RETURNS integer
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    RETURN (SELECT count(*) FROM (SELECT FROM mat_search_words m
             WHERE m.domain_id = d AND m.branch_id = b AND m.word = w AND m.score = s AND m.key >= p_lo AND m.key <= p_hi
             LIMIT p_cap) x);
END
$function$;
