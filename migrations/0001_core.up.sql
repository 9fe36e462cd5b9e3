-- Lorebase core schema: Domains, tokens, branches (refs), compiled schemas,
-- Revisions, content-addressed objects, idempotency keys and the
-- materialized head (mat_records, mat_links, mat_history, mat_link_history).
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

-- lb_domain is the Domain of the current transaction, or NULL when none is
-- set. It is inlined by the planner, so policies using it stay index
-- conditions.
CREATE FUNCTION lb_domain() RETURNS int
    LANGUAGE sql STABLE PARALLEL SAFE
AS $$ SELECT NULLIF(current_setting('lorebase.domain_id', true), '')::int $$;

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
                             'mat_records', 'mat_links', 'mat_history', 'mat_link_history'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY domain_isolation ON %I USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain())', t);
    END LOOP;
END
$$;

GRANT SELECT ON domains TO lorebase_app;
GRANT SELECT, INSERT ON tokens TO lorebase_app;
GRANT SELECT, INSERT, UPDATE, DELETE ON refs, schemas, revisions, objects, idempotency_keys,
    mat_records, mat_links, mat_history, mat_link_history TO lorebase_app;
GRANT USAGE ON SEQUENCE revision_seq TO lorebase_app;
GRANT EXECUTE ON FUNCTION lb_domain() TO lorebase_app;
