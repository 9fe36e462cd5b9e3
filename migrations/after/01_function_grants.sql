-- Only lorebase_app (and the owner) may call Lorebase's functions; every
-- role may call lb_domain, which the policies use.
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'lb\_%' AND p.proname <> 'lb_domain' LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO lorebase_app', f);
    END LOOP;
END
$$;
GRANT EXECUTE ON FUNCTION lb_domain() TO lorebase_app;
