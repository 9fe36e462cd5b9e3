-- lb_search: rows of match 'full' or 'partial', then one row of match
-- 'corrections' whose corrections column maps corrected words to their
-- corrections. Every result row carries the number of candidates its
-- statement ranked and whether that ranking was truncated (the candidates
-- were the first matches found, not the best: see lb_search_full_sql). On
-- a branch read at its head with the RUM index present, the full match
-- reads its candidates in rank order.
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
    terms tsquery[];
    corr jsonb;
    full_q tsquery;
    src text;
    n int := 0;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 OR p_candidates IS NULL OR p_candidates < 1
       OR p_partial_candidates IS NULL OR p_partial_candidates < 1 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    src := CASE WHEN c.single THEN lb_search_source(c.d, c.b, NULL) ELSE lb_search_source_levels(c.d, c.bs, c.cs, c.hs) END;
    SELECT array_agg(t.term),
           coalesce(jsonb_object_agg(t.word, to_jsonb(t.corrections)) FILTER (WHERE cardinality(t.corrections) > 0), '{}')
      INTO terms, corr
      FROM lb_search_terms_levels(c.bs, p_query) t;
    IF terms IS NOT NULL THEN
        SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
        RETURN QUERY EXECUTE lb_search_full_sql(src, p_kind, full_q, p_candidates, p_limit,
                                                c.single AND to_regclass('mat_records_search_rum_idx') IS NOT NULL);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n < coalesce(p_partial_min, 0) AND n < p_limit AND cardinality(terms) > 1 THEN
            RETURN QUERY EXECUTE lb_search_partial_sql(src, p_kind, terms, full_q, p_partial_candidates, p_limit - n);
        END IF;
    END IF;
    key := NULL;
    kind := NULL;
    title := NULL;
    score := NULL;
    match := 'corrections';
    corrections := coalesce(corr, '{}');
    ranked := NULL;
    truncated := NULL;
    RETURN NEXT;
END
$function$;
