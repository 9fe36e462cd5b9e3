-- A word's score plateaus as lb_search_pairs reads them (their scores,
-- their sizes as far as counted, how many of the best fit in the plateaus
-- read whole): lb_search_word_plateaus reads them, lb_search_pairs_of
-- pairs two words' (reading those not read yet) and hands them back with
-- what it read and counted, so a caller
-- pairing one word with several (lb_search_tier_pairs, the misspelled
-- word's pairs of common words in lb_search_run) reads each word's once.
CREATE TYPE lb_search_word_plateaus AS (word text, scores real[], sizes integer[], top integer);
