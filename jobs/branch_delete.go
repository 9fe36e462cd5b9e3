package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// BranchDeleteArgs asks for the removal of a branch marked deleting. Jobs
// are unique by their arguments while not finished.
type BranchDeleteArgs struct {
	DomainID int32 `json:"domain_id" river:"unique"`
	BranchID int32 `json:"branch_id" river:"unique"`
}

// Kind is the job kind, "store.branch_delete".
func (BranchDeleteArgs) Kind() string { return jobkind.BranchDelete }

// InsertOpts makes the job unique by its arguments among unfinished jobs.
func (BranchDeleteArgs) InsertOpts() river.InsertOpts { return uniqueOpts() }

// Delete phases, in order: the tables emptied of the branch's rows. Deleting
// mat_records rows adjusts mat_lexicon (its triggers); the lexicon phase
// removes what is left. The vectors phase removes the vectors of the
// versions the branch wrote, except those a copy made from it (or from a
// branch made from it) still holds: copies keep their rows' versions and
// share their vectors. The counts phases remove the branch's Record
// counters and their change rows.
var deletePhases = []struct {
	name string
	t    table
}{
	{"records", recordsTable}, {"links", linksTable}, {"history", historyTable}, {"link_history", linkHistoryTable},
	{"vectors", vectorsTable}, {"lexicon", lexiconTable}, {"idempotency_keys", idempotencyTable},
	{"counts", countsTable}, {"count_changes", countChangeTable},
}

// Phases after the tables.
const (
	phaseIndexes = "indexes"
	phaseRef     = "ref"
)

// deleteProgress is refs.progress of a branch being deleted.
type deleteProgress struct {
	Phase         string  `json:"phase"`
	After         *cursor `json:"after,omitempty"`
	Deleted       int64   `json:"deleted"`
	TotalEstimate int64   `json:"total_estimate"`
	Batches       int     `json:"batches"`
	BatchRows     int     `json:"batch_rows,omitempty"`
	Planned       bool    `json:"planned,omitempty"`
}

// Deleter removes branches marked deleting (the store.branch_delete job):
// their rows in keyset batches, each with its progress in one transaction,
// then the per-Attribute indexes, then the schema and the ref, which frees
// the name. It is resumable and idempotent.
type Deleter struct {
	Store  *store.Store
	Config Config
	// BatchRows, when positive, fixes the batch size.
	BatchRows int
	// AfterBatch, when set, runs after each committed batch; its error
	// stops the run with that error (the next run resumes).
	AfterBatch func(ctx context.Context, st BatchStats) error
}

// ErrIndexBuildRunning: an index build of the branch is running; the
// deletion retries later (the worker snoozes).
var ErrIndexBuildRunning = errors.New("an index build of the branch is running")

// Run deletes the branch, resuming from its stored progress. A branch not
// marked deleting (or gone) is left alone.
func (dl *Deleter) Run(ctx context.Context, a BranchDeleteArgs) error {
	cfg := dl.Config.withDefaults()
	var sz *sizer
	start := time.Now()
	for {
		if cfg.Slice > 0 && time.Since(start) > cfg.Slice {
			return errSliceUsed
		}
		phase, err := dl.batch(ctx, a, cfg, &sz)
		if errors.Is(err, errStopped) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("delete branch %d of domain %d: %w", a.BranchID, a.DomainID, err)
		}
		switch phase {
		case phaseIndexes:
			if err := dl.dropIndexes(ctx, a); err != nil {
				return fmt.Errorf("delete branch %d of domain %d: %w", a.BranchID, a.DomainID, err)
			}
		case phaseRef:
			if err := dl.dropRef(ctx, a); err != nil {
				return fmt.Errorf("delete branch %d of domain %d: %w", a.BranchID, a.DomainID, err)
			}
			return nil
		}
	}
}

// batch deletes one batch of rows and returns the phase it leaves the job
// in.
func (dl *Deleter) batch(ctx context.Context, a BranchDeleteArgs, cfg Config, szp **sizer) (string, error) {
	tx, err := dl.Store.Pool.Begin(ctx)
	if err != nil {
		return "", fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit this is a no-op
	start := time.Now()
	var state string
	var raw []byte
	err = tx.QueryRow(ctx, `SELECT state, progress FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, a.DomainID, a.BranchID).Scan(&state, &raw)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && state != store.StateDeleting) {
		return "", errStopped
	}
	if err != nil {
		return "", fmt.Errorf("lock branch: %w", err)
	}
	var p deleteProgress
	if err := json.Unmarshal(raw, &p); err != nil {
		return "", fmt.Errorf("decode progress: %w", err)
	}
	if p.Phase == phaseIndexes || p.Phase == phaseRef {
		return p.Phase, nil
	}
	if *szp == nil {
		*szp = newSizer(cfg, dl.BatchRows, p.BatchRows)
	}
	sz := *szp
	if !p.Planned {
		for _, ph := range deletePhases {
			n, err := estimateRows(ctx, tx, fmt.Sprintf(`SELECT 1 FROM %s WHERE domain_id = %d AND branch_id = %d`, ph.t.name, a.DomainID, a.BranchID))
			if err != nil {
				return "", err
			}
			p.TotalEstimate += n
		}
		p.Planned = true
	}
	phase := 0
	for i, ph := range deletePhases {
		if ph.name == p.Phase {
			phase = i
		}
	}
	limit := sz.limit()
	heirs := ""
	if deletePhases[phase].t.name == vectorsTable.name {
		if heirs, err = vectorHeirs(ctx, tx, a); err != nil {
			return "", err
		}
	}
	read, deleted, last, err := deleteBatch(ctx, tx, a, deletePhases[phase].t, p.After, limit, heirs)
	if err != nil {
		return "", fmt.Errorf("delete %s: %w", deletePhases[phase].name, err)
	}
	p.After = last
	if read < limit {
		p.After = nil
		if phase+1 < len(deletePhases) {
			p.Phase = deletePhases[phase+1].name
		} else {
			p.Phase = phaseIndexes
		}
	}
	p.Deleted += int64(deleted)
	p.Batches++
	var contended bool
	if err := tx.QueryRow(ctx, commitWaitedSQL).Scan(&contended); err != nil {
		return "", fmt.Errorf("check lock waits: %w", err)
	}
	sz.observe(read, time.Since(start), contended)
	p.BatchRows = sz.limit()
	pj, err := json.Marshal(p)
	if err != nil {
		return "", fmt.Errorf("encode progress: %w", err)
	}
	if _, err := tx.Exec(ctx, `UPDATE refs SET progress = $3 WHERE domain_id = $1 AND id = $2`, a.DomainID, a.BranchID, pj); err != nil {
		return "", fmt.Errorf("store progress: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return "", fmt.Errorf("commit batch: %w", err)
	}
	if dl.AfterBatch != nil {
		st := BatchStats{Batch: p.Batches, Phase: deletePhases[phase].name, Rows: read, Written: deleted, Limit: limit,
			Held: time.Since(start), Contended: contended}
		if err := dl.AfterBatch(ctx, st); err != nil {
			return "", err
		}
	}
	return p.Phase, nil
}

// vectorHeirs lists, as an SQL int[] literal, the live branches made,
// directly or through others, from the branch being deleted: a copy keeps
// the versions it copied, so the vectors of those versions pass to it.
// Empty when there are none.
func vectorHeirs(ctx context.Context, tx pgx.Tx, a BranchDeleteArgs) (string, error) {
	var ids []int32
	if err := tx.QueryRow(ctx, `WITH RECURSIVE made AS (
			SELECT id, state FROM refs WHERE domain_id = $1 AND base_id = $2 AND id <> $2
			UNION
			SELECT r.id, r.state FROM refs r JOIN made m ON r.base_id = m.id WHERE r.domain_id = $1 AND r.id <> $2)
		SELECT coalesce(array_agg(id ORDER BY id), '{}') FROM made WHERE state <> 'deleting'`, a.DomainID, a.BranchID).Scan(&ids); err != nil {
		return "", fmt.Errorf("find branches made from the branch: %w", err)
	}
	if len(ids) == 0 {
		return "", nil
	}
	lits := make([]string, len(ids))
	for i, id := range ids {
		lits[i] = strconv.Itoa(int(id))
	}
	return "'{" + strings.Join(lits, ",") + "}'::int[]", nil
}

// deleteBatch deletes the next rows of the branch in t after the cursor:
// it finds the limit-th row's primary key, then deletes the primary key
// range up to it (an index range, whatever the planner knows of the rows).
// With heirs (mat_vectors only), the rows of versions an heir branch holds
// in its history pass to that branch first. It returns the rows read (the
// batch is short at the table's end) and those deleted.
func deleteBatch(ctx context.Context, tx pgx.Tx, a BranchDeleteArgs, t table, after *cursor, limit int, heirs string) (read, deleted int, last *cursor, err error) {
	d, b := lit(int64(a.DomainID)), lit(int64(a.BranchID))
	keyset, args := t.keysetSQL("r", after, 1)
	bound := fmt.Sprintf(`SELECT %s FROM %s r WHERE r.domain_id = %s AND r.branch_id = %s%s ORDER BY %s OFFSET %d LIMIT 1`,
		strings.Join(prefixed("r", t.cols), ", "), t.name, d, b, keyset, t.orderSQL("r", false), limit-1)
	dest := t.cursorDest()
	err = tx.QueryRow(ctx, bound, args...).Scan(dest...)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return 0, 0, nil, err
	}
	upTo := ""
	if err == nil {
		c, ok := t.scanCursor(deref(dest))
		if !ok {
			return 0, 0, nil, errors.New("batch bound holds NULL")
		}
		last = c
		cond, bargs := t.keysetSQL("r", c, len(args)+1)
		// keysetSQL says "after"; the range ends at the bound, included.
		upTo = strings.Replace(cond, ") > (", ") <= (", 1)
		args = append(args, bargs...)
	}
	if heirs != "" {
		held := fmt.Sprintf(`FROM mat_history h WHERE h.domain_id = r.domain_id AND h.branch_id = ANY (%s)
			AND h.key = r.key AND h.seq = r.seq`, heirs)
		if _, err := tx.Exec(ctx, fmt.Sprintf(`UPDATE %s r SET branch_id = (SELECT min(h.branch_id) %s)
			WHERE r.domain_id = %s AND r.branch_id = %s%s%s AND EXISTS (SELECT 1 %s)`,
			t.name, held, d, b, keyset, upTo, held), args...); err != nil {
			return 0, 0, nil, fmt.Errorf("pass shared rows on: %w", err)
		}
	}
	tag, err := tx.Exec(ctx, fmt.Sprintf(`DELETE FROM %s r WHERE r.domain_id = %s AND r.branch_id = %s%s%s`, t.name, d, b, keyset, upTo), args...)
	if err != nil {
		return 0, 0, nil, err
	}
	deleted = int(tag.RowsAffected())
	if last == nil {
		// The table's last rows: done.
		return min(deleted, limit-1), deleted, after, nil
	}
	return limit, deleted, last, nil
}

// dropIndexes drops the per-Attribute indexes of the branch (every
// Attribute of its schema: an Attribute no longer indexed may still have
// one), after cancelling its queued index builds. A running build makes
// the job retry later (ErrIndexBuildRunning).
func (dl *Deleter) dropIndexes(ctx context.Context, a BranchDeleteArgs) error {
	args := fmt.Sprintf(`{"domain_id":%d,"branch_id":%d}`, a.DomainID, a.BranchID)
	if _, err := dl.Store.Pool.Exec(ctx, `DELETE FROM river_job WHERE kind = $1 AND args @> $2::jsonb
		AND state IN ('available', 'scheduled', 'retryable', 'pending')`, IndexKind, args); err != nil {
		return fmt.Errorf("cancel index builds: %w", err)
	}
	var running bool
	if err := dl.Store.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM river_job WHERE kind = $1 AND args @> $2::jsonb AND state = 'running')`,
		IndexKind, args).Scan(&running); err != nil {
		return fmt.Errorf("check index builds: %w", err)
	}
	if running {
		return ErrIndexBuildRunning
	}
	var compiled []byte
	err := dl.Store.Pool.QueryRow(ctx, `SELECT compiled FROM schemas WHERE domain_id = $1 AND branch_id = $2`, a.DomainID, a.BranchID).Scan(&compiled)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("read schema: %w", err)
	}
	var names []string
	if len(compiled) > 0 {
		var sch schema.Schema
		if err := json.Unmarshal(compiled, &sch); err != nil {
			return fmt.Errorf("decode schema: %w", err)
		}
		for kn, k := range sch.Kinds {
			for _, at := range k.Attributes {
				names = append(names, IndexName(a.DomainID, a.BranchID, kn, at.Name))
			}
		}
		sort.Strings(names)
	}
	// And every index recorded for the branch (its schema may no longer
	// name an Attribute that was indexed).
	rows, err := dl.Store.Pool.Query(ctx, `SELECT name FROM attribute_indexes WHERE domain_id = $1 AND branch_id = $2`, a.DomainID, a.BranchID)
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
	if len(names) > 0 {
		if err := dropIndexes(ctx, dl.Store, names); err != nil {
			return err
		}
	}
	if _, err := dl.Store.Pool.Exec(ctx, `DELETE FROM attribute_indexes WHERE domain_id = $1 AND branch_id = $2`, a.DomainID, a.BranchID); err != nil {
		return fmt.Errorf("forget indexes: %w", err)
	}
	_, err = dl.Store.Pool.Exec(ctx, `UPDATE refs SET progress = jsonb_set(progress, '{phase}', '"ref"')
		WHERE domain_id = $1 AND id = $2 AND state = 'deleting'`, a.DomainID, a.BranchID)
	if err != nil {
		return fmt.Errorf("store progress: %w", err)
	}
	return nil
}

// dropIndexes drops indexes concurrently, one at a time, each under the
// index jobs' DDL lock (indexDDL), on a connection of its own (outside any
// transaction).
func dropIndexes(ctx context.Context, s *store.Store, names []string) error {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("drop indexes: %w", err)
	}
	defer conn.Release()
	for _, n := range names {
		var exists bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_class WHERE relname = $1 AND relnamespace = current_schema()::regnamespace)`, n).Scan(&exists); err != nil {
			return fmt.Errorf("drop index %s: %w", n, err)
		}
		if !exists {
			continue
		}
		if err := dropIndex(ctx, conn, n); err != nil {
			return fmt.Errorf("drop index %s: %w", n, err)
		}
	}
	return nil
}

// dropRef removes the schema and the ref (the name is then free).
func (dl *Deleter) dropRef(ctx context.Context, a BranchDeleteArgs) error {
	return pgx.BeginFunc(ctx, dl.Store.Pool, func(tx pgx.Tx) error {
		var state string
		err := tx.QueryRow(ctx, `SELECT state FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, a.DomainID, a.BranchID).Scan(&state)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && state != store.StateDeleting) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("lock branch: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM schemas WHERE domain_id = $1 AND branch_id = $2`, a.DomainID, a.BranchID); err != nil {
			return fmt.Errorf("delete schema: %w", err)
		}
		if _, err := tx.Exec(ctx, `DELETE FROM refs WHERE domain_id = $1 AND id = $2`, a.DomainID, a.BranchID); err != nil {
			return fmt.Errorf("delete ref: %w", err)
		}
		return nil
	})
}

// BranchDeleteWorker runs store.branch_delete jobs.
type BranchDeleteWorker struct {
	river.WorkerDefaults[BranchDeleteArgs]
	deleter *Deleter
}

// Timeout bounds one run (runTimeout); see MaterializeWorker.Timeout.
func (w *BranchDeleteWorker) Timeout(*river.Job[BranchDeleteArgs]) time.Duration {
	return runTimeout(w.deleter.Config)
}

// Work deletes the branch; while an index build of the branch runs, the
// job snoozes.
func (w *BranchDeleteWorker) Work(ctx context.Context, job *river.Job[BranchDeleteArgs]) error {
	err := w.deleter.Run(ctx, job.Args)
	if errors.Is(err, ErrIndexBuildRunning) {
		return river.JobSnooze(2 * time.Second)
	}
	if errors.Is(err, errSliceUsed) {
		return river.JobSnooze(0)
	}
	return err
}
