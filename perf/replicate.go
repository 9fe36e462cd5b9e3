package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/store"
)

// ReplicateResult tells what Replicate did.
type ReplicateResult struct {
	Replicas int           `json:"replicas"`
	Skipped  int           `json:"skipped"` // replicas copied by earlier runs
	Copied   int           `json:"copied"`  // replicas copied by this run
	Rows     int64         `json:"rows"`    // rows inserted by this run, every table
	Duration time.Duration `json:"duration_ns"`
	Vacuum   time.Duration `json:"vacuum_ns"`
}

// replicaSQL builds the expressions of one replica as SQL text with the
// replica's numbers as literals (functions would be called row by row: the
// planner does not inline them where their arguments repeat).
type replicaSQL struct {
	r    int
	base supply.Counts
	seed uint64
	// staged reads the base rows from the staging tables (stageTables)
	// instead of picking them out of every row of main.
	staged bool
}

// source is the FROM clause of the base rows of table, whose key column
// is keyCol: the rows of main ($1 the Domain, $2 main) with a base key, or
// the staging table that holds them.
func (x replicaSQL) source(table, keyCol string) string {
	if x.staged {
		return stagePrefix + table + ` WHERE domain_id = $1 AND branch_id = $2`
	}
	return table + ` WHERE domain_id = $1 AND branch_id = $2 AND ` + x.isBase(keyCol)
}

// key is the key of the base key expression k in the replica
// (supply.ReplicaKey).
func (x replicaSQL) key(k string) string {
	c := x.base
	return fmt.Sprintf(`(CASE
	WHEN left(%[1]s, 3) = 'PO-' THEN 'PO-' || (substr(%[1]s, 4)::bigint + %[2]d)
	WHEN left(%[1]s, 2) = 'S-' THEN 'S-' || (substr(%[1]s, 3)::bigint + %[3]d)
	WHEN left(%[1]s, 2) = 'W-' THEN 'W-' || (substr(%[1]s, 3)::bigint + %[4]d)
	WHEN left(%[1]s, 2) = 'P-' THEN 'P-' || (substr(%[1]s, 3)::bigint + %[5]d)
	ELSE '%[6]s' || substr(%[1]s, 2) END)`,
		k, x.r*c.PurchaseOrders, x.r*c.Suppliers, x.r*c.Warehouses, x.r*c.Parts, supply.ReplicaChars[x.r-1:x.r])
}

// isBase tells whether the key expression k is a key of the base.
func (x replicaSQL) isBase(k string) string {
	c := x.base
	return fmt.Sprintf(`(CASE
	WHEN left(%[1]s, 3) = 'PO-' THEN substr(%[1]s, 4)::bigint < %[2]d
	WHEN left(%[1]s, 2) = 'S-' THEN substr(%[1]s, 3)::bigint < %[3]d
	WHEN left(%[1]s, 2) = 'W-' THEN substr(%[1]s, 3)::bigint < %[4]d
	WHEN left(%[1]s, 2) = 'P-' THEN substr(%[1]s, 3)::bigint < %[5]d
	ELSE left(%[1]s, 1) = '0' END)`,
		k, 100001+c.PurchaseOrders, 1001+c.Suppliers, 1001+c.Warehouses, 1001+c.Parts)
}

// ref renumbers the foreign key attr of the values expression v.
func (x replicaSQL) ref(v, attr string) string {
	return fmt.Sprintf(`(CASE WHEN jsonb_typeof(%[1]s -> '%[2]s') = 'string'
	THEN jsonb_set(%[1]s, '{%[2]s}', to_jsonb(%[3]s)) ELSE %[1]s END)`, v, attr, x.key(v+" ->> '"+attr+"'"))
}

// values is a base Record's values in the replica: foreign keys renumbered,
// a Supplier's VAT number that of its number in the whole dataset.
func (x replicaSQL) values(kind, key, v string) string {
	return fmt.Sprintf(`(CASE
	WHEN %[3]s IS NULL THEN NULL
	WHEN %[1]s = 'Supplier' AND jsonb_typeof(%[3]s -> 'vat') = 'string' THEN
		jsonb_set(%[3]s, '{vat}', to_jsonb(coalesce(%[3]s ->> 'country', '') ||
			lpad((((substr(%[2]s, 3)::bigint - 1001 + %[4]d) * %[5]d + %[6]d) %% 1000000000)::text, 9, '0')))
	WHEN %[1]s = 'Part' THEN %[7]s
	WHEN %[1]s = 'PurchaseOrder' THEN %[8]s
	WHEN %[1]s = 'RiskFlag' THEN %[9]s
	ELSE %[3]s END)`,
		kind, key, v, x.r*x.base.Suppliers, supply.VATMultiplier, x.seed%1_000_000_000,
		x.ref(v, "maker"), x.ref(x.ref(v, "supplier"), "part"), x.ref(v, "supplier"))
}

// records copies the base's Records of main into the replica ($1 the
// Domain, $2 main), their ivals those of the replica's values for the
// indexes main records (a base Record without ivals has none), and adds the replica's present Records to main's Record
// counters (migrations/0014_record_counts), counted from the rows it
// inserts; it answers the number of Records inserted.
func (x replicaSQL) records() string {
	return `WITH copied AS (
	INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, search, lineage, created_seq, seq, versions, deleted, iseq, ivals)
	SELECT domain_id, branch_id, key, kind, title, values, search, lineage, created_seq, seq, versions, deleted, iseq,
	       CASE WHEN ivals IS NOT NULL THEN lb_ivals($1, $2, kind, values) END
	  FROM (SELECT domain_id, branch_id, ` + x.key("key") + ` AS key, kind, title, ` + x.values("kind", "key", "values") + ` AS values,
	               search, lineage, created_seq, seq, versions, deleted, iseq, ivals
	          FROM ` + x.source("mat_records", "key") + `) r
	RETURNING kind, deleted),
	counted AS (
	INSERT INTO mat_counts AS c (domain_id, branch_id, kind, records)
	SELECT $1, $2, kind, count(*) FROM copied WHERE NOT deleted GROUP BY kind
	ON CONFLICT (domain_id, branch_id, kind) DO UPDATE SET records = c.records + EXCLUDED.records)
	SELECT count(*) FROM copied`
}

// statements copy the rest of the base rows of main into the replica ($1
// the Domain, $2 main): the materialized Links and the history of Records
// and Links.
// The Revisions, trees and objects are not copied: the copies' rows point
// to the base's Revisions.
func (x replicaSQL) statements() []string {
	return []string{
		`INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq, deleted)
	SELECT domain_id, branch_id, ` + x.key("from_key") + `, relation, ` + x.key("to_key") + `, origin, seq, deleted
	  FROM ` + x.source("mat_links", "from_key"),
		`INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values, object_hash, provenance)
	SELECT domain_id, branch_id, ` + x.key("key") + `, seq, revision_id, op, kind, title, ` + x.values("kind", "key", "values") + `,
	       object_hash, provenance
	  FROM ` + x.source("mat_history", "key"),
		`INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op, origin)
	SELECT domain_id, branch_id, ` + x.key("from_key") + `, relation, ` + x.key("to_key") + `, seq, op, origin
	  FROM ` + x.source("mat_link_history", "from_key"),
	}
}

// derived copies what the mat_records triggers derive, for a replica
// inserted with them off: a replica's Records keep their base's search
// vectors, so its word postings are the base's with the keys renumbered,
// and each word gains as many Records as the postings copied name it; it
// answers the number of postings inserted.
func (x replicaSQL) derived() string {
	return `WITH added AS (
	INSERT INTO mat_search_words (domain_id, branch_id, key, word, score)
	SELECT domain_id, branch_id, ` + x.key("key") + `, word, score
	  FROM ` + x.source("mat_search_words", "key") + `
	RETURNING word),
	counted AS (
	UPDATE mat_lexicon l SET records = l.records + b.n
	  FROM (SELECT word, count(*)::int AS n FROM added GROUP BY word) b
	 WHERE l.domain_id = $1 AND l.branch_id = $2 AND l.word = b.word)
	SELECT count(*) FROM added`
}

// Replicate turns a loaded base dataset (cfg.Base(), in the Domain
// DomainName) into the dataset cfg: it copies the materialized rows of main
// cfg.Replicas-1 times with keys renumbered as supply.ReplicaKey does, in
// set-based SQL, one transaction per replica (four INSERT ... SELECT with
// the replica's numbers as literals), then
// runs VACUUM ANALYZE. As superuser it inserts with the triggers off
// (session_replication_role replica) and copies the word postings and
// lexicon counts of the base (derived) instead of the triggers ranking
// every word of every Record again; otherwise the triggers keep them. As
// superuser it also stages the base rows once and drops the secondary
// indexes of the copied tables while it copies, building them again at the
// end (replicate_staged.go): with the triggers off alone, the sixth 1M
// replica on the 2-core machine of docs/perf/load-10m-partial.txt took as
// long as the fifth with them, because scanning all of main for the base's
// rows and inserting into indexes larger than memory dominate, not the
// ranking. Main's Record counters gain each replica by one more statement.
// A replica whose first Supplier exists is skipped, and the staging tables
// and dropped index definitions outlive a killed run, so an interrupted
// run resumes. It does nothing when cfg has no replicas.
func Replicate(ctx context.Context, s *store.Store, cfg supply.Config, progress io.Writer) (*ReplicateResult, error) {
	res := &ReplicateResult{Replicas: max(cfg.Replicas, 1)}
	if cfg.Replicas <= 1 {
		return res, nil
	}
	gen, err := supply.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("replicate: %w", err)
	}
	base, err := supply.New(cfg.Base())
	if err != nil {
		return nil, fmt.Errorf("replicate: %w", err)
	}
	d, err := s.DomainByName(ctx, DomainName)
	if err != nil {
		return nil, fmt.Errorf("replicate: %w", err)
	}
	branchID, err := branchIDOf(ctx, s, d.ID, Branch)
	if err != nil {
		return nil, fmt.Errorf("replicate: %w", err)
	}
	c := base.Counts()
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return nil, fmt.Errorf("replicate: acquire connection: %w", err)
	}
	defer conn.Release()
	var super bool
	if err := conn.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super); err != nil {
		return nil, fmt.Errorf("replicate: role: %w", err)
	}
	start := time.Now()
	prepared := false
	for r := 1; r < cfg.Replicas; r++ {
		var exists bool
		first := gen.Key(supply.KindSupplier, r*c.Suppliers)
		err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = $3)`,
			d.ID, branchID, first).Scan(&exists)
		if err != nil {
			return res, fmt.Errorf("replicate: look up replica %d: %w", r, err)
		}
		if exists {
			res.Skipped++
			continue
		}
		x := replicaSQL{r: r, base: c, seed: cfg.Seed, staged: super}
		if super && !prepared {
			t := time.Now()
			if err := stage(ctx, conn, x, d.ID, branchID); err != nil {
				return res, fmt.Errorf("replicate: %w", err)
			}
			n, err := dropIndexes(ctx, conn)
			if err != nil {
				return res, fmt.Errorf("replicate: %w", err)
			}
			prepared = true
			if progress != nil {
				fmt.Fprintf(progress, "replicate: staged the base rows and dropped %d indexes in %s\n", n, time.Since(t).Round(time.Millisecond))
			}
		}
		t := time.Now()
		var rows int64
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
				return err
			}
			counted := []string{x.records()}
			if super {
				if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
					return err
				}
				counted = append(counted, x.derived())
			}
			for i, stmt := range counted {
				var n int64
				if err := tx.QueryRow(ctx, stmt, d.ID, branchID).Scan(&n); err != nil {
					return err
				}
				if i == 0 && n == 0 {
					// Nothing to copy from: the base's rows were not read
					// (a staging table emptied by a crash, say). The
					// replica would be counted copied with no Records.
					return errors.New("no Records copied from the base")
				}
				rows += n
			}
			for _, stmt := range x.statements() {
				tag, err := tx.Exec(ctx, stmt, d.ID, branchID)
				if err != nil {
					return err
				}
				rows += tag.RowsAffected()
			}
			// The replica's rows are no Revision's, so the counters'
			// change rows cannot go back past this point: they start at
			// the head.
			if _, err := tx.Exec(ctx, `UPDATE refs SET counts_from = head_seq
				WHERE domain_id = $1 AND id = $2 AND counts_from IS NOT NULL`, d.ID, branchID); err != nil {
				return err
			}
			return nil
		})
		if err != nil {
			return res, fmt.Errorf("replicate: replica %d: %w", r, err)
		}
		res.Copied++
		res.Rows += rows
		res.Duration = time.Since(start)
		if progress != nil {
			fmt.Fprintf(progress, "replicate: replica %d/%d: %d rows in %s (%.0f rows/s)\n",
				r+1, cfg.Replicas, rows, time.Since(t).Round(time.Millisecond), float64(rows)/time.Since(t).Seconds())
		}
	}
	restored := 0
	if super {
		if err := unstage(ctx, conn); err != nil {
			return res, fmt.Errorf("replicate: %w", err)
		}
		if restored, err = restoreIndexes(ctx, conn, progress); err != nil {
			return res, fmt.Errorf("replicate: %w", err)
		}
	}
	res.Duration = time.Since(start)
	if res.Copied > 0 || restored > 0 {
		t := time.Now()
		if _, err := conn.Exec(ctx, "VACUUM ANALYZE", pgx.QueryExecModeSimpleProtocol); err != nil {
			return res, fmt.Errorf("replicate: vacuum analyze: %w", err)
		}
		res.Vacuum = time.Since(t)
	}
	return res, nil
}
