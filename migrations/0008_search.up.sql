-- Search reports how many matches it ranked and whether the ranking was
-- capped (lb_search returns the columns ranked and truncated), answers a
-- one-word query from the word's postings best first (mat_search_words),
-- and reads partial matches tier by tier (lb_search_partial_sql's
-- p_matched).
DROP FUNCTION IF EXISTS lb_search(text, text, text, integer, bigint, integer, integer, integer);
DROP FUNCTION IF EXISTS lb_search_full_sql(text, text, tsquery, integer, integer);
DROP FUNCTION IF EXISTS lb_search_partial_sql(text, text, tsquery[], tsquery, integer, integer);

-- No RUM index is created here: where one exists on mat_records (search
-- rum_tsvector_ops) named mat_records_search_rum_idx, partial matches are
-- read from it in rank order, but the planner also prefers it to the GIN
-- index for the other searches' bitmap scans, which it makes slower
-- (docs/perf/search-candidates.md).

-- Impact-ordered postings: one row per present Record of a branch and
-- word of its search vector, with the Record's rank for that word alone
-- (ts_rank of the one-lexeme query, what a one-word search ranks by), so a
-- one-word search reads its best Records first, however many match. Kept
-- by statement-level triggers on mat_records (lb_search_words_apply), like
-- the lexicon.
CREATE TABLE mat_search_words (
    domain_id int NOT NULL,
    branch_id int NOT NULL,
    key       text COLLATE "C" NOT NULL,
    word      text COLLATE "C" NOT NULL,
    score     real NOT NULL,
    PRIMARY KEY (domain_id, branch_id, key, word)
) PARTITION BY HASH (domain_id);
DO $$
BEGIN
    FOR i IN 0..7 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF mat_search_words FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
                       'mat_search_words_p' || i, i);
    END LOOP;
END
$$;
CREATE INDEX mat_search_words_rank_idx ON mat_search_words (domain_id, branch_id, word, score DESC, key);
ALTER TABLE mat_search_words ENABLE ROW LEVEL SECURITY;
CREATE POLICY domain_isolation ON mat_search_words USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain());
GRANT SELECT ON mat_search_words TO lorebase_app;

-- Declared for the triggers; migrations/functions/lb_search_words_apply.sql
-- replaces it after the migrations (the backfill below runs the same SQL).
CREATE OR REPLACE FUNCTION lb_search_words_apply() RETURNS trigger LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'lb_search_words_apply is not loaded: run keeper migrate'; END $$;
CREATE TRIGGER mat_records_words_ins AFTER INSERT ON mat_records
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_search_words_apply();
CREATE TRIGGER mat_records_words_upd AFTER UPDATE ON mat_records
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_search_words_apply();
CREATE TRIGGER mat_records_words_del AFTER DELETE ON mat_records
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_search_words_apply();

INSERT INTO mat_search_words (domain_id, branch_id, key, word, score)
SELECT m.domain_id, m.branch_id, m.key, w,
       ts_rank(m.search, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery)
  FROM mat_records m, unnest(tsvector_to_array(m.search)) w
 WHERE NOT m.deleted;
ANALYZE mat_search_words;
