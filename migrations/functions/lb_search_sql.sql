-- lb_search_sql returns the statements lb_search runs: the full match, the
-- GIN index's reading of the full matches (several words on a branch at
-- its head, no Kind: lb_search_full_keys_sql, here with the limit plus
-- one), for two words the reading of their postings' score plateaus
-- (lb_search_pairs: the best plateaus of the first word probed in the
-- second's postings, lb_search_pair_top_sql, and the meeting of the two
-- words' second plateaus, or best when a word has one, lb_search_pair_sql,
-- and the same read by probes, lb_search_pair_probe_sql),
-- for three words the same of their triples (lb_search_triples: the first
-- word's best plateau probed for the other two, lb_search_triple_top_sql,
-- the same plateau's rows checked for them, lb_search_triple_rows_sql,
-- the rows of the meeting of the first two words' second plateaus, or
-- best, checked for the third, the same function, and the meeting of the
-- three words' second plateaus, or best, lb_search_triple_sql, and the
-- first pair's statements as for two words,
-- lb_search_tier_pairs reading the second tier of the partial matches) and,
-- when partial matching may follow, the partial match of a Kind or a
-- past Revision (its first tier). An overlay read at its head over its
-- base (lb_search_overlay) runs its base's search at the base's head: the
-- base's statements, then the one reading the keys the overlay decides
-- (lb_search_overlay_own).
CREATE OR REPLACE FUNCTION lb_search_sql(p_branch text, p_query text, p_kind text, p_limit integer, p_at bigint DEFAULT NULL::bigint, p_candidates integer DEFAULT 1000, p_partial_candidates integer DEFAULT 100)
 RETURNS TABLE(statement text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
    src text;
    terms tsquery[];
    words text[];
    full_q tsquery;
    wj jsonb;
    ws text[];
    ow text[];
    oc bigint[];
    ovl boolean;
    bs integer[];
    cs bigint[];
    hs bigint[];
    s1 real[];
    s2 real[];
    s3 real[];
    katts jsonb;
    corrs jsonb[];
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    bs := c.bs;
    cs := c.cs;
    hs := c.hs;
    ovl := p_at IS NULL AND cardinality(bs) = 2
           AND EXISTS (SELECT 1 FROM refs x WHERE x.domain_id = c.d AND x.id = bs[1] AND x.mode = 'overlay');
    IF ovl THEN
        -- The base's own search at its head.
        c.b := bs[2];
        c.single := true;
    END IF;
    src := CASE WHEN c.single THEN lb_search_source(c.d, c.b, NULL) ELSE lb_search_source_levels(c.d, c.bs, c.cs, c.hs) END;
    SELECT array_agg(t.term ORDER BY t.o), array_agg(t.word ORDER BY t.o), (array_agg(to_jsonb(ARRAY[t.word] || t.corrections) ORDER BY t.o))[1],
           array_agg(to_jsonb(t.corrections) ORDER BY t.o)
      INTO terms, words, wj, corrs FROM lb_search_terms_levels(bs, p_query) WITH ORDINALITY t(word, corrections, term, o);
    IF terms IS NULL THEN
        RETURN;
    END IF;
    SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
    IF c.single AND coalesce(p_kind, '') = '' AND cardinality(terms) = 1 AND terms[1]::text <> lb_lexeme(words[1]) THEN
        ws := ARRAY(SELECT jsonb_array_elements_text(wj));
        IF terms[1]::text = (SELECT string_agg(lb_lexeme(v), ' | ') FROM unnest(ws) v)::tsquery::text THEN
            SELECT p.words, p.counts INTO ow, oc FROM lb_search_present(c.d, c.b, ws) p;
        END IF;
    END IF;
    IF c.single AND coalesce(p_kind, '') = '' AND cardinality(terms) = 1 AND terms[1]::text = lb_lexeme(words[1]) THEN
        statement := lb_search_words_sql(c.d, c.b, words[1], p_limit);
    ELSIF lb_search_or_ok(c.d, c.b, oc, p_candidates) THEN
        statement := lb_search_or_sql(c.d, c.b, ow, oc, terms[1], p_limit);
    ELSE
        statement := lb_search_full_sql(src, p_kind, terms, p_candidates, p_limit);
    END IF;
    RETURN NEXT;
    IF c.single AND coalesce(p_kind, '') = '' AND cardinality(terms) BETWEEN 2 AND 6 THEN
        -- The GIN index's reading of the full matches (lb_search reads
        -- them so, up to a limit that depends on the lexicon's counts, when
        -- a term is rare or the terms likely meet in few Records; it runs
        -- this with index scans off).
        statement := lb_search_full_keys_sql(c.d, c.b, full_q,
            (SELECT string_agg('(' || x::text || ')', ' | ') FROM unnest(terms) x)::tsquery, p_limit + 1);
        RETURN NEXT;
    END IF;
    IF c.single AND coalesce(p_kind, '') = '' AND cardinality(terms) = 2
       AND terms[1]::text = lb_lexeme(words[1]) AND terms[2]::text = lb_lexeme(words[2]) THEN
        s1 := lb_search_plateaus(c.d, c.b, words[1], 256);
        s2 := lb_search_plateaus(c.d, c.b, words[2], 256);
        IF cardinality(s1) > 0 AND cardinality(s2) > 0 THEN
            statement := lb_search_pair_top_sql(c.d, c.b, words[1], s1[1], words[2]);
            RETURN NEXT;
            statement := lb_search_pair_sql(c.d, c.b, words[1], s1[least(2, cardinality(s1))], words[2],
                                            s2[least(2, cardinality(s2))], p_limit);
            RETURN NEXT;
            statement := lb_search_pair_probe_sql(c.d, c.b, words[1], s1[least(2, cardinality(s1))], words[2],
                                                  s2[least(2, cardinality(s2))], p_limit);
            RETURN NEXT;
        END IF;
    END IF;
    IF c.single AND coalesce(p_kind, '') = '' AND cardinality(terms) = 3
       AND terms[1]::text = lb_lexeme(words[1]) AND terms[2]::text = lb_lexeme(words[2])
       AND terms[3]::text = lb_lexeme(words[3]) THEN
        s1 := lb_search_plateaus(c.d, c.b, words[1], 256);
        s2 := lb_search_plateaus(c.d, c.b, words[2], 256);
        s3 := lb_search_plateaus(c.d, c.b, words[3], 256);
        IF cardinality(s1) > 0 AND cardinality(s2) > 0 AND cardinality(s3) > 0 THEN
            statement := lb_search_triple_top_sql(c.d, c.b, words, 1, s1[1], s2, s3);
            RETURN NEXT;
            statement := lb_search_triple_rows_sql(c.d, c.b, words, ARRAY[1], ARRAY[s1[1]]);
            RETURN NEXT;
            statement := lb_search_triple_rows_sql(c.d, c.b, words, ARRAY[1, 2],
                                                   ARRAY[s1[least(2, cardinality(s1))], s2[least(2, cardinality(s2))]], 1000);
            RETURN NEXT;
            statement := lb_search_triple_sql(c.d, c.b, words[1], s1[least(2, cardinality(s1))], words[2],
                                              s2[least(2, cardinality(s2))], words[3], s3[least(2, cardinality(s3))], p_limit);
            RETURN NEXT;
            -- The second tier of the partial matches from the pairs of
            -- plateaus (lb_search_tier_pairs): the first pair's statements.
            statement := lb_search_pair_top_sql(c.d, c.b, words[1], s1[1], words[2]);
            RETURN NEXT;
            statement := lb_search_pair_sql(c.d, c.b, words[1], s1[least(2, cardinality(s1))], words[2],
                                            s2[least(2, cardinality(s2))], p_limit);
            RETURN NEXT;
        END IF;
    END IF;
    IF cardinality(terms) > 1 THEN
        statement := lb_search_partial_sql(src, p_kind, terms, full_q, p_partial_candidates, p_limit,
                                           c.single AND to_regclass('mat_records_search_rum_idx') IS NOT NULL,
                                           CASE WHEN cardinality(terms) <= 6 THEN cardinality(terms) - 1 END);
        RETURN NEXT;
    END IF;
    IF ovl THEN
        IF cs[2] < hs[2] THEN
            katts := lb_rec_kept_attrs(c.d, bs[2]);
        END IF;
        statement := format('SELECT * FROM lb_search_overlay_own(%L, %L, %L, %L, %L::tsquery, %L::tsquery[], %L::text[], %L::jsonb, %L)',
                            c.d, bs[1], bs[2], cs[2], (SELECT string_agg('(' || x::text || ')', ' | ')::tsquery FROM unnest(terms) x),
                            terms, lb_search_lexemes(words, corrs), katts, coalesce(p_kind, ''));
        RETURN NEXT;
    END IF;
END
$function$;
