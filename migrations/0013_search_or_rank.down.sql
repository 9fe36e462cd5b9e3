-- lb_search_full_sql keeps the signature of
-- migrations/functions/lb_search_full_sql.sql.
SELECT 1;
