-- Hardening: the token lifecycle (expiry, revocation, last use), idempotency
-- keys scoped by token, and history that the application role may append to
-- but never rewrite.

-- Tokens: an optional expiry, a revocation time and the last time one was
-- used (updated by Keeper at most once a minute per token).
ALTER TABLE tokens
    ADD COLUMN expires_at   timestamptz,
    ADD COLUMN revoked_at   timestamptz,
    ADD COLUMN last_used_at timestamptz;

-- An admin token revokes tokens of its Domain through its request
-- connection; nothing else about a token may change.
GRANT UPDATE (revoked_at) ON tokens TO lorebase_app;

-- Idempotency keys belong to the token that sent them (scope: the token's
-- id, or "admin" for the bootstrap admin): one writer can neither take nor
-- probe another's key. They expire after write.idempotency_ttl.
ALTER TABLE idempotency_keys ADD COLUMN scope text NOT NULL DEFAULT '';
ALTER TABLE idempotency_keys DROP CONSTRAINT idempotency_keys_pkey;
ALTER TABLE idempotency_keys ADD PRIMARY KEY (domain_id, scope, key);
CREATE INDEX idempotency_keys_created_idx ON idempotency_keys (created_at);

-- History is append-only for the application role: Revisions, objects and
-- the history of Records and Links are written once and never changed by a
-- request. Only the owner (the branch delete job) removes them, with their
-- branch.
DO $$
DECLARE
    t text;
BEGIN
    FOR t IN SELECT c.relname FROM pg_class c
              WHERE c.relnamespace = current_schema()::regnamespace
                AND (c.relname IN ('revisions', 'objects', 'mat_history', 'mat_link_history')
                     OR c.relname ~ '^(objects|mat_history|mat_link_history)_p[0-9]+$') LOOP
        EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON %I FROM lorebase_app', t);
    END LOOP;
END
$$;

-- The branch delete job walks a branch's keys along this index.
DROP INDEX idempotency_keys_branch_idx;
CREATE INDEX idempotency_keys_branch_idx ON idempotency_keys (domain_id, branch_id, scope, key);

-- The version of the formula that computed a Revision's hash: 1 covered
-- parents, objects, author, message and provenance; 2 covers everything a
-- Revision says (id, sequence number, branch, parents with their hashes,
-- author, message, time, provenance and the changes with their own
-- provenance). keeper verify checks each Revision by its version.
ALTER TABLE revisions ADD COLUMN hash_version smallint NOT NULL DEFAULT 1;

-- No SECURITY DEFINER function takes a Domain as a parameter: these three
-- now read it from lb_domain() (migrations/functions/); their old
-- signatures go.
DROP FUNCTION IF EXISTS lb_require_record(integer, integer, text, bigint);
DROP FUNCTION IF EXISTS lb_search_terms(integer, integer, text);
DROP FUNCTION IF EXISTS lb_search_terms_levels(integer, integer[], text);
