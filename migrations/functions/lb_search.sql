-- lb_search: rows of match 'full' or 'partial', then one row of match
-- 'corrections' whose corrections column maps corrected words to their
-- corrections. Every result row carries the number of candidates its
-- statement ranked and whether that ranking was truncated (the candidates
-- were the first matches found, not the best: see lb_search_full_sql). On
-- a branch read at its head, a one-word query (no Kind) reads the word's
-- postings best first (lb_search_words_sql), several words their full
-- matches from the GIN index or their postings (two or three common words
-- from their postings' score plateaus: lb_search_pairs,
-- lb_search_triples; a misspelled common word beside a common one from the
-- pair of the terms' most common words and the GIN index's read of the
-- rarer corrections, lb_search_term_commons) and their partial matches
-- tier by tier from their postings (lb_search_tiers); elsewhere, with the
-- RUM index present, the partial matches are read in rank order, tier by
-- tier. An overlay read at its head over a base read at its head (one
-- level below it) reads its base's search corrected by its own rows
-- (lb_search_overlay). The 'corrections' row carries the totals: the
-- candidates ranked and whether any ranking was truncated. The body is
-- lb_search_run. No statement it runs plans parallel workers: at 10M a
-- worker attaching to the shared buffers cost more than the probes it
-- shared (a Gather of 180 primary-key probes took 306 ms).
CREATE OR REPLACE FUNCTION lb_search(p_branch text, p_query text, p_kind text, p_limit integer, p_at bigint DEFAULT NULL::bigint, p_candidates integer DEFAULT 1000, p_partial_min integer DEFAULT 5, p_partial_candidates integer DEFAULT 100)
 RETURNS TABLE(key text, kind text, title text, score real, match text, corrections jsonb, ranked integer, truncated boolean)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET enable_seqscan TO 'off'
 SET max_parallel_workers_per_gather TO '0'
AS $function$
DECLARE
    c record;
    terms tsquery[];
    words text[];
    corrs jsonb[];
    corr jsonb;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 OR p_candidates IS NULL OR p_candidates < 1
       OR p_partial_candidates IS NULL OR p_partial_candidates < 1 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    SELECT array_agg(t.term ORDER BY t.o), array_agg(t.word ORDER BY t.o), array_agg(to_jsonb(t.corrections) ORDER BY t.o),
           coalesce(jsonb_object_agg(t.word, to_jsonb(t.corrections)) FILTER (WHERE cardinality(t.corrections) > 0), '{}')
      INTO terms, words, corrs, corr
      FROM lb_search_terms_levels(c.bs, p_query) WITH ORDINALITY t(word, corrections, term, o);
    IF p_at IS NULL AND cardinality(c.bs) = 2 THEN
        -- An overlay over a base that is neither an overlay nor copying.
        RETURN QUERY SELECT * FROM lb_search_overlay(c.d, c.bs, c.cs, c.hs, terms, words, corrs, corr, p_kind, p_limit,
                                                     p_candidates, p_partial_min, p_partial_candidates);
        RETURN;
    END IF;
    RETURN QUERY SELECT * FROM lb_search_run(c.d, c.b, c.single, c.bs, c.cs, c.hs, terms, words, corrs, corr, p_kind, p_limit,
                                             p_candidates, p_partial_min, p_partial_candidates);
END
$function$;
