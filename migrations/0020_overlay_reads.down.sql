DROP INDEX IF EXISTS mat_records_seq_idx;
