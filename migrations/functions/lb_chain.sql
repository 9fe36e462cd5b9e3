-- lb_chain lists the levels of a branch (at the head, or as of seq p_at).
CREATE OR REPLACE FUNCTION lb_chain(p_branch text, p_at bigint DEFAULT NULL::bigint)
 RETURNS TABLE(level integer, branch_id integer, cut bigint)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    RETURN QUERY SELECT i, c.bs[i], c.cs[i] FROM generate_series(1, cardinality(c.bs)) i;
END
$function$;
