-- A schema change records, in its own transaction (as lorebase_app, in
-- its Domain), the per-Attribute indexes it queues the builds of, so the
-- first build's backfill of a Kind writes the values of them all
-- (jobs.RecordIndexes). The domain_isolation policy holds the rows it
-- inserts to its Domain; it cannot update or delete them.
GRANT INSERT ON attribute_indexes TO lorebase_app;
