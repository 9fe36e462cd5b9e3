-- lb_search: rows of match 'full' or 'partial', then one row of match
-- 'corrections' whose corrections column maps corrected words to their
-- corrections. Every result row carries the number of candidates its
-- statement ranked and whether that ranking was truncated (the candidates
-- were the first matches found, not the best: see lb_search_full_sql). On
-- a branch read at its head, a one-word query (no Kind) reads the word's
-- postings best first (lb_search_words_sql), and with the RUM index
-- present the partial matches are read in rank order, tier by tier. The 'corrections' row carries the totals: the
-- candidates ranked and whether any ranking was truncated.
CREATE OR REPLACE FUNCTION lb_search(p_branch text, p_query text, p_kind text, p_limit integer, p_at bigint DEFAULT NULL::bigint, p_candidates integer DEFAULT 1000, p_partial_min integer DEFAULT 5, p_partial_candidates integer DEFAULT 100)
 RETURNS TABLE(key text, kind text, title text, score real, match text, corrections jsonb, ranked integer, truncated boolean)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
DECLARE
    c record;
    r record;
    terms tsquery[];
    words text[];
    corr jsonb;
    full_q tsquery;
    src text;
    ordered boolean;
    n int := 0;
    total int := 0;
    capped boolean := false;
    fresh boolean;
    k int;
    stmts text[] := '{}';
    s text;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 OR p_candidates IS NULL OR p_candidates < 1
       OR p_partial_candidates IS NULL OR p_partial_candidates < 1 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    src := CASE WHEN c.single THEN lb_search_source(c.d, c.b, NULL) ELSE lb_search_source_levels(c.d, c.bs, c.cs, c.hs) END;
    ordered := c.single AND to_regclass('mat_records_search_rum_idx') IS NOT NULL;
    SELECT array_agg(t.term), array_agg(t.word),
           coalesce(jsonb_object_agg(t.word, to_jsonb(t.corrections)) FILTER (WHERE cardinality(t.corrections) > 0), '{}')
      INTO terms, words, corr
      FROM lb_search_terms_levels(c.bs, p_query) t;
    IF terms IS NOT NULL THEN
        SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
        IF c.single AND coalesce(p_kind, '') = '' AND cardinality(terms) = 1
           AND terms[1]::text = '''' || replace(replace(words[1], '\', '\\'), '''', '''''') || '''' THEN
            -- One word, one lexeme: its postings hold its rank.
            stmts := ARRAY[lb_search_words_sql(c.d, c.b, words[1], p_limit)];
        ELSE
            -- Several words: the GIN index's first p_candidates matches,
            -- truncated when the cap is hit (the RUM index's order for
            -- several words is not ts_rank's: measured less honest at 1M).
            stmts := ARRAY[lb_search_full_sql(src, p_kind, full_q, p_candidates, p_limit)];
        END IF;
        k := cardinality(terms);
        LOOP
            FOREACH s IN ARRAY stmts LOOP
                fresh := true;
                FOR r IN EXECUTE s LOOP
                    key := r.key;
                    kind := r.kind;
                    title := r.title;
                    score := r.score;
                    match := r.match;
                    corrections := NULL;
                    ranked := r.ranked;
                    truncated := r.truncated;
                    IF fresh THEN
                        total := total + r.ranked;
                        capped := capped OR r.truncated;
                        fresh := false;
                    END IF;
                    n := n + 1;
                    RETURN NEXT;
                END LOOP;
            END LOOP;
            -- Partial matches follow when few Records match every term:
            -- up to 6 terms tier by tier, the most terms matched first.
            k := k - 1;
            EXIT WHEN k < 1 OR n >= p_limit OR cardinality(terms) < 2
                   OR (k = cardinality(terms) - 1 AND n >= coalesce(p_partial_min, 0));
            IF cardinality(terms) <= 6 THEN
                stmts := ARRAY[lb_search_partial_sql(src, p_kind, terms, full_q, p_partial_candidates, p_limit - n, ordered, k)];
            ELSE
                stmts := ARRAY[lb_search_partial_sql(src, p_kind, terms, full_q, p_partial_candidates, p_limit - n)];
                k := 1;
            END IF;
        END LOOP;
    END IF;
    key := NULL;
    kind := NULL;
    title := NULL;
    score := NULL;
    match := 'corrections';
    corrections := coalesce(corr, '{}');
    ranked := total;
    truncated := capped;
    RETURN NEXT;
END
$function$;
