package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// MaterializeArgs asks for the copy of a copy branch's base rows. Jobs are
// unique by their arguments while not finished.
type MaterializeArgs struct {
	DomainID int32 `json:"domain_id" river:"unique"`
	BranchID int32 `json:"branch_id" river:"unique"`
}

// Kind is the job kind, "store.materialize".
func (MaterializeArgs) Kind() string { return jobkind.Materialize }

// InsertOpts makes the job unique by its arguments among unfinished jobs.
func (MaterializeArgs) InsertOpts() river.InsertOpts { return uniqueOpts() }

func uniqueOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{
		ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled},
	}}
}

// Copy phases, in order: the tables copied.
var copyPhases = []struct {
	name string
	t    table
}{
	{"records", recordsTable}, {"links", linksTable}, {"history", historyTable}, {"link_history", linkHistoryTable},
}

// PhaseDone is the phase of a finished job.
const PhaseDone = "done"

// level is one level of the base chain the copy reads: a branch as of a cut.
type level struct {
	Branch int32 `json:"branch"`
	Cut    int64 `json:"cut"`
}

// copyProgress is refs.progress of a copy branch. It is written in the
// transaction of each batch, so a run that stops resumes after the last
// committed batch.
type copyProgress struct {
	Phase         string     `json:"phase"`
	Level         int        `json:"level"`
	After         *cursor    `json:"after,omitempty"`
	Levels        []level    `json:"levels,omitempty"`
	Read          int64      `json:"read"`
	Copied        int64      `json:"copied"`
	TotalEstimate int64      `json:"total_estimate"`
	Batches       int        `json:"batches"`
	BatchRows     int        `json:"batch_rows,omitempty"`
	Contended     bool       `json:"contended,omitempty"`
	StartedAt     *time.Time `json:"started_at,omitempty"`
	FinishedAt    *time.Time `json:"finished_at,omitempty"`
}

// Copier copies the base rows of copy branches (the store.materialize job):
// the effective Records and Links of the base chain as of the fork (absent
// ones skipped) and the chain's history rows up to each level's cut, in
// keyset batches along the primary key; rows the copy wrote itself
// (commits on the copy during the copy) win (ownRowsAhead). Each
// batch runs in one transaction that first locks the copy's ref (the lock
// commits take) and stores the progress with the rows.
type Copier struct {
	Store  *store.Store
	Config Config
	// BatchRows, when positive, fixes the batch size.
	BatchRows int
	// AfterBatch, when set, runs after each committed batch; its error
	// stops the run with that error (the next run resumes).
	AfterBatch func(ctx context.Context, st BatchStats) error
	// AnalyzeWait bounds how long the finished copy waits, in all, for the
	// locks of its partitions' ANALYZE (another ANALYZE or an index build
	// holds them); past it the statistics are left to autovacuum. 0 is
	// analyzeWait, or Config.Slice when shorter.
	AnalyzeWait time.Duration
	// Log receives the partitions whose ANALYZE was left to autovacuum
	// (nil: slog's default logger).
	Log *slog.Logger
}

// analyzeWait is the default of Copier.AnalyzeWait.
const analyzeWait = 30 * time.Second

// analyzeLockTimeout is how long one ANALYZE waits for its partition's
// lock before it gives up and tries again later. It is well under
// deadlock_timeout (1 s by default): a CREATE INDEX CONCURRENTLY holds the
// same lock while it waits for older transactions to end, the ANALYZE's
// among them, and the ANALYZE must give up before either of the two looks
// for a deadlock (which aborts one of them, the index build as likely as
// the copy).
const analyzeLockTimeout = 200 * time.Millisecond

// errStopped ends a run without error: the branch is gone, being deleted
// or no longer copying.
var errStopped = errors.New("branch no longer copying")

// Run copies until the branch is ready (or gone), resuming from its
// stored progress.
func (c *Copier) Run(ctx context.Context, a MaterializeArgs) error {
	cfg := c.Config.withDefaults()
	var sz *sizer
	start := time.Now()
	for {
		done, err := c.batch(ctx, a, cfg, &sz)
		if errors.Is(err, errStopped) {
			return nil
		}
		if err != nil {
			return fmt.Errorf("copy branch %d of domain %d: %w", a.BranchID, a.DomainID, err)
		}
		if done {
			wait := c.AnalyzeWait
			if wait <= 0 {
				wait = analyzeWait
				if cfg.Slice > 0 {
					wait = min(wait, cfg.Slice)
				}
			}
			return c.analyze(ctx, a, wait)
		}
		if cfg.Slice > 0 && time.Since(start) > cfg.Slice {
			return errSliceUsed
		}
	}
}

// analyze refreshes the planner's statistics of the Domain's partitions
// once the copy is done: the copy has just added as many rows as its base
// holds, and with the statistics of before, the planner takes the new
// branch for an empty one and may read the wrong index for every read on
// it (measured: Links of a Record read the whole reverse index, 40 ms
// instead of 1) until autovacuum gets to it. A partition whose lock stays
// taken (an index build on it) past wait is left to autovacuum, whose
// threshold the copy has crossed.
func (c *Copier) analyze(ctx context.Context, a MaterializeArgs, wait time.Duration) error {
	deadline := time.Now().Add(wait)
	for _, t := range []string{"mat_records", "mat_links", "mat_history", "mat_link_history"} {
		var part string
		err := c.Store.Pool.QueryRow(ctx, `SELECT tableoid::regclass::text FROM `+t+` WHERE domain_id = $1 LIMIT 1`, a.DomainID).Scan(&part)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("find the partition of %s: %w", t, err)
		}
		pause := 100 * time.Millisecond
		for {
			err := c.analyzePart(ctx, part)
			if err == nil {
				break
			}
			if !lockBusy(err) {
				return fmt.Errorf("analyze %s: %w", part, err)
			}
			left := time.Until(deadline)
			if left <= 0 {
				c.log().WarnContext(ctx, "copy done; partition statistics left to autovacuum: its lock stayed taken",
					"domain_id", a.DomainID, "branch_id", a.BranchID, "partition", part, "waited", wait)
				break
			}
			select {
			case <-ctx.Done():
				return fmt.Errorf("analyze %s: %w", part, ctx.Err())
			case <-time.After(min(pause, left)):
			}
			pause = min(pause*2, 2*time.Second)
		}
	}
	return nil
}

// analyzePart runs ANALYZE of one partition in a transaction whose lock
// waits end after analyzeLockTimeout.
func (c *Copier) analyzePart(ctx context.Context, part string) error {
	return pgx.BeginFunc(ctx, c.Store.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, fmt.Sprintf(`SET LOCAL lock_timeout = %d`, analyzeLockTimeout.Milliseconds())); err != nil {
			return err
		}
		_, err := tx.Exec(ctx, `ANALYZE `+pgx.Identifier{part}.Sanitize())
		return err
	})
}

// lockBusy reports a statement that gave up on a lock (lock_timeout) or
// was chosen to end a deadlock.
func lockBusy(err error) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && (pgErr.Code == "55P03" || pgErr.Code == "40P01")
}

func (c *Copier) log() *slog.Logger {
	if c.Log != nil {
		return c.Log
	}
	return slog.Default()
}

// batch runs one batch in its own transaction; done reports that the copy
// finished.
func (c *Copier) batch(ctx context.Context, a MaterializeArgs, cfg Config, szp **sizer) (done bool, err error) {
	tx, err := c.Store.Pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit this is a no-op
	start := time.Now()
	var state string
	var p copyProgress
	var raw []byte
	err = tx.QueryRow(ctx, `SELECT state, progress FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, a.DomainID, a.BranchID).Scan(&state, &raw)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && state != store.StateCopying) {
		return true, errStopped
	}
	if err != nil {
		return false, fmt.Errorf("lock branch: %w", err)
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return false, fmt.Errorf("decode progress: %w", err)
	}
	if *szp == nil {
		*szp = newSizer(cfg, c.BatchRows, p.BatchRows)
	}
	sz := *szp
	if p.Levels == nil {
		if err := c.plan(ctx, tx, a, &p); err != nil {
			return false, err
		}
	}
	phase := 0
	for i, ph := range copyPhases {
		if ph.name == p.Phase {
			phase = i
		}
	}
	limit := sz.limit()
	var read, written int
	if p.Level < len(p.Levels) {
		var last *cursor
		read, written, last, err = c.copyBatch(ctx, tx, a, copyPhases[phase].t, p.Levels, p.Level, p.After, limit)
		if err != nil {
			return false, fmt.Errorf("copy %s: %w", copyPhases[phase].name, err)
		}
		p.After = last
	}
	if read < limit {
		// This level of this table is done: the next level, or the next
		// table from the first level.
		p.Level++
		p.After = nil
		if p.Level >= len(p.Levels) {
			p.Level = 0
			if phase+1 < len(copyPhases) {
				p.Phase = copyPhases[phase+1].name
			} else {
				p.Phase = PhaseDone
			}
		}
	}
	p.Read += int64(read)
	p.Copied += int64(written)
	p.Batches++
	var contended bool
	if err := tx.QueryRow(ctx, commitWaitedSQL).Scan(&contended); err != nil {
		return false, fmt.Errorf("check lock waits: %w", err)
	}
	held := time.Since(start)
	sz.observe(read, held, contended)
	p.BatchRows, p.Contended = sz.limit(), sz.contended || p.Contended
	if p.Phase == PhaseDone {
		now := time.Now().UTC()
		p.FinishedAt, p.After, p.Levels = &now, nil, nil
	}
	pj, err := json.Marshal(p)
	if err != nil {
		return false, fmt.Errorf("encode progress: %w", err)
	}
	newState := store.StateCopying
	if p.Phase == PhaseDone {
		newState = store.StateReady
	}
	// The re-embeddings' entries (progress.embedding) stay.
	if _, err := tx.Exec(ctx, `UPDATE refs SET progress = $3::jsonb || CASE WHEN progress ? 'embedding'
		       THEN jsonb_build_object('embedding', progress -> 'embedding') ELSE '{}' END, state = $4
		WHERE domain_id = $1 AND id = $2`,
		a.DomainID, a.BranchID, pj, newState); err != nil {
		return false, fmt.Errorf("store progress: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("commit batch: %w", err)
	}
	if c.AfterBatch != nil {
		st := BatchStats{Batch: p.Batches, Phase: copyPhases[phase].name, Rows: read, Written: written, Limit: limit,
			Held: time.Since(start), Contended: contended}
		if err := c.AfterBatch(ctx, st); err != nil {
			return false, err
		}
	}
	return p.Phase == PhaseDone, nil
}

// plan fixes the levels of the base chain the copy reads (the base as of
// the fork, then its base as of the base's fork while the level reads
// through, ...) and estimates the rows to read from the planner.
func (c *Copier) plan(ctx context.Context, tx pgx.Tx, a MaterializeArgs, p *copyProgress) error {
	var baseID *int32
	var fork *int64
	if err := tx.QueryRow(ctx, `SELECT base_id, fork_seq FROM refs WHERE domain_id = $1 AND id = $2`, a.DomainID, a.BranchID).Scan(&baseID, &fork); err != nil {
		return fmt.Errorf("read branch: %w", err)
	}
	levels := []level{}
	if baseID != nil && fork != nil {
		id, cut := *baseID, *fork
		for range store.MaxChainLevels {
			var mode, state string
			var next *int32
			var nextFork *int64
			err := tx.QueryRow(ctx, `SELECT mode, state, base_id, fork_seq FROM refs WHERE domain_id = $1 AND id = $2`, a.DomainID, id).
				Scan(&mode, &state, &next, &nextFork)
			if errors.Is(err, pgx.ErrNoRows) {
				break
			}
			if err != nil {
				return fmt.Errorf("read base chain: %w", err)
			}
			levels = append(levels, level{Branch: id, Cut: cut})
			if (mode != store.ModeOverlay && state != store.StateCopying) || next == nil || nextFork == nil {
				break
			}
			id, cut = *next, min(cut, *nextFork)
		}
	}
	var total int64
	for _, l := range levels {
		for _, ph := range copyPhases {
			n, err := estimateRows(ctx, tx, fmt.Sprintf(`SELECT 1 FROM %s WHERE domain_id = %d AND branch_id = %d`, ph.t.name, a.DomainID, l.Branch))
			if err != nil {
				return err
			}
			total += n
		}
	}
	now := time.Now().UTC()
	p.Levels, p.TotalEstimate, p.StartedAt = levels, total, &now
	if p.Phase == "" {
		p.Phase = copyPhases[0].name
	}
	return nil
}

// copyBatch copies one batch of table t from level j into the copy.
func (c *Copier) copyBatch(ctx context.Context, tx pgx.Tx, a MaterializeArgs, t table, levels []level, j int, after *cursor, limit int) (read, written int, last *cursor, err error) {
	d, dst, b, cut := lit(int64(a.DomainID)), lit(int64(a.BranchID)), lit(int64(levels[j].Branch)), lit(levels[j].Cut)
	own, err := c.ownRowsAhead(ctx, tx, a, t, after)
	if err != nil {
		return 0, 0, nil, err
	}
	keyset, args := t.keysetSQL("r", after, 1)
	args = append(args, limit)
	limitParam := fmt.Sprintf("$%d", len(args))
	src := fmt.Sprintf(`src AS MATERIALIZED (
  SELECT r.* FROM %s r
   WHERE r.domain_id = %s AND r.branch_id = %s%s
   ORDER BY %s
   LIMIT %s)`, t.name, d, b, keyset, t.orderSQL("r", false), limitParam)
	var ins string
	switch t.name {
	case "mat_records":
		// The copy's ivals follow its recorded indexes as this statement
		// reads them (an index build waits for this batch, waitWriters,
		// before it backfills) and the level's: the index jobs queued
		// with the copy build the base's indexes, often after the copy,
		// and their backfill then finds nothing to rewrite.
		// They are lb_ivals_of's, with the Attributes read once a batch
		// (ia) rather than once a row.
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(`+fmt.Sprintf(ivalsLockSQL, d, dst)+`)`); err != nil {
			return 0, 0, nil, fmt.Errorf("lock the copy's records: %w", err)
		}
		ins = fmt.Sprintf(`eff AS (
  SELECT s.key, s.kind, s.title, s.values, s.search, s.lineage, s.created_seq, s.seq, s.versions
    FROM src s WHERE s.seq <= %[3]s AND NOT s.deleted
  UNION ALL
  SELECT x.key COLLATE "C", x.kind COLLATE "C", x.title, x.values, x.search, x.lineage, x.created_seq, x.seq, x.versions
    FROM src s CROSS JOIN LATERAL lb_record_as_of(%[1]s, %[2]s, s.key, %[3]s,
         (SELECT sc.compiled FROM schemas sc WHERE sc.domain_id = %[1]s AND sc.branch_id = %[4]s)) x
   WHERE s.seq > %[3]s),
ia AS MATERIALIZED (
  SELECT x.kind, array_agg(DISTINCT x.attribute) AS attrs
    FROM attribute_indexes x WHERE x.domain_id = %[1]s AND x.branch_id IN (%[4]s, %[2]s)
   GROUP BY x.kind),
ins AS (
  INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, search, lineage, created_seq, seq, versions, ivals, iseq)
  SELECT %[1]s, %[4]s, e.key, e.kind, e.title, e.values, e.search, e.lineage, e.created_seq, e.seq, e.versions,
         (SELECT jsonb_object_agg(a, e.values -> a) FROM unnest(ia.attrs) a WHERE e.values ? a), e.seq
    FROM eff e LEFT JOIN ia ON ia.kind = e.kind WHERE true%[5]s
   ORDER BY e.key%[6]s
  RETURNING 1)`, d, b, cut, dst, recordsSaid(d, levels[:j]), onConflict(own, t))
	case "mat_links":
		ins = fmt.Sprintf(`eff AS (
  SELECT s.from_key, s.relation, s.to_key, s.origin, s.seq
    FROM src s WHERE s.seq <= %[3]s AND NOT s.deleted
  UNION ALL
  SELECT s.from_key, s.relation, s.to_key, x.origin, x.seq
    FROM src s CROSS JOIN LATERAL (
         SELECT h.op, h.origin, h.seq FROM mat_link_history h
          WHERE h.domain_id = %[1]s AND h.branch_id = %[2]s AND h.from_key = s.from_key AND h.relation = s.relation
            AND h.to_key = s.to_key AND h.seq <= %[3]s
          ORDER BY h.seq DESC LIMIT 1) x
   WHERE s.seq > %[3]s AND x.op <> 'unlink'),
ins AS (
  INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq)
  SELECT %[1]s, %[4]s, e.from_key, e.relation, e.to_key, e.origin, e.seq
    FROM eff e WHERE true%[5]s
   ORDER BY e.from_key, e.relation, e.to_key%[6]s
  RETURNING 1)`, d, b, cut, dst, linksSaid(d, levels[:j]), onConflict(own, t))
	case "mat_history":
		ins = fmt.Sprintf(`ins AS (
  INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values, object_hash, provenance)
  SELECT %[1]s, %[3]s, s.key, s.seq, s.revision_id, s.op, s.kind, s.title, s.values, s.object_hash, s.provenance
    FROM src s WHERE s.seq <= %[2]s
   ORDER BY s.key, s.seq%[4]s
  RETURNING 1)`, d, cut, dst, onConflict(own, t))
	case "mat_link_history":
		ins = fmt.Sprintf(`ins AS (
  INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op, origin)
  SELECT %[1]s, %[3]s, s.from_key, s.relation, s.to_key, s.seq, s.op, s.origin
    FROM src s WHERE s.seq <= %[2]s
   ORDER BY s.from_key, s.relation, s.to_key, s.seq%[4]s
  RETURNING 1)`, d, cut, dst, onConflict(own, t))
	default:
		return 0, 0, nil, fmt.Errorf("no copy for table %s", t.name)
	}
	sql := fmt.Sprintf(`WITH %s,
%s
SELECT c.n, c.w, l.* FROM (SELECT (SELECT count(*) FROM src) AS n, (SELECT count(*) FROM ins) AS w) c
LEFT JOIN LATERAL (SELECT %s FROM src r ORDER BY %s LIMIT 1) l ON true`,
		src, ins, strings.Join(prefixed("r", t.cols), ", "), t.orderSQL("r", true))
	var n, w int64
	dest := append([]any{&n, &w}, t.cursorDest()...)
	if err := tx.QueryRow(ctx, sql, args...).Scan(dest...); err != nil {
		return 0, 0, nil, err
	}
	last, ok := t.scanCursor(deref(dest[2:]))
	if !ok {
		last = after
	}
	return int(n), int(w), last, nil
}

// ownRowsAhead reports whether the copy already holds rows of table t
// after the cursor: rows a commit on the copy wrote during the copy (or,
// for a level below the first, rows an upper level copied). Only then can
// a batch's rows collide with the copy's own, and its insert skip them
// (ON CONFLICT DO NOTHING, so the copy's own rows win). Otherwise the
// batch inserts plainly: no speculative insertion, which costs a probe of
// the primary key and a WAL record more for every row. The batch holds
// the copy's ref lock, which commits on the copy take, so no own row
// appears until it commits; were one to appear all the same, the insert
// would fail on the primary key, the batch would roll back and its rerun
// would take the ON CONFLICT path. The look is one step along the primary
// key: the first own row after the cursor.
func (c *Copier) ownRowsAhead(ctx context.Context, tx pgx.Tx, a MaterializeArgs, t table, after *cursor) (bool, error) {
	keyset, args := t.keysetSQL("o", after, 3)
	var own bool
	err := tx.QueryRow(ctx, fmt.Sprintf(`SELECT EXISTS (SELECT 1 FROM %s o WHERE o.domain_id = $1 AND o.branch_id = $2%s)`, t.name, keyset),
		append([]any{a.DomainID, a.BranchID}, args...)...).Scan(&own)
	if err != nil {
		return false, fmt.Errorf("look for the copy's own rows: %w", err)
	}
	return own, nil
}

// onConflict is the conflict clause of a batch's insert into t: rows the
// copy holds already win when it holds any ahead of the batch (own).
func onConflict(own bool, t table) string {
	if !own {
		return ""
	}
	return fmt.Sprintf("\n  ON CONFLICT (domain_id, branch_id, %s) DO NOTHING", strings.Join(t.cols, ", "))
}

func prefixed(a string, cols []string) []string {
	out := make([]string, len(cols))
	for i, c := range cols {
		out[i] = a + "." + c
	}
	return out
}

// recordsSaid excludes Records an upper level has a say on, by the rule
// every read applies (lb_record_say: its row was at or before its cut, or
// it has history at or before it).
func recordsSaid(d string, upper []level) string {
	var b strings.Builder
	for _, u := range upper {
		fmt.Fprintf(&b, `
     AND NOT EXISTS (SELECT 1 FROM lb_record_say(%[1]s, %[2]d, %[3]d, e.key))`, d, u.Branch, u.Cut)
	}
	return b.String()
}

// linksSaid is recordsSaid for Links (lb_link_say).
func linksSaid(d string, upper []level) string {
	var b strings.Builder
	for _, u := range upper {
		fmt.Fprintf(&b, `
     AND NOT EXISTS (SELECT 1 FROM lb_link_say(%[1]s, %[2]d, %[3]d, e.from_key, e.relation, e.to_key))`, d, u.Branch, u.Cut)
	}
	return b.String()
}

// MaterializeWorker runs store.materialize jobs.
type MaterializeWorker struct {
	river.WorkerDefaults[MaterializeArgs]
	copier *Copier
}

// Timeout bounds one run (runTimeout): a run snoozes after its time slice,
// so only a run whose Keeper died outlives it, and River's rescuer runs it
// again. (With no timeout River never rescues a job.)
func (w *MaterializeWorker) Timeout(*river.Job[MaterializeArgs]) time.Duration {
	return runTimeout(w.copier.Config)
}

// Work copies the branch, resuming from its stored progress; past its time
// slice it snoozes to run again at once.
func (w *MaterializeWorker) Work(ctx context.Context, job *river.Job[MaterializeArgs]) error {
	err := w.copier.Run(ctx, job.Args)
	if errors.Is(err, errSliceUsed) {
		return river.JobSnooze(0)
	}
	return err
}

// Queue returns the hooks that queue branch jobs with client, in the
// transaction of the branch change: a copy queues store.materialize and
// the index builds of the copy's schema; a deletion store.branch_delete;
// a Domain's deletion store.domain_delete.
func Queue(client *river.Client[pgx.Tx]) store.BranchJobs {
	return store.BranchJobs{
		Copy: func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, compiled json.RawMessage) error {
			var sch schema.Schema
			if err := json.Unmarshal(compiled, &sch); err != nil {
				return fmt.Errorf("decode schema: %w", err)
			}
			params := []river.InsertManyParams{{Args: MaterializeArgs{DomainID: domainID, BranchID: branchID}}}
			for _, ib := range IndexBuildsForSchema(nil, &sch) {
				ib.DomainID, ib.BranchID = domainID, branchID
				params = append(params, river.InsertManyParams{Args: ib})
			}
			if _, err := client.InsertManyTx(ctx, tx, params); err != nil {
				return fmt.Errorf("enqueue branch copy: %w", err)
			}
			return nil
		},
		Delete: func(ctx context.Context, tx pgx.Tx, domainID, branchID int32) error {
			if _, err := client.InsertTx(ctx, tx, BranchDeleteArgs{DomainID: domainID, BranchID: branchID}, nil); err != nil {
				return fmt.Errorf("enqueue branch deletion: %w", err)
			}
			return nil
		},
		DeleteDomain: func(ctx context.Context, tx pgx.Tx, domainID int32) error {
			if _, err := client.InsertTx(ctx, tx, DomainDeleteArgs{DomainID: domainID}, nil); err != nil {
				return fmt.Errorf("enqueue domain deletion: %w", err)
			}
			return nil
		},
	}
}
