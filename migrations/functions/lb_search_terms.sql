-- lb_search_terms returns the query's words, each with its corrections
-- from the lexicon of branch b of the transaction's Domain (lb_domain(),
-- never a parameter), and its term as a tsquery. A misspelled word's
-- nearest words are read by a statement with the Domain, the branch and
-- the word as literals, planned each time: a plan kept for the session
-- (a generic plan, which PL/pgSQL takes after five calls) read the
-- branch's lexicon whole through its primary key instead of the trigram
-- index. The corrections are the lexicon's words one swap of two
-- adjacent letters away (the commonest slip of a typist, which trigrams
-- seldom find: "vavle" shares two of its six trigrams with "valve",
-- similarity 0.2 against pg_trgm's threshold of 0.3), read by the primary
-- key, then the nearest words by trigram similarity; the best three.
CREATE OR REPLACE FUNCTION lb_search_terms(b integer, p_query text)
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
BEGIN
    FOR w IN SELECT x FROM unnest(tsvector_to_array(to_tsvector('simple', left(coalesce(p_query, ''), 500)))) x LIMIT 16 LOOP
        c := '{}';
        t := plainto_tsquery('simple', w);
        IF numnode(t) = 0 THEN
            CONTINUE;
        END IF;
        IF length(w) >= 3 AND w ~ '[[:alpha:]]' AND NOT EXISTS (
               SELECT 1 FROM mat_lexicon l WHERE l.domain_id = d AND l.branch_id = b AND l.word = w) THEN
            EXECUTE format($q$SELECT coalesce(array_agg(z.word ORDER BY z.swap DESC, z.sim DESC, z.word), '{}') FROM (
                SELECT y.word, bool_or(y.swap) AS swap, max(y.sim) AS sim FROM (
                    SELECT l.word, true AS swap, similarity(l.word, %3$L) AS sim FROM mat_lexicon l
                     WHERE l.domain_id = %1$L AND l.branch_id = %2$L AND l.word = ANY (%4$L::text[])
                    UNION ALL
                    SELECT l.word, false, similarity(l.word, %3$L) FROM mat_lexicon l
                     WHERE l.domain_id = %1$L AND l.branch_id = %2$L AND l.word %% %3$L) y
                 GROUP BY y.word
                 ORDER BY 2 DESC, 3 DESC, 1 LIMIT 3) z$q$, d, b, w, lb_search_swaps(w)) INTO c;
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
