-- lb_search_tier_pairs: the best p_limit Records of branch b at its head
-- holding two of the three words of a query of three terms, one word each,
-- but not the third, ranked by the sum of the two words' postings scores,
-- exactly, when the caller has read every Record holding all three
-- (p_full): the second tier of the partial matches from the pairs of the
-- words' score plateaus (lb_search_pairs) instead of a walk of their
-- postings (lb_search_tiers). p_w are the three words, or two of them when
-- no Record holds the third (lb_search_tier_words): the tier is then the
-- two words' meeting, one pair.
--
-- A Record holding exactly two of the words is in one pair's meeting
-- alone, and every Record of that meeting not in p_full holds exactly
-- those two; so each pair's best p_limit + cardinality(p_full) Records
-- hold its best p_limit of the tier (or all of them), and the tier's best
-- p_limit are the best of the pairs'. keys and scores are those
-- Records and every Record the pairs returned tied with the p_limit-th
-- (within a millionth, as lb_search_pairs ties), best first (score, then
-- key): the caller ranks them by their ts_rank and key and keeps p_limit;
-- ranked is the Records the pairs returned. keys is
-- NULL when a pair takes another path (lb_search_pairs answered NULL) or
-- when fewer than p_limit Records hold two of the words (the first tier
-- follows: the caller walks the postings, lb_search_tiers). Each word's
-- plateaus are read and counted once for the pairs it is in
-- (lb_search_word_plateaus, lb_search_pairs_of).
CREATE OR REPLACE FUNCTION lb_search_tier_pairs(d integer, b integer, p_w text[], p_full text[], p_limit integer, OUT keys text[], OUT scores double precision[], OUT ranked integer)
 RETURNS record
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    i int;
    j int;
    pk text[];
    ps double precision[];
    ak text[] := '{}';
    sc double precision[] := '{}';
    x lb_search_word_plateaus[];
    r record;
BEGIN
    IF cardinality(p_w) NOT BETWEEN 2 AND 3 OR p_limit < 1 THEN
        RAISE EXCEPTION 'lb_search_tier_pairs: % words, limit %', cardinality(p_w), p_limit USING ERRCODE = '22023';
    END IF;
    ranked := 0;
    x := ARRAY(SELECT ROW(w, NULL, NULL, NULL)::lb_search_word_plateaus FROM unnest(p_w) w);
    FOR i IN 1..cardinality(p_w) - 1 LOOP
        FOR j IN i + 1..cardinality(p_w) LOOP
            SELECT * INTO r FROM lb_search_pairs_of(d, b, x[i], x[j], p_limit + coalesce(cardinality(p_full), 0)) p;
            pk := r.keys;
            ps := r.scores;
            IF pk IS NULL THEN
                RETURN;
            END IF;
            x[i] := r.p_x1;
            x[j] := r.p_x2;
            ranked := ranked + cardinality(pk);
            ak := ak || pk;
            sc := sc || ps;
        END LOOP;
    END LOOP;
    SELECT t.keys, t.scores INTO keys, scores FROM lb_search_keep_tied(ak, sc, p_limit, p_full) t;
    IF cardinality(keys) < p_limit THEN
        keys := NULL;
        scores := NULL;
    END IF;
END
$function$;
