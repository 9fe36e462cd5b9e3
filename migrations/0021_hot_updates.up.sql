-- The keys a branch changed after a seq, read from its history: an overlay
-- whose base moved on after the fork finds the base's changed keys here
-- (lb_search_overlay_changed, lb_rec_overlay_page_sql). The key is carried
-- in the index so the range is read without the history's heap. A commit
-- appends its history rows at the right edge of its branch's range.
CREATE INDEX IF NOT EXISTS mat_history_seq_idx ON mat_history (domain_id, branch_id, seq) INCLUDE (key);

-- Every put and patch of a Record changes its seq: with seq indexed on
-- mat_records, no update of a Record could be a HOT update (PostgreSQL
-- allows one only when no indexed column changed), so each wrote an entry
-- into every index of its partition.
DROP INDEX IF EXISTS mat_records_seq_idx;

-- The values of the Record's indexed Attributes, and only those: every
-- per-Attribute index is an expression on ivals, so an update that changes
-- no indexed Attribute (and no searched text) changes no indexed column
-- and is a HOT update. Written by the commit from the branch's recorded
-- indexes (attribute_indexes), backfilled by the store.index job before it
-- builds an index; a Record whose Kind has no index holds NULL.
ALTER TABLE mat_records ADD COLUMN IF NOT EXISTS ivals jsonb;

-- ready: the index is built on ivals and every Record of its Kind on the
-- branch holds the Attribute's value in ivals; reads by Attribute use the
-- ivals form then, the values form (no index) before. The commit reads
-- the recorded indexes of its branch to write ivals.
ALTER TABLE attribute_indexes ADD COLUMN IF NOT EXISTS ready boolean NOT NULL DEFAULT false;
GRANT SELECT ON attribute_indexes TO lorebase_app;

-- The indexes built before: ivals backfilled, each index rebuilt on the
-- new expression under the same name, here rather than by the index job,
-- so no read or commit ever sees an index that its expression no longer
-- matches (a read would fall back to the values form and find no index
-- until a job ran). The rebuild holds a lock that makes writes to the
-- partition wait while it runs.
DO $$
DECLARE
    r record;
    part text;
BEGIN
    FOR r IN SELECT a.* FROM attribute_indexes a ORDER BY a.domain_id, a.branch_id, a.kind, a.attribute LOOP
        UPDATE mat_records m
           SET ivals = CASE WHEN m."values" ? r.attribute
                            THEN coalesce(m.ivals, '{}') || jsonb_build_object(r.attribute, m."values" -> r.attribute)
                            ELSE m.ivals - r.attribute END
         WHERE m.domain_id = r.domain_id AND m.branch_id = r.branch_id AND m.kind = r.kind
           AND (m.ivals ->> r.attribute) IS DISTINCT FROM (m."values" ->> r.attribute);
        SELECT t.relname INTO part
          FROM pg_class i JOIN pg_index x ON x.indexrelid = i.oid JOIN pg_class t ON t.oid = x.indrelid
         WHERE i.relname = r.name AND i.relnamespace = current_schema()::regnamespace;
        IF FOUND THEN
            EXECUTE format('DROP INDEX %I', r.name);
            EXECUTE format('CREATE INDEX %I ON %I ((ivals ->> %L), key) WHERE domain_id = %s AND branch_id = %s AND kind = %L',
                           r.name, part, r.attribute, r.domain_id, r.branch_id, r.kind);
            UPDATE attribute_indexes SET ready = true
             WHERE domain_id = r.domain_id AND branch_id = r.branch_id AND kind = r.kind AND attribute = r.attribute;
        END IF;
    END LOOP;
END
$$;
