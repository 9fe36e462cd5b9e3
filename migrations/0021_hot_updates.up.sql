-- The keys a branch changed after a seq, read from its history: an overlay
-- whose base moved on after the fork finds the base's changed keys here
-- (lb_search_overlay_changed, lb_rec_overlay_page_sql). The key is carried
-- in the index so the range is read without the history's heap. A commit
-- appends its history rows at the right edge of its branch's range.
CREATE INDEX IF NOT EXISTS mat_history_seq_idx ON mat_history (domain_id, branch_id, seq) INCLUDE (key);

-- Every put and patch of a Record changes its seq: with seq indexed on
-- mat_records, no update of a Record could be a HOT update (PostgreSQL
-- allows one only when no indexed column changed), so each wrote an entry
-- into every index of its partition.
DROP INDEX IF EXISTS mat_records_seq_idx;
