DROP TRIGGER IF EXISTS mat_records_lexicon_ins ON mat_records;
DROP TRIGGER IF EXISTS mat_records_lexicon_upd ON mat_records;
DROP TRIGGER IF EXISTS mat_records_lexicon_del ON mat_records;
DROP TABLE IF EXISTS mat_lexicon;
DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'lb\_%' AND p.proname <> 'lb_domain' LOOP
        EXECUTE format('DROP FUNCTION %s', f);
    END LOOP;
END
$$;
