-- Exact Record counts: the number of present Records of each Kind on each
-- branch, as the branch reads at its head (an overlay's count is its base's
-- as of the fork plus what its own commits changed), kept by the commit
-- pipeline in the transaction that writes the materialized rows
-- (commit/write.go), with one row per Revision and Kind whose count it
-- changed (mat_count_changes) so that a count as of a recent Revision and a
-- fork at a past Revision are exact too (lb_counts_at).
--
-- refs.counts_from is the seq from which a branch's counts are known: its
-- counter rows are right at its head, and its change rows cover every
-- Revision after counts_from. NULL: the branch keeps no counter (a branch
-- forked at a Revision older than its base's counts_from); its counts are
-- the reads' bounded walk.

ALTER TABLE refs ADD COLUMN counts_from bigint;

CREATE TABLE mat_counts (
    domain_id int NOT NULL,
    branch_id int NOT NULL,
    kind      text COLLATE "C" NOT NULL,
    records   bigint NOT NULL,
    PRIMARY KEY (domain_id, branch_id, kind),
    FOREIGN KEY (domain_id, branch_id) REFERENCES refs (domain_id, id) ON DELETE CASCADE
) PARTITION BY HASH (domain_id);

CREATE TABLE mat_count_changes (
    domain_id int NOT NULL,
    branch_id int NOT NULL,
    kind      text COLLATE "C" NOT NULL,
    seq       bigint NOT NULL,
    delta     bigint NOT NULL,
    PRIMARY KEY (domain_id, branch_id, kind, seq),
    FOREIGN KEY (domain_id, branch_id) REFERENCES refs (domain_id, id) ON DELETE CASCADE
) PARTITION BY HASH (domain_id);
-- A count as of a Revision of every Kind reads the changes after it.
CREATE INDEX mat_count_changes_seq_idx ON mat_count_changes (domain_id, branch_id, seq);

DO $$
DECLARE
    t text;
BEGIN
    FOREACH t IN ARRAY ARRAY['mat_counts', 'mat_count_changes'] LOOP
        FOR i IN 0..7 LOOP
            EXECUTE format('CREATE TABLE %I PARTITION OF %I FOR VALUES WITH (MODULUS 8, REMAINDER %s)',
                           t || '_p' || i, t, i);
        END LOOP;
        EXECUTE format('ALTER TABLE %I ENABLE ROW LEVEL SECURITY', t);
        EXECUTE format('CREATE POLICY domain_isolation ON %I USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain())', t);
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO lorebase_app', t);
    END LOOP;
END
$$;

-- Existing branches. One that owns all its rows (no base, or a finished
-- copy) counts them; one that reads through its base (an overlay, a copy
-- still copying) counts its effective Records over its levels, with the
-- statements of the reads (migrations/functions, applied by earlier
-- migrations: a new database has no branches here). Branches being
-- deleted get no counter.
INSERT INTO mat_counts (domain_id, branch_id, kind, records)
SELECT m.domain_id, m.branch_id, m.kind, count(*)
  FROM mat_records m
  JOIN refs r ON r.domain_id = m.domain_id AND r.id = m.branch_id
 WHERE NOT m.deleted AND r.state = 'ready' AND (r.base_id IS NULL OR r.mode = 'copy')
 GROUP BY 1, 2, 3;
UPDATE refs SET counts_from = head_seq WHERE state = 'ready' AND (base_id IS NULL OR mode = 'copy');

DO $$
DECLARE
    r record;
    l record;
BEGIN
    FOR r IN SELECT x.domain_id, x.id, x.head_seq FROM refs x
              WHERE x.state <> 'deleting' AND x.counts_from IS NULL ORDER BY x.domain_id, x.id LOOP
        SELECT * INTO l FROM lb_levels(r.domain_id, r.id, r.head_seq, false);
        EXECUTE format('INSERT INTO mat_counts (domain_id, branch_id, kind, records)
            SELECT %L, %L, e.kind, count(*) FROM (SELECT DISTINCT c.key FROM %s c) k
             CROSS JOIN LATERAL %s e WHERE e.present GROUP BY e.kind',
            r.domain_id, r.id, lb_rec_cands_sql(r.domain_id, l.bs, l.cs, l.hs, '', false, ''),
            lb_rec_eff_levels_sql(r.domain_id, l.bs, lb_level_cuts(l.cs, l.hs), 'k.key'));
        UPDATE refs SET counts_from = head_seq WHERE domain_id = r.domain_id AND id = r.id;
    END LOOP;
END
$$;
ANALYZE mat_counts;
