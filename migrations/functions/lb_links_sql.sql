CREATE OR REPLACE FUNCTION lb_links_sql(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL::bigint)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_direction IS NULL OR p_direction NOT IN ('out', 'in', 'both') THEN
        RAISE EXCEPTION 'direction must be out, in or both' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_links_sql_single(p_branch, p_key, p_direction, p_relation, NULL);
    END IF;
    RETURN lb_levels_sql('links', c.d, c.bs, lb_level_cuts(c.cs, c.hs), p_key, p_direction, p_relation);
END
$function$;
