-- The rows a branch changed after a seq, read in one index range: an
-- overlay whose base moved on after the fork looks up the base's changed
-- keys here (the rows whose seq is past the fork, tombstones included)
-- instead of unpacking the base's Revisions' change lists and reading each
-- key's row by its primary key (lb_search_overlay, lb_rec_overlay_page_sql).
CREATE INDEX IF NOT EXISTS mat_records_seq_idx ON mat_records (domain_id, branch_id, seq);
