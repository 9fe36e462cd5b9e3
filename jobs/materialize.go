package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"sync/atomic"
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

// Copy phases: the tables copied.
var copyPhases = []struct {
	name string
	t    table
}{
	{"records", recordsTable}, {"links", linksTable}, {"history", historyTable}, {"link_history", linkHistoryTable},
}

// copyLanes are the copy's lanes: each copies its tables in order, on a
// connection of its own, beside the other lane. The Records (with their
// search postings) take about as long as the three other tables together.
var copyLanes = []copyLane{
	// The Records' triggers write the copy's search postings and lexicon
	// words: without their statistics a misspelled word's corrections on
	// the copy read its lexicon whole.
	{name: "records", phases: []int{0}, written: []string{"mat_search_words", "mat_lexicon"}},
	{name: "tables", phases: []int{1, 2, 3}},
}

// copyLane is a lane of the copy.
type copyLane struct {
	name   string
	phases []int // indexes into copyPhases
	// written are the tables the lane's inserts write through triggers,
	// analyzed with the lane's own once it is done.
	written []string
}

// laneNamed is the lane called name (no phases when there is none).
func laneNamed(name string) copyLane {
	for _, cl := range copyLanes {
		if cl.name == name {
			return cl
		}
	}
	return copyLane{name: name}
}

// PhaseDone is the phase of a finished job.
const PhaseDone = "done"

// level is one level of the base chain the copy reads: a branch as of a cut.
type level struct {
	Branch int32 `json:"branch"`
	Cut    int64 `json:"cut"`
}

// copyProgress is refs.progress of a copy branch. Each lane's batch
// stores its lane's position (Lanes) and adds its counts in the
// transaction of the batch, so a run that stops resumes each lane after its
// last committed batch. Phase, Level and After are the single position of
// a copy begun before the lanes (Lanes nil), which the first run turns into
// lanes.
type copyProgress struct {
	Phase         string                   `json:"phase"`
	Level         int                      `json:"level"`
	After         *cursor                  `json:"after,omitempty"`
	Lanes         map[string]*laneProgress `json:"lanes,omitempty"`
	Levels        []level                  `json:"levels,omitempty"`
	Read          int64                    `json:"read"`
	Copied        int64                    `json:"copied"`
	TotalEstimate int64                    `json:"total_estimate"`
	Batches       int                      `json:"batches"`
	BatchRows     int                      `json:"batch_rows,omitempty"`
	Contended     bool                     `json:"contended,omitempty"`
	StartedAt     *time.Time               `json:"started_at,omitempty"`
	FinishedAt    *time.Time               `json:"finished_at,omitempty"`
}

// laneProgress is the position of one lane: its table (Phase, PhaseDone
// once its tables are copied), the level of the base chain and the last
// row copied.
type laneProgress struct {
	Phase     string  `json:"phase"`
	Level     int     `json:"level"`
	After     *cursor `json:"after,omitempty"`
	BatchRows int     `json:"batch_rows,omitempty"`
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
	// inBatch, when set (tests), runs in each batch once it holds the ref
	// lock.
	inBatch func(lane string)
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
// stored progress: the lanes side by side, each on a connection of its
// own. A lane that has copied its tables refreshes their statistics
// (analyze) while the other copies on.
func (c *Copier) Run(ctx context.Context, a MaterializeArgs) error {
	cfg := c.Config.withDefaults()
	lanes, err := c.prepare(ctx, a)
	if errors.Is(err, errStopped) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("copy branch %d of domain %d: %w", a.BranchID, a.DomainID, err)
	}
	wait := c.AnalyzeWait
	if wait <= 0 {
		wait = analyzeWait
		if cfg.Slice > 0 {
			wait = min(wait, cfg.Slice)
		}
	}
	r := &copyRun{c: c, a: a, cfg: cfg, start: time.Now(), pids: map[string]*atomic.Int32{}}
	for _, l := range lanes {
		r.pids[l] = new(atomic.Int32)
	}
	lctx, cancel := context.WithCancel(ctx)
	defer cancel()
	errs := make([]error, len(lanes))
	var wg sync.WaitGroup
	for i, l := range lanes {
		wg.Add(1)
		go func() {
			defer wg.Done()
			errs[i] = r.lane(lctx, l, wait)
			if errs[i] != nil && !errors.Is(errs[i], errStopped) && !errors.Is(errs[i], errSliceUsed) {
				cancel() // the other lane stops too; its batch rolls back
			}
		}()
	}
	wg.Wait()
	var sliceUsed bool
	for _, err := range errs {
		switch {
		case err == nil, errors.Is(err, errStopped):
		case errors.Is(err, errSliceUsed):
			sliceUsed = true
		case errors.Is(err, context.Canceled) && ctx.Err() == nil:
			// Cancelled by the other lane's error, reported below.
		default:
			return fmt.Errorf("copy branch %d of domain %d: %w", a.BranchID, a.DomainID, err)
		}
	}
	if sliceUsed {
		return errSliceUsed
	}
	return nil
}

// prepare starts or resumes a copy under the copy's ref lock: it fixes the
// levels of the base chain on the first run and turns the single position
// of a copy begun before the lanes into lanes. It returns the lanes still
// to copy; errStopped when the branch is gone or no longer copying.
func (c *Copier) prepare(ctx context.Context, a MaterializeArgs) ([]string, error) {
	var lanes []string
	err := pgx.BeginFunc(ctx, c.Store.Pool, func(tx pgx.Tx) error {
		var state string
		var p copyProgress
		var raw []byte
		err := tx.QueryRow(ctx, `SELECT state, progress FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, a.DomainID, a.BranchID).Scan(&state, &raw)
		if errors.Is(err, pgx.ErrNoRows) || (err == nil && state != store.StateCopying) {
			return errStopped
		}
		if err != nil {
			return fmt.Errorf("lock branch: %w", err)
		}
		if err := json.Unmarshal(raw, &p); err != nil {
			return fmt.Errorf("decode progress: %w", err)
		}
		changed := false
		if p.Levels == nil {
			if err := c.plan(ctx, tx, a, &p); err != nil {
				return err
			}
			changed = true
		}
		if p.Lanes == nil {
			p.Lanes = lanesOf(p)
			p.Level, p.After = 0, nil
			changed = true
		}
		for _, l := range copyLanes {
			if lp := p.Lanes[l.name]; lp != nil && lp.Phase != PhaseDone {
				lanes = append(lanes, l.name)
			}
		}
		if !changed {
			return nil
		}
		pj, err := json.Marshal(p)
		if err != nil {
			return fmt.Errorf("encode progress: %w", err)
		}
		// The re-embeddings' entries (progress.embedding) stay.
		if _, err := tx.Exec(ctx, `UPDATE refs SET progress = $3::jsonb || CASE WHEN progress ? 'embedding'
			       THEN jsonb_build_object('embedding', progress -> 'embedding') ELSE '{}' END
			WHERE domain_id = $1 AND id = $2`, a.DomainID, a.BranchID, pj); err != nil {
			return fmt.Errorf("store progress: %w", err)
		}
		return nil
	})
	return lanes, err
}

// lanesOf is the lanes' positions of a copy whose progress holds a single
// position (Phase, Level, After): the lane of that phase resumes there,
// lanes before it are done and lanes after it start from the beginning.
func lanesOf(p copyProgress) map[string]*laneProgress {
	phase := 0
	for i, ph := range copyPhases {
		if ph.name == p.Phase {
			phase = i
		}
	}
	out := map[string]*laneProgress{}
	for _, l := range copyLanes {
		lp := &laneProgress{Phase: copyPhases[l.phases[0]].name}
		switch {
		case l.phases[len(l.phases)-1] < phase:
			lp.Phase = PhaseDone
		case l.phases[0] <= phase:
			lp.Phase, lp.Level, lp.After = copyPhases[phase].name, p.Level, p.After
		}
		out[l.name] = lp
	}
	return out
}

// copyRun is one run of a copy: its lanes share the batch callback, the
// slice and the switch to one lane at a time.
type copyRun struct {
	c     *Copier
	a     MaterializeArgs
	cfg   Config
	start time.Time
	// solo is set once a commit on the copy waited for a batch. Until then
	// each lane's batch locks the ref FOR KEY SHARE: commits (FOR UPDATE)
	// wait for the batches of both lanes and batches for commits, but the
	// lanes do not wait for each other; their batches overlap, though, and
	// a waiting commit would be passed by batch after batch. From then on
	// the lanes take the lock FOR UPDATE, as commits do (a waiting commit
	// goes first), one lane at a time (soloMu).
	solo   atomic.Bool
	soloMu sync.Mutex
	// pids are the backends of the lanes' batches under way (0 between
	// batches), by lane: a commit waiting for the ref lock waits for one
	// holder at a time, so a batch asks whether a session waits for any
	// lane's batch, not only for its own (else the lane the commit does
	// not wait for yet passes it batch after batch).
	pids map[string]*atomic.Int32
	// afterMu serializes Copier.AfterBatch.
	afterMu sync.Mutex
}

// lane copies the tables of lane l batch by batch, then refreshes their
// statistics. It returns nil once the lane is done, errStopped when the
// branch is gone or no longer copying, errSliceUsed past the slice.
func (r *copyRun) lane(ctx context.Context, l string, wait time.Duration) error {
	var sz *sizer
	for {
		done, err := r.batch(ctx, l, &sz)
		if err != nil {
			return err
		}
		if done {
			cl := laneNamed(l)
			var parts []string
			for _, i := range cl.phases {
				parts = append(parts, copyPhases[i].t.name)
			}
			return r.c.analyze(ctx, r.a, append(parts, cl.written...), wait)
		}
		if r.cfg.Slice > 0 && time.Since(r.start) > r.cfg.Slice {
			return errSliceUsed
		}
	}
}

// analyze refreshes the planner's statistics of the Domain's partitions of
// tables once the copy has copied them: the copy has just added as many rows as its base
// holds, and with the statistics of before, the planner takes the new
// branch for an empty one and may read the wrong index for every read on
// it (measured: Links of a Record read the whole reverse index, 40 ms
// instead of 1) until autovacuum gets to it. A partition whose lock stays
// taken (an index build on it) past wait is left to autovacuum, whose
// threshold the copy has crossed.
func (c *Copier) analyze(ctx context.Context, a MaterializeArgs, tables []string, wait time.Duration) error {
	return analyzeDomain(ctx, c.Store, a.DomainID, tables, wait, func(part string) {
		c.log().WarnContext(ctx, "copy done; partition statistics left to autovacuum: its lock stayed taken",
			"domain_id", a.DomainID, "branch_id", a.BranchID, "partition", part, "waited", wait)
	})
}

// analyzeDomain runs ANALYZE of the partition of each of tables that holds
// rows of domainID (a table it has no row in is skipped), waiting for a
// partition's lock at most until wait has passed in all; a partition whose
// lock stays taken past it is passed to gaveUp and left.
func analyzeDomain(ctx context.Context, s *store.Store, domainID int32, tables []string, wait time.Duration, gaveUp func(part string)) error {
	deadline := time.Now().Add(wait)
	for _, t := range tables {
		var part string
		err := s.Pool.QueryRow(ctx, `SELECT tableoid::regclass::text FROM `+t+` WHERE domain_id = $1 LIMIT 1`, domainID).Scan(&part)
		if errors.Is(err, pgx.ErrNoRows) {
			continue
		}
		if err != nil {
			return fmt.Errorf("find the partition of %s: %w", t, err)
		}
		pause := 100 * time.Millisecond
		for {
			err := analyzePart(ctx, s, part)
			if err == nil {
				break
			}
			if !lockBusy(err) {
				return fmt.Errorf("analyze %s: %w", part, err)
			}
			left := time.Until(deadline)
			if left <= 0 {
				gaveUp(part)
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
func analyzePart(ctx context.Context, s *store.Store, part string) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
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

// batch runs one batch of lane l in its own transaction; done reports
// that the lane has copied its tables.
//
// The batch first takes the lane's advisory lock (copyLaneLockSQL: two
// runs of one copy never copy the same lane at once), then the copy's ref
// lock, then reads the lane's position. It stores the lane's position and
// adds its counts to the progress with one UPDATE of the ref, which
// computes them from the row it updates (the other lane's batch may have
// updated it since this one read it); the batch that finds every lane done
// marks the branch ready. A branch no longer copying by then (deleted
// meanwhile) updates nothing, and the batch rolls back.
func (r *copyRun) batch(ctx context.Context, l string, szp **sizer) (done bool, err error) {
	c, a := r.c, r.a
	solo := r.solo.Load()
	if solo {
		r.soloMu.Lock()
		defer r.soloMu.Unlock()
	}
	tx, err := c.Store.Pool.Begin(ctx)
	if err != nil {
		return false, fmt.Errorf("begin batch: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // after Commit this is a no-op
	pid := r.pids[l]
	pid.Store(int32(tx.Conn().PgConn().PID()))
	defer pid.Store(0)
	start := time.Now()
	d, dst := lit(int64(a.DomainID)), lit(int64(a.BranchID))
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+fmt.Sprintf(copyLaneLockSQL, d, dst, "'"+l+"'")+`)`); err != nil {
		return false, fmt.Errorf("lock lane %s: %w", l, err)
	}
	var state string
	var p copyProgress
	var raw []byte
	lock := "FOR KEY SHARE"
	if solo {
		lock = "FOR UPDATE"
	}
	err = tx.QueryRow(ctx, `SELECT state, progress FROM refs WHERE domain_id = $1 AND id = $2 `+lock, a.DomainID, a.BranchID).Scan(&state, &raw)
	if errors.Is(err, pgx.ErrNoRows) || (err == nil && state != store.StateCopying) {
		return true, errStopped
	}
	if err != nil {
		return false, fmt.Errorf("lock branch: %w", err)
	}
	if err := json.Unmarshal(raw, &p); err != nil {
		return false, fmt.Errorf("decode progress: %w", err)
	}
	if c.inBatch != nil {
		c.inBatch(l)
	}
	lp := p.Lanes[l]
	if lp == nil || p.Levels == nil {
		return false, fmt.Errorf("no position of lane %s in the progress", l)
	}
	if lp.Phase == PhaseDone {
		return true, nil
	}
	phases := laneNamed(l).phases
	k := -1
	for i, ph := range phases {
		if copyPhases[ph].name == lp.Phase {
			k = i
		}
	}
	if k < 0 {
		return false, fmt.Errorf("lane %s: unknown phase %q", l, lp.Phase)
	}
	phase := phases[k]
	if *szp == nil {
		*szp = newSizer(r.cfg, c.BatchRows, lp.BatchRows)
	}
	sz := *szp
	limit := sz.limit()
	var read, written int
	if lp.Level < len(p.Levels) {
		var last *cursor
		read, written, last, err = c.copyBatch(ctx, tx, a, copyPhases[phase].t, p.Levels, lp.Level, lp.After, limit)
		if err != nil {
			return false, fmt.Errorf("copy %s: %w", copyPhases[phase].name, err)
		}
		lp.After = last
	}
	if read < limit {
		// This level of this table is done: the next level, or the lane's
		// next table from the first level.
		lp.Level++
		lp.After = nil
		if lp.Level >= len(p.Levels) {
			lp.Level = 0
			if k+1 < len(phases) {
				lp.Phase = copyPhases[phases[k+1]].name
			} else {
				lp.Phase = PhaseDone
			}
		}
	}
	var waiters []int32
	if err := tx.QueryRow(ctx, copyWaitersSQL, r.lanePIDs()).Scan(&waiters); err != nil {
		return false, fmt.Errorf("check lock waits: %w", err)
	}
	contended := len(waiters) > 0
	if contended {
		r.solo.Store(true)
	}
	held := time.Since(start)
	sz.observe(read, held, contended)
	lp.BatchRows = sz.limit()
	lj, err := json.Marshal(lp)
	if err != nil {
		return false, fmt.Errorf("encode progress: %w", err)
	}
	var batches int
	err = tx.QueryRow(ctx, copyProgressSQL, a.DomainID, a.BranchID, l, lj, read, written, sz.contended, time.Now().UTC()).Scan(&batches, &state)
	if errors.Is(err, pgx.ErrNoRows) {
		return true, errStopped
	}
	if err != nil {
		return false, fmt.Errorf("store progress: %w", err)
	}
	if err := tx.Commit(ctx); err != nil {
		return false, fmt.Errorf("commit batch: %w", err)
	}
	if contended {
		if err := r.yield(ctx, waiters); err != nil {
			return false, err
		}
	}
	if c.AfterBatch != nil {
		st := BatchStats{Batch: batches, Phase: copyPhases[phase].name, Rows: read, Written: written, Limit: limit,
			Held: time.Since(start), Contended: contended}
		r.afterMu.Lock()
		err := c.AfterBatch(ctx, st)
		r.afterMu.Unlock()
		if err != nil {
			return false, err
		}
	}
	return lp.Phase == PhaseDone, nil
}

// lanePIDs are the backends of the lanes' batches under way.
func (r *copyRun) lanePIDs() []int32 {
	var pids []int32
	for _, p := range r.pids {
		if v := p.Load(); v != 0 {
			pids = append(pids, v)
		}
	}
	return pids
}

// copyWaitersSQL are the sessions other than the lanes' batches ($1, this
// one's among them) waiting for a lock one of them holds: commits waiting
// for the copy's ref lock. A commit finding the batches of both lanes
// holding the lock FOR KEY SHARE waits for one, then the other (and then
// for the batches that took it meanwhile): asked only for its own
// backend, the other lane's batch would not see it waiting.
const copyWaitersSQL = `SELECT coalesce(array_agg(pid), '{}') FROM pg_stat_activity
    WHERE pid <> ALL ($1::int[]) AND pg_blocking_pids(pid) && $1::int[]`

// wokenSQL reports whether one of the sessions $1 still holds the share
// lock of another transaction's id: a session waiting for a transaction
// to end (as a commit waits for a batch holding the ref lock) is granted
// that lock when the transaction ends, and releases it as soon as it
// runs again. pg_locks, unlike the wait columns of pg_stat_activity,
// shows every role's sessions to any role.
const wokenSQL = `SELECT EXISTS (SELECT 1 FROM pg_locks
    WHERE pid = ANY ($1::int[]) AND locktype = 'transactionid' AND mode = 'ShareLock' AND granted)`

// yieldWait bounds how long a lane waits for woken commits to run.
const yieldWait = 250 * time.Millisecond

// yield waits, after a batch a commit waited for, until the commits it
// woke have run (at most yieldWait), the lane's turn held (soloMu). A row
// lock is not queued: a commit woken when the batch ended must still
// re-read the ref row, and on a busy machine the lane's next batch would
// often lock it first, FOR UPDATE or not, and the commit wait again,
// batch after batch. Once a woken commit holds the row, the next batch
// waits for it. Measured (TestACommitDoesNotWaitForEveryBatchOfTheLanes,
// runs on 2 cores beside 2 busy processes): with the batches asking for
// their own backend only and no yield, 6 batches began while a commit
// waited in 2 runs of 80; with both, 5 in 1 run of 160, at most 3 in the
// others.
func (r *copyRun) yield(ctx context.Context, waiters []int32) error {
	deadline := time.Now().Add(yieldWait)
	for {
		var woken bool
		if err := r.c.Store.Pool.QueryRow(ctx, wokenSQL, waiters).Scan(&woken); err != nil {
			return fmt.Errorf("check woken commits: %w", err)
		}
		if !woken || time.Now().After(deadline) {
			return nil
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(time.Millisecond):
		}
	}
}

// copyLaneLockSQL is the key of a copy lane's advisory lock (Domain,
// branch, lane), which each batch of the lane takes.
const copyLaneLockSQL = `hashtextextended('lorebase.copy:' || %s || ':' || %s || ':' || %s, 0)`

// copyProgressSQL stores a lane's batch in the progress of the copy
// ($1, $2): the lane's ($3) position ($4), the rows read ($5) and written
// ($6) and the batch added to the counts, whether a commit waited ($7);
// once every lane is done, the branch is ready, finished at $8. It returns
// the batches so far and the branch's state; no row when the branch is no
// longer copying.
const copyProgressSQL = `UPDATE refs SET (progress, state) = (
  SELECT CASE WHEN s.done
              THEN (s.p - 'levels') || jsonb_build_object('phase', 'done', 'finished_at', $8::timestamptz)
              ELSE s.p END,
         CASE WHEN s.done THEN 'ready' ELSE refs.state END
    FROM (SELECT q.p, NOT EXISTS (SELECT 1 FROM jsonb_each(q.p -> 'lanes') e WHERE e.value ->> 'phase' <> 'done') AS done
            FROM (SELECT jsonb_set(refs.progress, ARRAY['lanes', $3::text], $4::jsonb)
                         || jsonb_build_object(
                              'read', coalesce((refs.progress ->> 'read')::bigint, 0) + $5::bigint,
                              'copied', coalesce((refs.progress ->> 'copied')::bigint, 0) + $6::bigint,
                              'batches', coalesce((refs.progress ->> 'batches')::int, 0) + 1,
                              'contended', coalesce((refs.progress ->> 'contended')::boolean, false) OR $7::boolean) AS p) q) s)
 WHERE domain_id = $1 AND id = $2 AND state = 'copying'
RETURNING (progress ->> 'batches')::int, state`

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
