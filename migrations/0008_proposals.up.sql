-- Proposals, diff and merge: the merge base of every pair of branches that
-- merged, Proposals and their per-conflict resolutions, and the functions
-- the diff and the three-way merge read states through.
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

-- function: lb_merge_records
-- lb_merge_records: the effective, present Records among p_keys of branch
-- p_branch at its head (p_at NULL) or as of seq p_at, with the branch and
-- seq of the row that says so.
CREATE FUNCTION lb_merge_records(p_branch int, p_at bigint, p_keys text[])
    RETURNS TABLE (key text, kind text, "values" jsonb, branch_id int, seq bigint)
    LANGUAGE plpgsql STABLE
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int := lb_domain();
    h bigint;
    bs int[];
    cs bigint[];
    hs bigint[];
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.head_seq INTO h FROM refs r WHERE r.domain_id = d AND r.id = p_branch;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO bs, cs, hs FROM lb_levels(d, p_branch, coalesce(p_at, h), p_at IS NOT NULL);
    RETURN QUERY EXECUTE format($q$SELECT e.key::text, e.kind::text, e."values", e.branch_id::int, e.seq
  FROM (SELECT DISTINCT k COLLATE "C" AS key FROM unnest($1::text[]) k) q
 CROSS JOIN LATERAL %1$s e
 WHERE e.present$q$, lb_rec_eff_sql(d, bs, cs, hs, 'q.key')) USING p_keys;
END
$$;

-- function: lb_merge_links
-- lb_merge_links: which of the Links (p_from[i], p_rel[i], p_to[i]) are
-- present on branch p_branch at its head (p_at NULL) or as of seq p_at.
CREATE FUNCTION lb_merge_links(p_branch int, p_at bigint, p_from text[], p_rel text[], p_to text[])
    RETURNS TABLE (from_key text, relation text, to_key text)
    LANGUAGE plpgsql STABLE
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int := lb_domain();
    h bigint;
    bs int[];
    cs bigint[];
    hs bigint[];
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.head_seq INTO h FROM refs r WHERE r.domain_id = d AND r.id = p_branch;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO bs, cs, hs FROM lb_levels(d, p_branch, coalesce(p_at, h), p_at IS NOT NULL);
    RETURN QUERY EXECUTE format($q$SELECT z.from_key::text, z.relation::text, z.to_key::text
  FROM (SELECT DISTINCT u.f COLLATE "C" AS from_key, u.r COLLATE "C" AS relation, u.t COLLATE "C" AS to_key
          FROM unnest($1::text[], $2::text[], $3::text[]) u(f, r, t)) q
 CROSS JOIN LATERAL %1$s z
 WHERE z.present$q$, lb_link_eff_sql(d, bs, cs, hs, 'q.from_key', 'q.relation', 'q.to_key')) USING p_from, p_rel, p_to;
END
$$;

-- function: lb_merge_changed
-- lb_merge_changed: what the Revisions of branch p_branch after seq p_lo
-- (up to p_hi, or all when NULL) changed: Records ('r', key), stored Links
-- ('l', from, relation, to) and the schema ('s'). Read through the log
-- index of the branch: its cost grows with the changes, not the Domain.
CREATE FUNCTION lb_merge_changed(p_branch int, p_lo bigint, p_hi bigint)
    RETURNS TABLE (what text, key text, relation text, to_key text)
    LANGUAGE sql STABLE
    SET search_path = public, pg_temp
AS $$
SELECT DISTINCT
       CASE WHEN ch ->> 'op' IN ('link', 'unlink') THEN 'l' WHEN ch ->> 'op' = 'schema' THEN 's' ELSE 'r' END,
       coalesce(ch ->> 'key', ch ->> 'from', ''), coalesce(ch ->> 'relation', ''), coalesce(ch ->> 'to', '')
  FROM revisions v CROSS JOIN LATERAL jsonb_array_elements(v.changes) ch
 WHERE v.domain_id = lb_domain() AND v.branch_id = p_branch AND v.seq > p_lo
   AND (p_hi IS NULL OR v.seq <= p_hi)
$$;

REVOKE ALL ON FUNCTION lb_merge_records(int, bigint, text[]), lb_merge_links(int, bigint, text[], text[], text[]),
    lb_merge_changed(int, bigint, bigint) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION lb_merge_records(int, bigint, text[]), lb_merge_links(int, bigint, text[], text[], text[]),
    lb_merge_changed(int, bigint, bigint) TO lorebase_app;
