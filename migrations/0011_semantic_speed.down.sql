DROP INDEX IF EXISTS mat_vectors_branch_idx;
CREATE INDEX mat_vectors_branch_idx ON mat_vectors (domain_id, branch_id);
