-- The functions keep the signatures of migrations/functions/; the index
-- and its two functions go.
DROP INDEX IF EXISTS mat_records_tokens_idx;
DROP FUNCTION IF EXISTS lb_search_tokens(integer, integer, tsvector);
DROP FUNCTION IF EXISTS lb_search_token(integer, integer, text, real);
