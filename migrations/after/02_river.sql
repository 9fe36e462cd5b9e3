-- River's tables, after River's own migrations. lorebase_app inserts jobs
-- in the transactions that need them (River's insert reads the rows back,
-- and a branch shows its job's progress), so it gets SELECT and INSERT on
-- river_job and its sequence, and nothing on River's other tables; the
-- policy limits it to the jobs of its Domain, which every Lorebase job
-- names in its args. River's own client runs as the owner and sees every
-- job.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'river\_%' LOOP
        EXECUTE format('REVOKE ALL ON %I FROM lorebase_app', t);
    END LOOP;
    FOR t IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() AND sequencename LIKE 'river\_%' LOOP
        EXECUTE format('REVOKE ALL ON SEQUENCE %I FROM lorebase_app', t);
    END LOOP;
END
$$;
GRANT SELECT, INSERT ON river_job TO lorebase_app;
-- River's insert ends in ON CONFLICT ... DO UPDATE SET kind = river_job.kind
-- (a no-op that returns the existing row of a unique job): that column
-- only.
GRANT UPDATE (kind) ON river_job TO lorebase_app;
GRANT USAGE ON SEQUENCE river_job_id_seq TO lorebase_app;

ALTER TABLE river_job ENABLE ROW LEVEL SECURITY;
DROP POLICY IF EXISTS domain_isolation ON river_job;
CREATE POLICY domain_isolation ON river_job
    USING ((args ->> 'domain_id')::int = lb_domain())
    WITH CHECK ((args ->> 'domain_id')::int = lb_domain());
