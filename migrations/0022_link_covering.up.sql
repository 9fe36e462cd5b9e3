-- The Links' two indexes carry the columns a hop reads (origin, seq,
-- deleted), so the neighborhood's and the Links reads' scans are
-- index-only where the visibility map allows: a Record's incoming Links
-- come from Records all over the table, and without these columns every
-- Link read by to_key cost a heap page of its own (at 10M, about one
-- block read per incoming Link of a cold neighborhood). The primary key
-- keeps its key columns; ON CONFLICT infers it as before. The partitions'
-- indexes keep their names.
ALTER TABLE mat_links DROP CONSTRAINT mat_links_pkey,
    ADD CONSTRAINT mat_links_pkey PRIMARY KEY (domain_id, branch_id, from_key, relation, to_key) INCLUDE (origin, seq, deleted);
DROP INDEX IF EXISTS mat_links_in_idx;
CREATE INDEX mat_links_in_idx ON mat_links (domain_id, branch_id, to_key, relation, from_key) INCLUDE (origin, seq, deleted);
DO $$
DECLARE
    r record;
BEGIN
    FOR r IN SELECT c.relname AS idx, t.relname AS tbl
               FROM pg_inherits i
               JOIN pg_class c ON c.oid = i.inhrelid
               JOIN pg_index x ON x.indexrelid = c.oid
               JOIN pg_class t ON t.oid = x.indrelid
              WHERE i.inhparent = 'mat_links_in_idx'::regclass LOOP
        EXECUTE format('ALTER INDEX %I RENAME TO %I', r.idx, r.tbl || '_domain_id_branch_id_to_key_relation_from_key_idx');
    END LOOP;
END
$$;
