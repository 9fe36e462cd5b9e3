-- A schema change records, in its own transaction (as lorebase_app, in
-- its Domain), the per-Attribute indexes it queues the builds of, so the
-- first build's backfill of a Kind writes the values of them all
-- (jobs.RecordIndexes). The domain_isolation policy holds the rows it
-- inserts to its Domain; it cannot update or delete them. It may not
-- name them either: the jobs that drop a branch's or a Domain's indexes
-- drop them by the recorded name, so a name is always the one
-- lb_index_name computes from the row (jobs.IndexName), set by the
-- trigger below, and lorebase_app may insert every column but the name.
CREATE OR REPLACE FUNCTION lb_index_name(domain_id int, branch_id int, kind text, attribute text) RETURNS text
    LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
AS $$ SELECT 'unloaded' $$;
-- Declared for the trigger; migrations/functions/lb_attribute_index_name.sql
-- replaces it after the migrations.
CREATE OR REPLACE FUNCTION lb_attribute_index_name() RETURNS trigger LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'lb_attribute_index_name is not loaded: run keeper migrate'; END $$;
CREATE TRIGGER attribute_indexes_name BEFORE INSERT ON attribute_indexes
    FOR EACH ROW WHEN (NEW.name IS NULL) EXECUTE FUNCTION lb_attribute_index_name();
GRANT INSERT (domain_id, branch_id, kind, attribute) ON attribute_indexes TO lorebase_app;
