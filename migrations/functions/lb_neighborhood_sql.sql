CREATE OR REPLACE FUNCTION lb_neighborhood_sql(p_branch text, p_key text, p_depth integer, p_limit integer, p_fanout integer DEFAULT 20)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF p_depth IS NULL OR p_depth < 1 OR p_depth > 3 THEN
        RAISE EXCEPTION 'depth must be 1 to 3' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10000 OR p_fanout IS NULL OR p_fanout < 1 OR p_fanout > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_neighborhood_sql_single(p_branch, p_key, p_depth, p_limit, p_fanout);
    END IF;
    RETURN lb_levels_sql('neighborhood', c.d, c.bs, lb_level_cuts(c.cs, c.hs), p_key, 'both', '', p_depth, p_limit, p_fanout);
END
$function$;
