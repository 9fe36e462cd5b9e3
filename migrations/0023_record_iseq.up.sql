-- iseq: the seq of the last write of a Record that changed what a read by
-- index finds it by: its Kind, title, search vector, indexed values
-- (ivals), deletion or creation (created_seq); seq on insert. A write that
-- changes none of them (a change of an Attribute that no index reads)
-- leaves iseq as it was, so it changes no indexed column and stays a HOT
-- update. An overlay whose base moved on after the fork reads the base's
-- keys whose search or indexed values changed since (iseq past the fork,
-- mat_records_iseq_idx) instead of every key the base changed
-- (mat_history_seq_idx): lb_search_overlay, lb_search_overlay_changed and
-- the attribute query of lb_rec_overlay_page_sql. The commit writes it
-- (seq on insert; an update leaves it to the trigger); the trigger sets it
-- for every other writer (copies, schema and index jobs).
ALTER TABLE mat_records ADD COLUMN IF NOT EXISTS iseq bigint;
-- The rows written before: their seq, the latest their search or indexed
-- values can have changed at. The postings trigger has nothing to do for
-- it (no search vector or deletion changes) and is left out of it.
ALTER TABLE mat_records DISABLE TRIGGER mat_records_words_upd;
UPDATE mat_records SET iseq = seq WHERE iseq IS NULL;
ALTER TABLE mat_records ENABLE TRIGGER mat_records_words_upd;
ALTER TABLE mat_records ALTER COLUMN iseq SET NOT NULL;
CREATE INDEX IF NOT EXISTS mat_records_iseq_idx ON mat_records (domain_id, branch_id, iseq);

-- Declared for the triggers; migrations/functions/lb_rec_iseq.sql replaces
-- it after the migrations.
CREATE OR REPLACE FUNCTION lb_rec_iseq() RETURNS trigger LANGUAGE plpgsql
AS $$ BEGIN NEW.iseq := NEW.seq; RETURN NEW; END $$;
-- The conditions are evaluated without calling the function: a row that
-- brings its iseq, or whose update changes none of the columns, costs no
-- call.
CREATE TRIGGER mat_records_iseq_ins BEFORE INSERT ON mat_records
    FOR EACH ROW WHEN (NEW.iseq IS NULL) EXECUTE FUNCTION lb_rec_iseq();
CREATE TRIGGER mat_records_iseq_upd BEFORE UPDATE ON mat_records
    FOR EACH ROW WHEN (NEW.iseq IS NOT DISTINCT FROM OLD.iseq
                       AND (NEW.kind IS DISTINCT FROM OLD.kind OR NEW.title IS DISTINCT FROM OLD.title
                            OR NEW.search IS DISTINCT FROM OLD.search OR NEW.ivals IS DISTINCT FROM OLD.ivals
                            OR NEW.deleted IS DISTINCT FROM OLD.deleted OR NEW.created_seq IS DISTINCT FROM OLD.created_seq))
    EXECUTE FUNCTION lb_rec_iseq();
