package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// DomainDeleteArgs asks for the removal of a Domain marked deleting.
type DomainDeleteArgs struct {
	DomainID int32 `json:"domain_id" river:"unique"`
}

// Kind is the job kind, "store.domain_delete".
func (DomainDeleteArgs) Kind() string { return jobkind.DomainDelete }

// InsertOpts makes the job unique by its arguments among unfinished jobs.
func (DomainDeleteArgs) InsertOpts() river.InsertOpts { return uniqueOpts() }

// domainDeleteBatch is the rows one batch of a Domain's deletion removes.
const domainDeleteBatch = 5000

// StateDomainDeleting is the state of a Domain marked for deletion.
const StateDomainDeleting = store.StateDomainDeleting

// DomainDeleter removes a Domain marked deleting, as the owner: its
// per-Attribute and HNSW indexes, then its rows from every table that has
// a domain_id column (found in the catalog, so a table added later is
// covered), in batches of their own transactions, and last, in one
// transaction holding the Domain's row, what in-flight writes left, the
// Domain's Revision-number sequence (revision_number_<id>) and the Domain.
// Each batch also updates domains.progress (phase: the table; tables_done,
// tables; rows: deleted so far over every run). A stopped run loses
// nothing: the next one deletes what is left.
type DomainDeleter struct {
	Store  *store.Store
	Config Config
	// BatchRows is the rows a batch deletes (0: domainDeleteBatch).
	BatchRows int
	// AfterBatch, when set, runs after each committed batch (Phase is the
	// table); its error stops the run as a crash would.
	AfterBatch func(ctx context.Context, st BatchStats) error
}

// Run deletes the Domain. A Domain gone or not marked deleting is left
// alone.
func (dd *DomainDeleter) Run(ctx context.Context, a DomainDeleteArgs) error {
	if err := dd.run(ctx, a); err != nil {
		return fmt.Errorf("delete domain %d: %w", a.DomainID, err)
	}
	return nil
}

func (dd *DomainDeleter) run(ctx context.Context, a DomainDeleteArgs) error {
	var state string
	err := dd.Store.Pool.QueryRow(ctx, `SELECT state FROM domains WHERE id = $1`, a.DomainID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && state != StateDomainDeleting) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("read domain: %w", err)
	}
	if err := dd.dropIndexes(ctx, a.DomainID); err != nil {
		return err
	}
	tables, err := DomainTables(ctx, dd.Store.Pool)
	if err != nil {
		return err
	}
	limit := dd.BatchRows
	if limit <= 0 {
		limit = domainDeleteBatch
	}
	batch := 0
	for i, t := range tables {
		stmt := fmt.Sprintf(`DELETE FROM %[1]s WHERE ctid = ANY (ARRAY(SELECT ctid FROM %[1]s WHERE domain_id = $1 LIMIT $2))`, t.Sanitize())
		for {
			start := time.Now()
			// A batch and its progress commit together: the rows deleted
			// and the count kept on the Domain never disagree. (One
			// statement, DELETE ... RETURNING in a CTE, costs more: the
			// RETURNING fetches every deleted row again.)
			n, gone := 0, false
			err := pgx.BeginFunc(ctx, dd.Store.Pool, func(tx pgx.Tx) error {
				tag, err := tx.Exec(ctx, stmt, a.DomainID, limit)
				if err != nil {
					return fmt.Errorf("delete rows of %s: %w", t.Sanitize(), err)
				}
				n = int(tag.RowsAffected())
				if n == 0 {
					return nil
				}
				tag, err = tx.Exec(ctx, `UPDATE domains SET progress = jsonb_build_object('phase', $2::text, 'tables_done', $3::int,
					'tables', $4::int, 'rows', coalesce((progress ->> 'rows')::bigint, 0) + $5) WHERE id = $1`,
					a.DomainID, t[len(t)-1], i, len(tables), n)
				if err != nil {
					return fmt.Errorf("record progress: %w", err)
				}
				gone = tag.RowsAffected() == 0
				return nil
			})
			if err != nil {
				return err
			}
			if gone {
				// Another run finished the deletion meanwhile.
				return nil
			}
			if n == 0 {
				break
			}
			batch++
			if dd.AfterBatch != nil {
				if err := dd.AfterBatch(ctx, BatchStats{Batch: batch, Phase: t[len(t)-1], Rows: n, Written: n, Limit: limit, Held: time.Since(start)}); err != nil {
					return err
				}
			}
			if n < limit {
				break
			}
		}
	}
	return pgx.BeginFunc(ctx, dd.Store.Pool, func(tx pgx.Tx) error {
		// Holding the Domain's row waits for the writes in flight (they
		// hold its key) and keeps new ones out; what they left goes here.
		if err := tx.QueryRow(ctx, `SELECT state FROM domains WHERE id = $1 FOR UPDATE`, a.DomainID).Scan(&state); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				return nil
			}
			return fmt.Errorf("lock domain: %w", err)
		}
		for _, t := range tables {
			if _, err := tx.Exec(ctx, `DELETE FROM `+t.Sanitize()+` WHERE domain_id = $1`, a.DomainID); err != nil {
				return fmt.Errorf("delete rows of %s: %w", t.Sanitize(), err)
			}
		}
		seq := pgx.Identifier{"revision_number_" + strconv.Itoa(int(a.DomainID))}
		if _, err := tx.Exec(ctx, `DROP SEQUENCE IF EXISTS `+seq.Sanitize()); err != nil {
			return fmt.Errorf("drop revision number sequence: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM domains WHERE id = $1`, a.DomainID); err != nil {
			return fmt.Errorf("delete domain row: %w", err)
		}
		return nil
	})
}

// DomainTables lists the tables that hold rows of a Domain: every table
// of the current schema with a domain_id column, partitions rather than
// their partitioned parents, tables that foreign keys reference last (their
// rows' cascades then find little left).
func DomainTables(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}) ([]pgx.Identifier, error) {
	rows, err := q.Query(ctx, `SELECT c.relname::text FROM pg_class c
		JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'domain_id' AND NOT a.attisdropped
		WHERE c.relnamespace = current_schema()::regnamespace AND c.relkind = 'r'
		ORDER BY EXISTS (SELECT FROM pg_constraint f WHERE f.confrelid = c.oid AND f.contype = 'f'), c.relname`)
	if err != nil {
		return nil, fmt.Errorf("list domain tables: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, fmt.Errorf("list domain tables: %w", err)
	}
	out := make([]pgx.Identifier, len(names))
	for i, n := range names {
		out[i] = pgx.Identifier{n}
	}
	return out, nil
}

// dropIndexes drops the Domain's per-Attribute indexes (those its
// branches' schemas name and those recorded) and its HNSW indexes.
func (dd *DomainDeleter) dropIndexes(ctx context.Context, domainID int32) error {
	var names []string
	rows, err := dd.Store.Pool.Query(ctx, `SELECT branch_id, compiled FROM schemas WHERE domain_id = $1`, domainID)
	if err != nil {
		return fmt.Errorf("read schemas: %w", err)
	}
	var branchID int32
	var compiled []byte
	if _, err := pgx.ForEachRow(rows, []any{&branchID, &compiled}, func() error {
		var sch schema.Schema
		if err := json.Unmarshal(compiled, &sch); err != nil {
			return fmt.Errorf("decode schema of branch %d: %w", branchID, err)
		}
		for kn, k := range sch.Kinds {
			for _, at := range k.Attributes {
				names = append(names, IndexName(domainID, branchID, kn, at.Name))
			}
		}
		return nil
	}); err != nil {
		return fmt.Errorf("read schemas: %w", err)
	}
	rows, err = dd.Store.Pool.Query(ctx, `SELECT name FROM attribute_indexes WHERE domain_id = $1
		UNION ALL
		SELECT relname::text FROM pg_class WHERE relkind = 'i' AND relnamespace = current_schema()::regnamespace
		   AND starts_with(relname::text, $2)`, domainID, VectorIndexName(domainID, ""))
	if err != nil {
		return fmt.Errorf("read recorded indexes: %w", err)
	}
	recorded, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("read recorded indexes: %w", err)
	}
	names = append(names, recorded...)
	sort.Strings(names)
	names = slices.Compact(names)
	if len(names) == 0 {
		return nil
	}
	return dropIndexes(ctx, dd.Store, names)
}

// DomainDeleteWorker runs store.domain_delete jobs.
type DomainDeleteWorker struct {
	river.WorkerDefaults[DomainDeleteArgs]
	deleter *DomainDeleter
}

// Timeout bounds one run (runTimeout).
func (w *DomainDeleteWorker) Timeout(*river.Job[DomainDeleteArgs]) time.Duration {
	return runTimeout(w.deleter.Config)
}

// Work deletes the Domain; while an index build runs, the job snoozes.
func (w *DomainDeleteWorker) Work(ctx context.Context, job *river.Job[DomainDeleteArgs]) error {
	err := w.deleter.Run(ctx, job.Args)
	if errors.Is(err, ErrIndexBuildRunning) {
		return river.JobSnooze(2 * time.Second)
	}
	return err
}
