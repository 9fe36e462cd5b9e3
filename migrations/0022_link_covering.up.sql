-- The Links' two indexes carry the columns a hop reads (origin, seq,
-- deleted), so the neighborhood's and the Links reads' scans are
-- index-only where the visibility map allows: a Record's incoming Links
-- come from Records all over the table, and without these columns every
-- Link read by to_key cost a heap page of its own (at 10M, about one
-- block read per incoming Link of a cold neighborhood). The primary key
-- keeps its key columns; ON CONFLICT infers it as before. The partitions'
-- reverse indexes take the names PostgreSQL gives them
-- (mat_links_pN_domain_id_branch_id_to_key_relation_from_key_o_idx), as a
-- rebuild from the parent's definition would.
ALTER TABLE mat_links DROP CONSTRAINT mat_links_pkey,
    ADD CONSTRAINT mat_links_pkey PRIMARY KEY (domain_id, branch_id, from_key, relation, to_key) INCLUDE (origin, seq, deleted);
DROP INDEX IF EXISTS mat_links_in_idx;
CREATE INDEX mat_links_in_idx ON mat_links (domain_id, branch_id, to_key, relation, from_key) INCLUDE (origin, seq, deleted);
