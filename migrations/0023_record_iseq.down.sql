DROP TRIGGER IF EXISTS mat_records_iseq_upd ON mat_records;
DROP TRIGGER IF EXISTS mat_records_iseq_ins ON mat_records;
DROP FUNCTION IF EXISTS lb_rec_iseq();
DROP INDEX IF EXISTS mat_records_iseq_idx;
ALTER TABLE mat_records DROP COLUMN IF EXISTS iseq;
