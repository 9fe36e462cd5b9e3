DROP TRIGGER IF EXISTS mat_records_words_ins ON mat_records;
DROP TRIGGER IF EXISTS mat_records_words_upd ON mat_records;
DROP TRIGGER IF EXISTS mat_records_words_del ON mat_records;
DROP FUNCTION IF EXISTS lb_search_words_apply();
DROP TABLE IF EXISTS mat_search_words;
DROP INDEX IF EXISTS mat_records_search_rum_idx;
-- The rum extension stays: other objects of the server may use it.
-- lb_search keeps the signature of migrations/functions/lb_search.sql.
