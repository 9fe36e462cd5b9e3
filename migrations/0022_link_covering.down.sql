ALTER TABLE mat_links DROP CONSTRAINT mat_links_pkey,
    ADD CONSTRAINT mat_links_pkey PRIMARY KEY (domain_id, branch_id, from_key, relation, to_key);
DROP INDEX IF EXISTS mat_links_in_idx;
CREATE INDEX mat_links_in_idx ON mat_links (domain_id, branch_id, to_key, relation, from_key);
