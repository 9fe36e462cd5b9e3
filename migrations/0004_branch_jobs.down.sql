DROP FUNCTION IF EXISTS lb_record_as_of(int, int, text, bigint, jsonb);
DROP INDEX IF EXISTS idempotency_keys_branch_idx;
DROP INDEX IF EXISTS refs_base_idx;
