-- lb_search_triples takes p_rows (a plateau read whole is read from its
-- rows, checked for the other two words, when p_rows times its size is at
-- most the Records holding those words: lb_search_triple_plateau) and reads
-- plateaus of up to 4,096 postings whole: the new parameter has a default,
-- so the eight-parameter form is dropped here rather than left beside it (a
-- call would be ambiguous). migrations/functions/ creates the new form.
DROP FUNCTION IF EXISTS lb_search_triples(integer, integer, text[], integer, integer, integer, integer, integer);
