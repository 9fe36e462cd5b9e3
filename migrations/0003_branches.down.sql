-- Reverts 0003: drops the level-chain functions, restores the 0002
-- statements under their names and the 0002 bodies of the functions 0003
-- replaced.

DROP FUNCTION IF EXISTS lb_state_unique(int, text, text, text[]);
DROP FUNCTION IF EXISTS lb_state_links(int, text[]);
DROP FUNCTION IF EXISTS lb_state_records(int, text[]);
DROP FUNCTION IF EXISTS lb_state_levels(int);
DROP FUNCTION IF EXISTS lb_resolve_sql(text, text, text, int, int, int);
DROP FUNCTION IF EXISTS lb_lineage_sql(text, text);
DROP FUNCTION IF EXISTS lb_history_sql(text, text, bigint, int);
DROP FUNCTION IF EXISTS lb_neighborhood_sql(text, text, int, int, int);
DROP FUNCTION IF EXISTS lb_links_sql(text, text, text, text, bigint);
DROP FUNCTION IF EXISTS lb_query_by_attribute_sql(text, text, text, text, text, int);
DROP FUNCTION IF EXISTS lb_page_sql(text, text, text, int, bigint);
DROP FUNCTION IF EXISTS lb_get_sql(text, text, bigint);

ALTER FUNCTION lb_get_sql_single(text, text, bigint) RENAME TO lb_get_sql;
ALTER FUNCTION lb_page_sql_single(text, text, text, int, bigint) RENAME TO lb_page_sql;
ALTER FUNCTION lb_query_by_attribute_sql_single(text, text, text, text, text, int) RENAME TO lb_query_by_attribute_sql;
ALTER FUNCTION lb_links_sql_single(text, text, text, text, bigint) RENAME TO lb_links_sql;
ALTER FUNCTION lb_neighborhood_sql_single(text, text, int, int, int) RENAME TO lb_neighborhood_sql;
ALTER FUNCTION lb_history_sql_single(text, text, bigint, int) RENAME TO lb_history_sql;
ALTER FUNCTION lb_lineage_sql_single(text, text) RENAME TO lb_lineage_sql;
ALTER FUNCTION lb_resolve_sql_single(text, text, text, int, int, int) RENAME TO lb_resolve_sql;

CREATE OR REPLACE FUNCTION lb_at_seq(p_branch text, p_revision text) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    s bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_revision IS NULL OR p_revision = '' THEN
        RETURN NULL;
    END IF;
    SELECT r.seq INTO s FROM revisions r
     WHERE r.domain_id = d AND r.id = p_revision AND r.branch_id = b AND r.seq <= h;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'revision not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN s;
END
$$;

CREATE OR REPLACE FUNCTION lb_links(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL)
    RETURNS TABLE (relation text, from_key text, to_key text, origin text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_links_sql(p_branch, p_key, p_direction, p_relation, p_at);
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    PERFORM lb_require_record(d, b, p_key, p_at);
    RETURN QUERY EXECUTE s;
END
$$;

CREATE OR REPLACE FUNCTION lb_neighborhood(p_branch text, p_key text, p_depth int DEFAULT 2, p_limit int DEFAULT 200, p_fanout int DEFAULT 20)
    RETURNS TABLE (row_type text, key text, kind text, title text, depth int,
                   relation text, from_key text, to_key text, origin text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_neighborhood_sql(p_branch, p_key, p_depth, p_limit, p_fanout);
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    PERFORM lb_require_record(d, b, p_key, NULL);
    RETURN QUERY EXECUTE s;
END
$$;

CREATE OR REPLACE FUNCTION lb_history(p_branch text, p_key text, p_before bigint, p_limit int)
    RETURNS TABLE (revision text, seq bigint, op text, "values" jsonb, author text, message text,
                   at timestamptz, provenance jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_history_sql(p_branch, p_key, p_before, p_limit);
    d int;
    b int;
    h bigint;
    ok boolean;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM mat_history WHERE domain_id = %L AND branch_id = %L AND key = %L)',
                   d, b, p_key) INTO ok;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY EXECUTE s;
END
$$;

CREATE OR REPLACE FUNCTION lb_search_sql(p_branch text, p_query text, p_kind text, p_limit int, p_at bigint DEFAULT NULL,
                              p_candidates int DEFAULT 1000, p_partial_candidates int DEFAULT 100)
    RETURNS TABLE (statement text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    terms tsquery[];
    full_q tsquery;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    SELECT array_agg(t.term) INTO terms FROM lb_search_terms(d, b, p_query) t;
    IF terms IS NULL THEN
        RETURN;
    END IF;
    SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
    statement := lb_search_full_sql(lb_search_source(d, b, p_at), p_kind, full_q, p_candidates, p_limit);
    RETURN NEXT;
    IF cardinality(terms) > 1 THEN
        statement := lb_search_partial_sql(lb_search_source(d, b, p_at), p_kind, terms, full_q, p_partial_candidates, p_limit);
        RETURN NEXT;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lb_search(p_branch text, p_query text, p_kind text, p_limit int, p_at bigint DEFAULT NULL,
                          p_candidates int DEFAULT 1000, p_partial_min int DEFAULT 5, p_partial_candidates int DEFAULT 100)
    RETURNS TABLE (key text, kind text, title text, score real, match text, corrections jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
    SET enable_seqscan = off
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    terms tsquery[];
    corr jsonb;
    full_q tsquery;
    src text;
    n int := 0;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 OR p_candidates IS NULL OR p_candidates < 1
       OR p_partial_candidates IS NULL OR p_partial_candidates < 1 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    src := lb_search_source(d, b, p_at);
    SELECT array_agg(t.term),
           coalesce(jsonb_object_agg(t.word, to_jsonb(t.corrections)) FILTER (WHERE cardinality(t.corrections) > 0), '{}')
      INTO terms, corr
      FROM lb_search_terms(d, b, p_query) t;
    IF terms IS NOT NULL THEN
        SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
        RETURN QUERY EXECUTE lb_search_full_sql(src, p_kind, full_q, p_candidates, p_limit);
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
    RETURN NEXT;
END
$$;

DROP FUNCTION IF EXISTS lb_search_source_levels(int, int[], bigint[], bigint[]);
DROP FUNCTION IF EXISTS lb_search_terms_levels(int, int[], text);
DROP FUNCTION IF EXISTS lb_require_present(text, text, bigint);
DROP FUNCTION IF EXISTS lb_search_vector(int, int, text, text, jsonb);
DROP FUNCTION IF EXISTS lb_rec_page_sql(int, int[], bigint[], bigint[], text, text, int);
DROP FUNCTION IF EXISTS lb_rec_cands_sql(int, int[], bigint[], bigint[], text, boolean, text);
DROP FUNCTION IF EXISTS lb_changed_sql(int, int, bigint, text);
DROP FUNCTION IF EXISTS lb_link_cands_sql(int, int[], bigint[], text, text, text, text);
DROP FUNCTION IF EXISTS lb_link_eff_sql(int, int[], bigint[], bigint[], text, text, text);
DROP FUNCTION IF EXISTS lb_link_say_sql(int, int, int, bigint, boolean, text, text, text);
DROP FUNCTION IF EXISTS lb_rec_meta_sql(int, int[], bigint[]);
DROP FUNCTION IF EXISTS lb_rec_upper_sql(int, int[], bigint[], bigint[], int, text);
DROP FUNCTION IF EXISTS lb_rec_eff_sql(int, int[], bigint[], bigint[], text);
DROP FUNCTION IF EXISTS lb_rec_say_sql(int, int, int, bigint, boolean, text);
DROP FUNCTION IF EXISTS lb_chain(text, bigint);
DROP FUNCTION IF EXISTS lb_scope_chain(text, bigint);
DROP FUNCTION IF EXISTS lb_levels(int, int, bigint, boolean);
