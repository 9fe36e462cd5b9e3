DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'lb\_%' LOOP
        EXECUTE format('DROP FUNCTION %s CASCADE', f);
    END LOOP;
END
$$;
DROP TABLE IF EXISTS mat_lexicon, mat_link_history, mat_history, mat_links, mat_records, idempotency_keys,
    objects, revisions, schemas, refs, tokens, domains, lorebase_functions CASCADE;
DROP SEQUENCE IF EXISTS revision_seq;
