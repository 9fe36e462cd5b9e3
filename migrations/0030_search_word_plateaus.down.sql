-- The functions taking a word's plateaus go with their type; the forms of
-- the version before come back from its migrations/functions/.
DROP FUNCTION IF EXISTS lb_search_pairs_of(integer, integer, lb_search_word_plateaus, lb_search_word_plateaus, integer, integer, integer, integer, integer);
DROP FUNCTION IF EXISTS lb_search_word_plateaus(integer, integer, text, integer, integer, integer);
DROP TYPE IF EXISTS lb_search_word_plateaus;
