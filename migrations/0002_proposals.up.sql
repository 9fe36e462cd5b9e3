-- Proposals, diff and merge: the merge base of every pair of branches that
-- merged, Proposals and their per-conflict resolutions. The functions the
-- diff and the three-way merge read states through are
-- migrations/functions/lb_merge_*.sql.
--
-- Every table holds the Domain and is protected by domain_isolation.

-- merge_bases: the last merge between two branches (in either direction).
-- lo_id < hi_id name the pair. The merge base is the state of
-- base_branch_id as of base_seq (the merged source head). lo_spec and
-- hi_spec list, per side, the ranges of Revisions (branch id, after seq,
-- up to seq or null for the head) whose changed keys can differ from the
-- base: the diff and the merge read only those keys.
CREATE TABLE merge_bases (
    domain_id      int NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    lo_id          int NOT NULL,
    hi_id          int NOT NULL,
    base_branch_id int NOT NULL,
    base_seq       bigint NOT NULL,
    base_revision  text,
    lo_spec        jsonb NOT NULL,
    hi_spec        jsonb NOT NULL,
    merged_at      timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (domain_id, lo_id, hi_id),
    CHECK (lo_id < hi_id)
);

-- proposals: requests to merge a source branch into a target branch.
-- cache holds the last computed summary and conflicts with the heads and
-- resolutions they were computed at (cache_key); a read whose key differs
-- recomputes them.
CREATE TABLE proposals (
    domain_id       int NOT NULL REFERENCES domains (id) ON DELETE CASCADE,
    id              text NOT NULL,
    title           text NOT NULL,
    description     text NOT NULL DEFAULT '',
    source_id       int NOT NULL,
    target_id       int NOT NULL,
    source          text NOT NULL,
    target          text NOT NULL,
    state           text NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'merging', 'merged', 'closed')),
    author          text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now(),
    merged_revision text,
    cache_key       text,
    cache           jsonb,
    progress        jsonb NOT NULL DEFAULT '{}',
    PRIMARY KEY (domain_id, id)
);
CREATE INDEX proposals_state_idx ON proposals (domain_id, state, id);

-- proposal_resolutions: a person's choice for one conflict of a Proposal,
-- valid while the conflict's fingerprint is unchanged.
CREATE TABLE proposal_resolutions (
    domain_id   int NOT NULL,
    proposal_id text NOT NULL,
    conflict_id text NOT NULL,
    choice      text NOT NULL CHECK (choice IN ('target', 'source', 'value')),
    value       jsonb,
    fingerprint text NOT NULL,
    author      text NOT NULL,
    at          timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (domain_id, proposal_id, conflict_id),
    FOREIGN KEY (domain_id, proposal_id) REFERENCES proposals (domain_id, id) ON DELETE CASCADE
);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['merge_bases', 'proposals', 'proposal_resolutions'] LOOP
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY domain_isolation ON %I USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain())', t);
    END LOOP;
END
$$;

GRANT SELECT, INSERT, UPDATE, DELETE ON merge_bases, proposals, proposal_resolutions TO lorebase_app;
