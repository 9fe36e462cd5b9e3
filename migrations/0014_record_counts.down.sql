DROP FUNCTION IF EXISTS lb_count(text, text, bigint);
DROP FUNCTION IF EXISTS lb_counts_at(integer, integer, bigint, text, integer);
DROP TABLE IF EXISTS mat_count_changes;
DROP TABLE IF EXISTS mat_counts;
ALTER TABLE refs DROP COLUMN IF EXISTS counts_from;
