-- lb_search_triples reads the meeting of two plateaus from its rows
-- (p_pair), and the plateau read whole from its rows becomes one case of
-- lb_search_triple_rows (one plateau or the meeting of two, with a cap on
-- the rows read): the nine-parameter lb_search_triples and the plateau
-- functions go here (a call of the old lb_search_triples would be
-- ambiguous beside the new one); migrations/functions/ creates the new
-- forms.
DROP FUNCTION IF EXISTS lb_search_triples(integer, integer, text[], integer, integer, integer, integer, integer, integer);
DROP FUNCTION IF EXISTS lb_search_triple_plateau(integer, integer, text[], integer, real);
DROP FUNCTION IF EXISTS lb_search_triple_plateau_sql(integer, integer, text[], integer, real);
