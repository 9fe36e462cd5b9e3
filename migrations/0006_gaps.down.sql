DROP FUNCTION IF EXISTS lb_next_revision_number();

DO $$
DECLARE
    s text;
BEGIN
    FOR s IN SELECT c.relname FROM pg_class c
              WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'S'
                AND c.relname ~ '^revision_number_[0-9]+$' LOOP
        EXECUTE format('DROP SEQUENCE %I', s);
    END LOOP;
END
$$;

ALTER TABLE revisions DROP COLUMN IF EXISTS number;
