CREATE OR REPLACE FUNCTION lb_history(p_branch text, p_key text, p_before bigint, p_limit integer)
 RETURNS TABLE(revision text, seq bigint, op text, "values" jsonb, author text, message text, at timestamp with time zone, provenance jsonb)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
AS $function$
DECLARE
    s text := lb_history_sql(p_branch, p_key, p_before, p_limit);
    c record;
    ok boolean;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    SELECT bool_or(x.ok) INTO ok FROM generate_series(1, cardinality(c.bs)) i
     CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM mat_history h
                 WHERE h.domain_id = c.d AND h.branch_id = c.bs[i] AND h.key = p_key AND h.seq <= c.cs[i]) AS ok) x;
    IF NOT coalesce(ok, false) THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY EXECUTE s;
END
$function$;
