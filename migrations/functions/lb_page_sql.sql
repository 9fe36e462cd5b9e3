CREATE OR REPLACE FUNCTION lb_page_sql(p_branch text, p_kind text, p_after text, p_limit integer, p_at bigint DEFAULT NULL::bigint)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
    pred text := '';
    fin text := '';
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_page_sql_single(p_branch, p_kind, p_after, p_limit, NULL);
    END IF;
    IF p_at IS NULL AND cardinality(c.bs) = 2 THEN
        RETURN lb_rec_overlay_page_sql(c.d, c.bs, c.cs, c.hs, p_kind, NULL, NULL, p_after, p_limit);
    END IF;
    IF coalesce(p_kind, '') <> '' THEN
        pred := format(' AND m.kind = %L', p_kind);
        fin := format(' AND e.kind = %L', p_kind);
    END IF;
    RETURN lb_rec_page_sql(c.d, c.bs, c.cs, c.hs, lb_rec_cands_sql(c.d, c.bs, c.cs, c.hs, pred, pred <> '', p_after), fin, p_limit);
END
$function$;
