-- Lorebase baseline schema: Domains, tokens, branches (refs), compiled
-- schemas, Revisions, content-addressed objects, idempotency keys, the
-- materialized head (mat_records, mat_links, mat_history, mat_link_history)
-- and the search lexicon (mat_lexicon).
--
-- Numbered migrations hold tables, partitions, policies, roles, grants and
-- function signatures. Function bodies live in migrations/functions/, one
-- file per function, applied after the numbered migrations (store.Migrate);
-- a function a table needs at creation (a policy's lb_domain, a trigger's
-- function) is declared here with a body that the function files replace.
--
-- Every table holds the Domain and is protected by the row-level security
-- policy domain_isolation: a role subject to it (lorebase_app) sees only the
-- rows of the Domain named by the transaction setting lorebase.domain_id.

CREATE EXTENSION IF NOT EXISTS pg_trgm;
CREATE EXTENSION IF NOT EXISTS btree_gin;

-- The application role. Roles are cluster-wide, so several databases (and
-- concurrent migrations of test databases) may race to create it.
DO $$
BEGIN
    IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'lorebase_app') THEN
        CREATE ROLE lorebase_app NOLOGIN;
    END IF;
EXCEPTION WHEN duplicate_object OR unique_violation THEN
    NULL;
END
$$;

DO $$
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        EXECUTE format('GRANT lorebase_app TO %I', current_user);
    END IF;
EXCEPTION WHEN insufficient_privilege OR duplicate_object THEN
    NULL;
END
$$;

-- Declared for the policies below; migrations/functions/lb_domain.sql holds
-- its body. Until the function files are applied it names no Domain, so
-- every policy hides every row.
CREATE FUNCTION lb_domain() RETURNS int
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULL::int $$;

-- Declared for the mat_records triggers; migrations/functions/lb_lexicon_apply.sql
-- holds its body.
CREATE FUNCTION lb_lexicon_apply() RETURNS trigger
    LANGUAGE plpgsql
AS $$ BEGIN RAISE EXCEPTION 'lb_lexicon_apply is not loaded: run keeper migrate'; END $$;

-- The function files applied, with the sha256 of each file's text: an
-- unchanged file is skipped, a changed one applied again.
CREATE TABLE lorebase_functions (
    name       text PRIMARY KEY,
    checksum   bytea NOT NULL,
    applied_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE domains (
    id         int GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE tokens (
    domain_id  int NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    id         text NOT NULL,
    name       text NOT NULL,
    token_hash bytea NOT NULL UNIQUE,
    role       text NOT NULL CHECK (role IN ('reader', 'writer', 'admin')),
    branches   text[] NOT NULL DEFAULT ARRAY['*'],
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (domain_id, id),
    UNIQUE (domain_id, name)
);

-- refs are the branches of a Domain. id is a small integer used inside the
-- mat_* rows and indexes; names are what the API shows.
CREATE TABLE refs (
    domain_id     int NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    id            int GENERATED ALWAYS AS IDENTITY,
    name          text NOT NULL,
    mode          text NOT NULL DEFAULT 'copy' CHECK (mode IN ('copy', 'overlay')),
    state         text NOT NULL DEFAULT 'ready' CHECK (state IN ('ready', 'copying', 'deleting')),
    base_id       int,
    fork_seq      bigint,
    fork_revision text,
    head          text,
    head_seq      bigint NOT NULL DEFAULT 0,
    progress      jsonb NOT NULL DEFAULT '{}',
    created_at    timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (domain_id, id),
    UNIQUE (domain_id, name)
);
-- Dependents of a branch (branches forked from it) are looked up when it is
-- deleted; a Domain may hold thousands of branches.
CREATE INDEX refs_base_idx ON refs (domain_id, base_id) WHERE base_id IS NOT NULL;

-- The compiled schema of each branch. A schema change is a Revision; seq is
-- the Revision that set it.
CREATE TABLE schemas (
    domain_id int NOT NULL,
    branch_id int NOT NULL,
    seq       bigint NOT NULL DEFAULT 0,
    document  jsonb NOT NULL,
    compiled  jsonb NOT NULL,
    PRIMARY KEY (domain_id, branch_id),
    FOREIGN KEY (domain_id, branch_id) REFERENCES refs (domain_id, id) ON DELETE CASCADE
);

-- Revision sequence numbers come from one counter: they increase within every
-- Domain and every branch (commits on a branch are serialized by its ref
-- lock) without serializing the commits of different branches.
CREATE SEQUENCE revision_seq AS bigint;

CREATE TABLE revisions (
    domain_id  int NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    id         text NOT NULL,
    seq        bigint NOT NULL,
    branch_id  int NOT NULL,
    parents    text[] NOT NULL DEFAULT '{}',
    author     text NOT NULL,
    message    text NOT NULL,
    at         timestamptz NOT NULL DEFAULT now(),
    hash       bytea NOT NULL,
    provenance jsonb,
    changes    jsonb NOT NULL,
    PRIMARY KEY (domain_id, id),
    UNIQUE (domain_id, seq)
);
CREATE INDEX revisions_log_idx ON revisions (domain_id, branch_id, seq DESC);

-- Content-addressed objects: sha256 of the canonical JSON body.
CREATE TABLE objects (
    domain_id int NOT NULL,
    hash      bytea NOT NULL,
    body      jsonb NOT NULL,
    PRIMARY KEY (domain_id, hash)
) PARTITION BY HASH (domain_id);

CREATE TABLE idempotency_keys (
    domain_id    int NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    key          text NOT NULL,
    branch_id    int NOT NULL,
    request_hash bytea NOT NULL,
    status       int NOT NULL,
    response     jsonb NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (domain_id, key)
);
-- Idempotency keys are removed with their branch.
CREATE INDEX idempotency_keys_branch_idx ON idempotency_keys (domain_id, branch_id);

-- The materialized head of every branch.
CREATE TABLE mat_records (
    domain_id   int NOT NULL,
    branch_id   int NOT NULL,
    key         text COLLATE "C" NOT NULL,
    kind        text COLLATE "C" NOT NULL,
    title       text NOT NULL DEFAULT '',
    values      jsonb NOT NULL DEFAULT '{}',
    search      tsvector NOT NULL DEFAULT ''::tsvector,
    lineage     jsonb NOT NULL DEFAULT '{}',
    created_seq bigint NOT NULL,
    seq         bigint NOT NULL,
    versions    int NOT NULL DEFAULT 1,
    deleted     boolean NOT NULL DEFAULT false,
    PRIMARY KEY (domain_id, branch_id, key)
) PARTITION BY HASH (domain_id);
CREATE INDEX mat_records_kind_idx ON mat_records (domain_id, branch_id, kind, key);
CREATE INDEX mat_records_search_idx ON mat_records USING gin (domain_id, branch_id, search);

-- Links, stored (origin 'l') and foreign-key Links of ref Attributes
-- (origin 'r', relation = the Attribute's name).
CREATE TABLE mat_links (
    domain_id  int NOT NULL,
    branch_id  int NOT NULL,
    from_key   text COLLATE "C" NOT NULL,
    relation   text COLLATE "C" NOT NULL,
    to_key     text COLLATE "C" NOT NULL,
    origin     "char" NOT NULL DEFAULT 'l',
    seq        bigint NOT NULL,
    deleted    boolean NOT NULL DEFAULT false,
    PRIMARY KEY (domain_id, branch_id, from_key, relation, to_key)
) PARTITION BY HASH (domain_id);
CREATE INDEX mat_links_in_idx ON mat_links (domain_id, branch_id, to_key, relation, from_key);

-- One row per version of a Record on a branch.
CREATE TABLE mat_history (
    domain_id   int NOT NULL,
    branch_id   int NOT NULL,
    key         text COLLATE "C" NOT NULL,
    seq         bigint NOT NULL,
    revision_id text NOT NULL,
    op          text NOT NULL,
    kind        text COLLATE "C" NOT NULL,
    title       text NOT NULL DEFAULT '',
    values      jsonb,
    object_hash bytea,
    provenance  jsonb,
    PRIMARY KEY (domain_id, branch_id, key, seq)
) PARTITION BY HASH (domain_id);

-- One row per change of a Link on a branch (op link or unlink).
CREATE TABLE mat_link_history (
    domain_id int NOT NULL,
    branch_id int NOT NULL,
    from_key  text COLLATE "C" NOT NULL,
    relation  text COLLATE "C" NOT NULL,
    to_key    text COLLATE "C" NOT NULL,
    seq       bigint NOT NULL,
    op        text NOT NULL,
    origin    "char" NOT NULL DEFAULT 'l',
    PRIMARY KEY (domain_id, branch_id, from_key, relation, to_key, seq)
) PARTITION BY HASH (domain_id);
CREATE INDEX mat_link_history_in_idx ON mat_link_history (domain_id, branch_id, to_key, relation, from_key, seq);

-- Word lexicon: the distinct words of the search vectors of each branch
-- with the number of Records holding them, kept by statement-level
-- triggers on mat_records (set-based, from the transition tables).
CREATE TABLE mat_lexicon (
    domain_id int NOT NULL,
    branch_id int NOT NULL,
    word      text COLLATE "C" NOT NULL,
    records   int NOT NULL,
    PRIMARY KEY (domain_id, branch_id, word)
);
CREATE INDEX mat_lexicon_trgm_idx ON mat_lexicon USING gin (domain_id, branch_id, word gin_trgm_ops);

CREATE TRIGGER mat_records_lexicon_ins AFTER INSERT ON mat_records
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();
CREATE TRIGGER mat_records_lexicon_upd AFTER UPDATE ON mat_records
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();
CREATE TRIGGER mat_records_lexicon_del AFTER DELETE ON mat_records
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();

DO $$
DECLARE
    t text;
    i int;
BEGIN
    FOREACH t IN ARRAY ARRAY['objects', 'mat_records', 'mat_links', 'mat_history', 'mat_link_history'] LOOP
        FOR i IN 0..7 LOOP
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
                           t || '_p' || i, t, i);
        END LOOP;
    END LOOP;
END
$$;

-- Row-level security: every table holding Domain data.
ALTER TABLE domains ENABLE ROW LEVEL SECURITY;
CREATE POLICY domain_isolation ON domains USING (id = lb_domain()) WITH CHECK (id = lb_domain());

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['tokens', 'refs', 'schemas', 'revisions', 'objects', 'idempotency_keys',
                             'mat_records', 'mat_links', 'mat_history', 'mat_link_history', 'mat_lexicon'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY domain_isolation ON %I USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain())', t);
    END LOOP;
END
$$;

GRANT SELECT ON domains TO lorebase_app;
GRANT SELECT, INSERT ON tokens TO lorebase_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON refs, schemas, revisions, objects, idempotency_keys,
    mat_records, mat_links, mat_history, mat_link_history TO lorebase_app;
GRANT SELECT ON mat_lexicon TO lorebase_app;
GRANT USAGE ON SEQUENCE revision_seq TO lorebase_app;
GRANT EXECUTE ON FUNCTION lb_domain() TO lorebase_app;
