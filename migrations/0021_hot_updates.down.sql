-- The per-Attribute indexes back on values, under the same names.
DO $$
DECLARE
    r record;
    part text;
BEGIN
    FOR r IN SELECT a.* FROM attribute_indexes a ORDER BY a.domain_id, a.branch_id, a.kind, a.attribute LOOP
        SELECT t.relname INTO part
          FROM pg_class i JOIN pg_index x ON x.indexrelid = i.oid JOIN pg_class t ON t.oid = x.indrelid
         WHERE i.relname = r.name AND i.relnamespace = current_schema()::regnamespace;
        IF FOUND THEN
            EXECUTE format('DROP INDEX %I', r.name);
            EXECUTE format('CREATE INDEX %I ON %I (("values" ->> %L), key) WHERE domain_id = %s AND branch_id = %s AND kind = %L',
                           r.name, part, r.attribute, r.domain_id, r.branch_id, r.kind);
        END IF;
    END LOOP;
END
$$;
REVOKE SELECT ON attribute_indexes FROM lorebase_app;
ALTER TABLE attribute_indexes DROP COLUMN IF EXISTS ready;
ALTER TABLE mat_records DROP COLUMN IF EXISTS ivals;
CREATE INDEX IF NOT EXISTS mat_records_seq_idx ON mat_records (domain_id, branch_id, seq);
DROP INDEX IF EXISTS mat_history_seq_idx;
