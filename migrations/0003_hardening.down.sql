DROP TABLE IF EXISTS attribute_indexes;
ALTER TABLE revisions DROP COLUMN IF EXISTS hash_version;
GRANT UPDATE, DELETE ON revisions, objects, mat_history, mat_link_history TO lorebase_app;
DROP INDEX IF EXISTS idempotency_keys_branch_idx;
DROP INDEX IF EXISTS idempotency_keys_created_idx;
DELETE FROM idempotency_keys a USING idempotency_keys b
 WHERE a.domain_id = b.domain_id AND a.key = b.key AND a.scope > b.scope;
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (domain_id, key);
ALTER TABLE idempotency_keys DROP COLUMN scope;
CREATE INDEX idempotency_keys_branch_idx ON idempotency_keys (domain_id, branch_id);
REVOKE UPDATE (revoked_at) ON tokens FROM lorebase_app;
ALTER TABLE tokens DROP COLUMN expires_at, DROP COLUMN revoked_at, DROP COLUMN last_used_at;
-- The functions that now read the Domain from lb_domain() stay as
-- migrations/functions/ defines them.
