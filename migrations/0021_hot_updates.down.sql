CREATE INDEX IF NOT EXISTS mat_records_seq_idx ON mat_records (domain_id, branch_id, seq);
DROP INDEX IF EXISTS mat_history_seq_idx;
