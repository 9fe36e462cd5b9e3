-- Search reports how many matches it ranked and whether the ranking was
-- capped (lb_search returns the columns ranked and truncated), reads
-- partial matches tier by tier (lb_search_partial_sql's p_matched), and
-- ranks from a RUM index where the server has the extension.
DROP FUNCTION IF EXISTS lb_search(text, text, text, integer, bigint, integer, integer, integer);
DROP FUNCTION IF EXISTS lb_search_full_sql(text, text, tsquery, integer, integer);
DROP FUNCTION IF EXISTS lb_search_partial_sql(text, text, tsquery[], tsquery, integer, integer);

-- The RUM index returns a word's matches in rank order (its distance
-- search <=> query is 1 / ts_rank with ts_rank's default weights), so the
-- best candidates are read first instead of the first ones found. Without
-- the rum extension (or the right to create it) search stays on the GIN
-- index mat_records_search_idx and says when its ranking was capped.
DO $$
BEGIN
    IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'rum') THEN
        BEGIN
            CREATE EXTENSION IF NOT EXISTS rum;
        EXCEPTION WHEN insufficient_privilege THEN
            RAISE NOTICE 'rum not created (%): search ranks from the GIN index', SQLERRM;
            RETURN;
        END;
        CREATE INDEX IF NOT EXISTS mat_records_search_rum_idx ON mat_records USING rum (search rum_tsvector_ops);
    END IF;
END
$$;
