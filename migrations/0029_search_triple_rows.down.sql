-- The ten-parameter lb_search_triples and the rows of one plateau or of the
-- meeting of two go; the forms of the version before come back from its
-- migrations/functions/.
DROP FUNCTION IF EXISTS lb_search_triples(integer, integer, text[], integer, integer, integer, integer, integer, integer, integer);
DROP FUNCTION IF EXISTS lb_search_triple_rows(integer, integer, text[], integer[], real[], integer);
DROP FUNCTION IF EXISTS lb_search_triple_rows_sql(integer, integer, text[], integer[], real[], integer);
