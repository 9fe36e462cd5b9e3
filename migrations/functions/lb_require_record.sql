-- lb_require_record raises 'record not found' unless the Record exists on
-- the branch (at the head, or as of seq p_at).
CREATE OR REPLACE FUNCTION lb_require_record(d integer, b integer, p_key text, p_at bigint)
 RETURNS void
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    ok boolean;
BEGIN
    IF p_at IS NULL THEN
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM mat_records WHERE domain_id = %L AND branch_id = %L AND key = %L AND NOT deleted)',
                       d, b, p_key) INTO ok;
    ELSE
        EXECUTE format($q$SELECT coalesce((SELECT op <> 'delete' FROM mat_history
            WHERE domain_id = %L AND branch_id = %L AND key = %L AND seq <= %L ORDER BY seq DESC LIMIT 1), false)$q$,
                       d, b, p_key, p_at) INTO ok;
    END IF;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
END
$function$;
