CREATE OR REPLACE FUNCTION lb_query_by_attribute(p_branch text, p_kind text, p_attribute text, p_value text, p_after text, p_limit integer)
 RETURNS TABLE(key text, kind text, title text, "values" jsonb, revision text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET max_parallel_workers_per_gather TO '0'
AS $function$
BEGIN
    RETURN QUERY EXECUTE lb_query_by_attribute_sql(p_branch, p_kind, p_attribute, p_value, p_after, p_limit);
END
$function$;
