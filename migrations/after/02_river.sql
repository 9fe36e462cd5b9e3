-- River's tables, after River's own migrations. lorebase_app inserts jobs
-- in the transactions that need them (and River's insert reads the rows
-- back), so it gets River's tables and sequences; the policy limits it to
-- the jobs of its Domain, which every Lorebase job names in its args.
-- River's own client runs as the owner and sees every job.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'river\_%' LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO lorebase_app', t);
    END LOOP;
    FOR t IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() AND sequencename LIKE 'river\_%' LOOP
        EXECUTE format('GRANT USAGE, SELECT ON SEQUENCE %I TO lorebase_app', t);
    END LOOP;
END
$$;

ALTER TABLE river_job ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS domain_isolation ON river_job;
CREATE POLICY domain_isolation ON river_job
    USING ((args ->> 'domain_id')::int = lb_domain())
    WITH CHECK ((args ->> 'domain_id')::int = lb_domain());
