-- Query by Attribute as of a Revision (at=): the multi-level statement of
-- 0003 with the branch cut at the Revision's seq; a key changed after the
-- cut is resolved through its history row, as every at= read is.

CREATE FUNCTION lb_query_by_attribute_at_sql(p_branch text, p_kind text, p_attribute text, p_value text,
                                             p_after text, p_limit int, p_at bigint) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    IF p_at IS NULL THEN
        RETURN lb_query_by_attribute_sql(p_branch, p_kind, p_attribute, p_value, p_after, p_limit);
    END IF;
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF coalesce(p_kind, '') = '' OR coalesce(p_attribute, '') = '' OR p_value IS NULL THEN
        RAISE EXCEPTION 'kind, attribute and value are required' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    RETURN lb_rec_page_sql(c.d, c.bs, c.cs, c.hs,
        lb_rec_cands_sql(c.d, c.bs, c.cs, c.hs,
                         format(' AND m.kind = %L AND (m."values" ->> %L) = %L', p_kind, p_attribute, p_value), true, p_after),
        format(' AND e.kind = %L AND (e."values" ->> %L) = %L', p_kind, p_attribute, p_value), p_limit);
END
$$;

CREATE FUNCTION lb_query_by_attribute_at(p_branch text, p_kind text, p_attribute text, p_value text,
                                         p_after text, p_limit int, p_at bigint)
    RETURNS TABLE (key text, kind text, title text, "values" jsonb, revision text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
BEGIN
    RETURN QUERY EXECUTE lb_query_by_attribute_at_sql(p_branch, p_kind, p_attribute, p_value, p_after, p_limit, p_at);
END
$$;

REVOKE ALL ON FUNCTION lb_query_by_attribute_at_sql(text, text, text, text, text, int, bigint) FROM PUBLIC;
REVOKE ALL ON FUNCTION lb_query_by_attribute_at(text, text, text, text, text, int, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lb_query_by_attribute_at_sql(text, text, text, text, text, int, bigint) TO lorebase_app;
GRANT EXECUTE ON FUNCTION lb_query_by_attribute_at(text, text, text, text, text, int, bigint) TO lorebase_app;
