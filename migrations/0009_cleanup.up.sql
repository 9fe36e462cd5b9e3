-- Functions nothing calls: no Go code, no other function and no policy
-- names them. Their files are gone from migrations/functions/ (the loader
-- forgets their checksums); this drops them from the database.
DROP FUNCTION IF EXISTS lb_chain(text, bigint);
DROP FUNCTION IF EXISTS lb_require_present(text, text, bigint);
DROP FUNCTION IF EXISTS lb_link_cands_sql(integer, integer[], bigint[], text, text, text, text);
