CREATE OR REPLACE FUNCTION lb_query_by_attribute_sql(p_branch text, p_kind text, p_attribute text, p_value text, p_after text, p_limit integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF coalesce(p_kind, '') = '' OR coalesce(p_attribute, '') = '' OR p_value IS NULL THEN
        RAISE EXCEPTION 'kind, attribute and value are required' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_query_by_attribute_sql_single(p_branch, p_kind, p_attribute, p_value, p_after, p_limit);
    END IF;
    IF cardinality(c.bs) = 2 THEN
        RETURN lb_rec_overlay_page_sql(c.d, c.bs, c.cs, c.hs, p_kind, p_attribute, p_value, p_after, p_limit);
    END IF;
    RETURN lb_rec_page_sql(c.d, c.bs, c.cs, c.hs,
        lb_rec_cands_sql(c.d, c.bs, c.cs, c.hs,
                         format(' AND m.kind = %L AND %s = %L', p_kind, lb_attr_expr(c.d, c.bs, p_kind, p_attribute, 'm'), p_value), true, p_after),
        format(' AND e.kind = %L AND (e."values" ->> %L) = %L', p_kind, p_attribute, p_value), p_limit);
END
$function$;
