-- lb_search_full_keys and lb_search_full_keys_sql take the query the GIN
-- index reads apart from the one every row must match (p_index, p_cap):
-- the new parameters have defaults, so the five-parameter forms are
-- dropped here rather than left beside them (a call would be ambiguous).
-- migrations/functions/ creates the new forms.
DROP FUNCTION IF EXISTS lb_search_full_keys(integer, integer, tsquery, tsquery, integer);
DROP FUNCTION IF EXISTS lb_search_full_keys_sql(integer, integer, tsquery, tsquery, integer);
