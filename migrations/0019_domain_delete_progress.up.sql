-- A Domain being deleted shows how far its store.domain_delete job got:
-- domains.progress = {phase, tables_done, tables, rows}, the table the job
-- deletes from, how many of the Domain's tables it has emptied, how many
-- there are and the rows it has deleted (over every run of the job). The
-- bootstrap admin reads it in GET /v1/domains?deleting=true.
ALTER TABLE domains ADD COLUMN IF NOT EXISTS progress jsonb NOT NULL DEFAULT '{}';
