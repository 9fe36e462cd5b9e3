-- The word lexicon is kept by lb_search_words_apply from the postings it
-- inserts and deletes; the lexicon's own triggers, which split every
-- changed Record's search vector a second time, go.
DROP TRIGGER IF EXISTS mat_records_lexicon_ins ON mat_records;
DROP TRIGGER IF EXISTS mat_records_lexicon_upd ON mat_records;
DROP TRIGGER IF EXISTS mat_records_lexicon_del ON mat_records;
DROP FUNCTION IF EXISTS lb_lexicon_apply();
