CREATE OR REPLACE FUNCTION lb_get_sql(p_branch text, p_key text, p_at bigint DEFAULT NULL::bigint)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF c.single THEN
        RETURN lb_get_sql_single(p_branch, p_key, NULL);
    END IF;
    RETURN lb_levels_sql('get', c.d, c.bs, lb_level_cuts(c.cs, c.hs), p_key);
END
$function$;
