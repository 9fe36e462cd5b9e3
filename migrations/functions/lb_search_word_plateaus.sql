-- lb_search_word_plateaus: word w's score plateaus on branch b of Domain d
-- as lb_search_pairs_of reads them: their scores, best first
-- (lb_search_plateaus, up to p_max); when fewer than p_max, the sizes of
-- the best ones while they hold at most p_small postings together and of
-- the first past them, each counted up to p_count, and how many fit
-- (top; lb_search_plateau_sizes). lb_search_pairs_of counts the other
-- sizes as a pair needs them and hands them back, so a caller pairing one
-- word with several reads each word's plateaus and counts once.
CREATE OR REPLACE FUNCTION lb_search_word_plateaus(d integer, b integer, w text, p_max integer DEFAULT 256, p_small integer DEFAULT 512, p_count integer DEFAULT 4096)
 RETURNS lb_search_word_plateaus
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    x lb_search_word_plateaus;
BEGIN
    IF p_max < 1 OR p_small < 0 OR p_count < 1 THEN
        RAISE EXCEPTION 'lb_search_word_plateaus: max %, small %, count %', p_max, p_small, p_count
              USING ERRCODE = '22023';
    END IF;
    x.word := w;
    x.scores := lb_search_plateaus(d, b, w, p_max);
    x.top := 0;
    IF cardinality(x.scores) < p_max THEN
        SELECT z.sizes, z.top INTO x.sizes, x.top FROM lb_search_plateau_sizes(d, b, w, x.scores, p_small, p_count) z;
    END IF;
    RETURN x;
END
$function$;
