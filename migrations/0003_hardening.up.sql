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

-- Every per-Attribute index (built by the store.index job) is recorded
-- here, owner only: the branch delete job drops the recorded ones with
-- their branch, and the store.index_drop job drops the index of an
-- Attribute that stopped being indexed (or whose Kind went).
CREATE TABLE attribute_indexes (
    domain_id  int NOT NULL,
    branch_id  int NOT NULL,
    kind       text COLLATE "C" NOT NULL,
    attribute  text COLLATE "C" NOT NULL,
    name       text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (domain_id, branch_id, kind, attribute)
);
ALTER TABLE attribute_indexes ENABLE ROW LEVEL SECURITY;
CREATE POLICY domain_isolation ON attribute_indexes USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain());

-- The indexes built before this table existed.
INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute, name)
SELECT s.domain_id, s.branch_id, k.key, a ->> 'name', x.name
  FROM schemas s
 CROSS JOIN LATERAL jsonb_each(s.compiled -> 'kinds') k
 CROSS JOIN LATERAL jsonb_array_elements(k.value -> 'attributes') a
 CROSS JOIN LATERAL (SELECT 'mat_records_attr_' || left(encode(sha256(convert_to(
          s.domain_id || ':' || s.branch_id || ':' || k.key || ':' || (a ->> 'name'), 'UTF8')), 'hex'), 24) AS name) x
 WHERE EXISTS (SELECT 1 FROM pg_class c WHERE c.relname = x.name AND c.relnamespace = current_schema()::regnamespace)
ON CONFLICT DO NOTHING;
