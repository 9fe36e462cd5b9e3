CREATE OR REPLACE FUNCTION lb_lineage(p_branch text, p_key text)
 RETURNS TABLE(key text, kind text, versions integer, created_revision text, created_author text, created_at timestamp with time zone, created_provenance jsonb, lineage jsonb)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE lb_lineage_sql(p_branch, p_key);
END
$function$;
