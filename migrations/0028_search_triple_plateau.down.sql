-- The nine-parameter lb_search_triples and the plateau read from its rows
-- go; the forms of the version before come back from its
-- migrations/functions/.
DROP FUNCTION IF EXISTS lb_search_triples(integer, integer, text[], integer, integer, integer, integer, integer, integer);
DROP FUNCTION IF EXISTS lb_search_triple_plateau(integer, integer, text[], integer, real);
DROP FUNCTION IF EXISTS lb_search_triple_plateau_sql(integer, integer, text[], integer, real);
