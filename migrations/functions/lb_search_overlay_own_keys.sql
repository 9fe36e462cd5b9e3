-- lb_search_overlay_own_keys: the keys of overlay ov's own Records that can
-- rank among the best p_limit of a misspelled word's term (tw: the word and
-- its corrections) on the overlay (lb_search_overlay): each word's best
-- p_limit from the overlay's postings, and the Records holding two or more
-- of the words.
--
-- Planned without hash aggregation. The statements of lb_search_overlay
-- keep a generic plan a session, which cannot tell the overlay's branch
-- from its base's: it estimates the overlay's postings of the words as a
-- whole branch's (344,321 rows for bracket at 10M, where the overlay held
-- 103), and a hash aggregate sizes its table by the estimate before it
-- reads a row: 12 MB for the Records holding two words and 6 MB for the
-- union. The search of "brakcet" on that overlay took 5.5 to 8.8 ms with
-- them, 1.9 to 2.3 without. An overlay holds its own changes, which are
-- sorted in microseconds.
CREATE OR REPLACE FUNCTION lb_search_overlay_own_keys(d integer, ov integer, tw text[], p_limit integer)
 RETURNS TABLE(key text)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_hashagg TO 'off'
AS $function$
#variable_conflict use_column
BEGIN
    RETURN QUERY
    SELECT p.key::text FROM unnest(tw) w(w)
     CROSS JOIN LATERAL (SELECT s.key FROM mat_search_words s
                          WHERE s.domain_id = d AND s.branch_id = ov AND s.word = w.w
                          ORDER BY s.score DESC, s.key LIMIT p_limit) p
    UNION
    SELECT s.key::text FROM mat_search_words s
     WHERE cardinality(tw) > 1 AND s.domain_id = d AND s.branch_id = ov AND s.word = ANY (tw)
     GROUP BY s.key HAVING count(*) > 1;
END
$function$;
