-- The branch delete job walks a deleted branch's vectors in keyset batches
-- along (domain_id, branch_id, key, spec, seq), like its other tables.
DROP INDEX IF EXISTS mat_vectors_branch_idx;
CREATE INDEX mat_vectors_branch_idx ON mat_vectors (domain_id, branch_id, key, spec, seq);
