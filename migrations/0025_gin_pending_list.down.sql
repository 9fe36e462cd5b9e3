DO $$
DECLARE
    ix regclass;
BEGIN
    FOR ix IN
        SELECT h.inhrelid::regclass FROM pg_inherits h WHERE h.inhparent = 'mat_records_search_idx'::regclass
        UNION ALL
        SELECT 'mat_lexicon_trgm_idx'::regclass
    LOOP
        EXECUTE format('ALTER INDEX %s RESET (gin_pending_list_limit)', ix);
    END LOOP;
END
$$;
