-- lb_search_terms_levels: the query's words, their corrections from the
-- lexicons of every level (a word any level holds is not corrected) and
-- each word's term. The Domain is the transaction's (lb_domain()). A
-- misspelled word's nearest words (the best three of every level's, a word
-- held by several levels once) are read by one statement with the Domain,
-- the levels and the word as literals, as lb_search_terms reads one
-- branch's, planned each time: the levels together are costed as the
-- largest lexicon among them, and the trigram index reads them in one
-- scan. (A statement a level read an overlay's lexicon of a few hundred
-- words whole through its primary key, testing % on every word: 0.28 ms
-- for 500 words at 100k, against 0.05 by the trigram index, and planned
-- once a level; one statement over the levels with the branch a parameter
-- read every level's lexicon whole through its primary key.)
-- Whether a level holds a word is probed level by level too, each probe
-- one primary-key lookup: one statement joining the levels to the lexicon
-- kept, from the sixth call of a session, a generic plan that looked the
-- word up in every level's lexicon through the trigram index. Words one
-- swap of adjacent letters away come first, as in lb_search_terms.
CREATE OR REPLACE FUNCTION lb_search_terms_levels(bs integer[], p_query text)
 RETURNS TABLE(word text, corrections text[], term tsquery)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int := lb_domain();
    w text;
    c text[];
    t tsquery;
    i int;
    lb int;
    known boolean;
BEGIN
    IF cardinality(bs) = 1 THEN
        RETURN QUERY SELECT * FROM lb_search_terms(bs[1], p_query);
        RETURN;
    END IF;
    FOR w IN SELECT x FROM unnest(tsvector_to_array(to_tsvector('simple', left(coalesce(p_query, ''), 500)))) x LIMIT 16 LOOP
        c := '{}';
        t := plainto_tsquery('simple', w);
        IF numnode(t) = 0 THEN
            CONTINUE;
        END IF;
        known := true;
        IF length(w) >= 3 AND w ~ '[[:alpha:]]' THEN
            known := false;
            FOREACH lb IN ARRAY bs LOOP
                known := EXISTS (SELECT 1 FROM mat_lexicon l WHERE l.domain_id = d AND l.branch_id = lb AND l.word = w);
                EXIT WHEN known;
            END LOOP;
        END IF;
        IF NOT known THEN
            EXECUTE format($q$SELECT coalesce(array_agg(z.word::text ORDER BY z.swap DESC, z.sim DESC, z.word), '{}') FROM (
                SELECT y.word, bool_or(y.swap) AS swap, max(y.sim) AS sim FROM (
                    SELECT l.word, true AS swap, similarity(l.word, %3$L) AS sim FROM mat_lexicon l
                     WHERE l.domain_id = %1$L AND l.branch_id = ANY (%2$L::int[]) AND l.word = ANY (%4$L::text[])
                    UNION ALL
                    SELECT l.word, false, similarity(l.word, %3$L) FROM mat_lexicon l
                     WHERE l.domain_id = %1$L AND l.branch_id = ANY (%2$L::int[]) AND l.word %% %3$L) y
                 GROUP BY y.word
                 ORDER BY 2 DESC, 3 DESC, 1 LIMIT 3) z$q$, d, bs, w, lb_search_swaps(w))
               INTO c;
            FOR i IN 1..coalesce(array_length(c, 1), 0) LOOP
                t := t || plainto_tsquery('simple', c[i]);
            END LOOP;
        END IF;
        word := w;
        corrections := c;
        term := t;
        RETURN NEXT;
    END LOOP;
END
$function$;
