DROP INDEX IF EXISTS mat_records_search_rum_idx;
-- The rum extension stays: other objects of the server may use it.
-- lb_search keeps the signature of migrations/functions/lb_search.sql.
