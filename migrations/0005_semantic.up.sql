-- Semantic search: one embedding per Record version and embedding spec.
--
-- A Record version is (key, seq): seq comes from the Domain-wide revision
-- sequence and copies keep it, so a version's vector serves every branch
-- that reads that version (its own, overlays reading through it, copies,
-- reads at a past Revision), and a branch that changes the Record reads
-- its own version, masking the base's vector. spec identifies the Kind,
-- model, dims and Attributes the vector was made for (schema.Embedding.Spec):
-- a search compares only vectors of the spec the Kind declares now.
-- embedding is stored at unit length, so cosine similarity is a dot product.
--
-- Where the vector extension (pgvector) is available it is created and a
-- generated vec column mirrors embedding; HNSW indexes over it, one per
-- (Domain, Kind, spec), are built by the semantic.index job on the
-- Domain's partition. Without pgvector, search is exact over embedding.
CREATE TABLE mat_vectors (
    domain_id int NOT NULL,
    key       text COLLATE "C" NOT NULL,
    seq       bigint NOT NULL,
    spec      text COLLATE "C" NOT NULL,
    branch_id int NOT NULL,
    kind      text COLLATE "C" NOT NULL,
    embedding real[] NOT NULL,
    PRIMARY KEY (domain_id, key, seq, spec)
) PARTITION BY HASH (domain_id);
-- Cleanup of a deleted branch's versions.
CREATE INDEX mat_vectors_branch_idx ON mat_vectors (domain_id, branch_id);

DO $$
DECLARE
    i int;
BEGIN
    FOR i IN 0..7 LOOP
        EXECUTE format('CREATE TABLE %I PARTITION OF mat_vectors FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
                       'mat_vectors_p' || i, i);
    END LOOP;
END
$$;

ALTER TABLE mat_vectors ENABLE ROW LEVEL SECURITY;
CREATE POLICY domain_isolation ON mat_vectors USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain());
-- Requests read vectors through SECURITY DEFINER functions and store the
-- vectors clients send with their changes; jobs (the owner) write the rest.
GRANT SELECT, INSERT, UPDATE ON mat_vectors TO lorebase_app;

DO $$
BEGIN
    IF EXISTS (SELECT FROM pg_available_extensions WHERE name = 'vector') THEN
        CREATE EXTENSION IF NOT EXISTS vector;
        EXECUTE 'ALTER TABLE mat_vectors ADD COLUMN vec vector GENERATED ALWAYS AS (embedding::vector) STORED';
    END IF;
END
$$;
