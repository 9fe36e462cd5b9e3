-- lb_require_present raises 'record not found' unless the Record is
-- present on the branch (at the head or as of seq p_at).
CREATE OR REPLACE FUNCTION lb_require_present(p_branch text, p_key text, p_at bigint)
 RETURNS void
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    c record;
    ok boolean;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF c.single THEN
        PERFORM lb_require_record(c.d, c.b, p_key, NULL);
        RETURN;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s e WHERE e.present)', lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, format('%L', p_key)))
       INTO ok;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
END
$function$;
