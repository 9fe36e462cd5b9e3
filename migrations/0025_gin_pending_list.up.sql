-- The GIN indexes every search reads (the search vectors' on each
-- partition of mat_records, the lexicon's trigrams) keep a pending list of
-- at most 256 kB instead of the server's 4 MB (gin_pending_list_limit).
-- New entries wait in that list, unsorted, until it is full or a vacuum
-- merges it, and every scan of the index reads the whole list: after a
-- copy branch's rows or a run of commits the list held thousands of
-- entries, and partial matching, entity resolution and an overlay's
-- typo-tolerant search read it on every call (docs/performance.md, "The
-- GIN indexes' pending lists"). A smaller list keeps the inserts batched.
DO $$
DECLARE
    ix regclass;
BEGIN
    FOR ix IN
        SELECT h.inhrelid::regclass FROM pg_inherits h WHERE h.inhparent = 'mat_records_search_idx'::regclass
        UNION ALL
        SELECT 'mat_lexicon_trgm_idx'::regclass
    LOOP
        EXECUTE format('ALTER INDEX %s SET (gin_pending_list_limit = 256)', ix);
    END LOOP;
END
$$;
