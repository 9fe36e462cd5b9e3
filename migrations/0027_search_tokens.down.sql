-- The index and the functions reading it go: the meeting of three tokens
-- and the plateau read whole with the other words' plateaus (the functions
-- of the version before come back from its migrations/functions/), then
-- the two functions the index is built with.
DROP FUNCTION IF EXISTS lb_search_triple_meet(integer, integer, text, real, text, real, text, real, integer);
DROP FUNCTION IF EXISTS lb_search_triple_top(integer, integer, text[], integer, real, real[], real[]);
DROP FUNCTION IF EXISTS lb_search_triple_top_sql(integer, integer, text[], integer, real, real[], real[]);
DROP INDEX IF EXISTS mat_records_tokens_idx;
DROP FUNCTION IF EXISTS lb_search_tokens(integer, integer, tsvector);
DROP FUNCTION IF EXISTS lb_search_token(integer, integer, text, real);
