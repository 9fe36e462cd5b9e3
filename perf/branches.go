package perf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// JobRun is one run of a background branch job, timed batch by batch.
type JobRun struct {
	Total   time.Duration `json:"total_ns"`
	Batches int           `json:"batches"`
	// Rows read and written (copied or deleted) by the batches.
	Rows    int64   `json:"rows"`
	Written int64   `json:"written"`
	PerSec  float64 `json:"rows_per_second"`
	// Batch is the time each batch held its transaction.
	Batch Stats `json:"batch"`
	// Contended counts the batches a commit waited for.
	Contended int `json:"contended"`
}

// PairedResult is one read on the overlay and on the copy, call by call on
// the same inputs, alternating which branch reads first.
type PairedResult struct {
	Name    string        `json:"name"`
	Target  time.Duration `json:"target_ns,omitempty"`
	Overlay *Stats        `json:"overlay,omitempty"`
	Copy    *Stats        `json:"copy,omitempty"`
	Error   string        `json:"error,omitempty"`
}

// OverlayEffect is a read of main before and after the Domain got many
// overlays.
type OverlayEffect struct {
	Name   string `json:"name"`
	Before *Stats `json:"before,omitempty"`
	After  *Stats `json:"after,omitempty"`
	Error  string `json:"error,omitempty"`
}

// Branches is the branch measurement of a run. A step that failed leaves
// its fields empty and says why in Errors.
type Branches struct {
	// OverlayCreate is the request time of the first overlays (Runs of them).
	OverlayCreate *Stats `json:"overlay_create,omitempty"`
	// ManyOverlays is the request time of the overlays created for
	// OverlayEffects; ManyOverlayCommits the commits made on them.
	ManyOverlays       *Stats `json:"many_overlays,omitempty"`
	ManyOverlayCommits *Stats `json:"many_overlay_commits,omitempty"`
	// CopyRequest is the request time of the copy branch; Copy its
	// background copy (the store.materialize job's code), CopyIndexes the
	// per-Attribute index builds queued with it.
	CopyRequest time.Duration `json:"copy_request_ns,omitempty"`
	Copy        *JobRun       `json:"copy,omitempty"`
	CopyIndexes time.Duration `json:"copy_indexes_ns,omitempty"`
	// Commits are the commits made on both branches and main before the
	// paired reads, by name.
	Commits []Result `json:"commits,omitempty"`
	// Paired are the reads on the overlay and on Against (the copy, or
	// main when the copy was left out).
	Paired []PairedResult `json:"paired,omitempty"`
	// Answers compare the reads' answers on the overlay and on Against:
	// after the same commit on both when Against is the copy, before any
	// commit when it is main (main's commits are not the overlay's).
	Answers []AnswerCheck `json:"answers,omitempty"`
	Against string        `json:"against,omitempty"`
	// OverlayEffects are reads of main with 0 and with ManyCount overlays.
	OverlayEffects []OverlayEffect `json:"overlay_effects,omitempty"`
	ManyCount      int             `json:"many_count"`
	// DeleteRequest is the request time of deleting Deleted (the copy, or
	// the overlay when the copy was left out); Delete its background
	// deletion (the store.branch_delete job's code).
	Deleted       string        `json:"deleted,omitempty"`
	DeleteRequest time.Duration `json:"delete_request_ns,omitempty"`
	Delete        *JobRun       `json:"delete,omitempty"`
	Errors        []string      `json:"errors,omitempty"`
}

// BranchOptions choose the branch measurement.
type BranchOptions struct {
	// Runs is the number of overlays whose creation is timed (20).
	Runs int
	// Many is the number of overlays for the main-read comparison (1,000).
	Many int
	// SkipCopy leaves the copy branch out (a dataset whose copy would not
	// fit on the disk): the overlay is then read against main, its base,
	// and the deletion measured is the overlay's.
	SkipCopy bool
	// CommitChanges is the size of the commits before the paired reads (1,000).
	CommitChanges int
	// AnswerCalls is the number of calls of each read whose answers on
	// the overlay and on the copy (or main) are compared (20).
	AnswerCalls int
	// Harness times the paired reads and main's reads (its Warmup and
	// Iterations).
	Harness Harness
	Log     io.Writer
}

// branchRun is one branch measurement. The background jobs run in-process: the code of
// the store.materialize and store.branch_delete workers, called right after
// the request that queued them (the River jobs stay queued, unworked).
type branchRun struct {
	w    *Workload
	q    store.BranchJobs
	opts BranchOptions
	out  *Branches
	// prefix starts the names of the run's branches (perf/<time>/), so a
	// run on a database measured before (--in-place) creates new ones.
	prefix string
}

// MeasureBranches measures branch creation and deletion, the background
// copy and delete jobs, the overlay against the copy call by call, and
// main's reads with many overlays. The requests queue their jobs with an
// insert-only River client (Keeper queues through its one River client).
func (w *Workload) MeasureBranches(ctx context.Context, opts BranchOptions) (*Branches, error) {
	if opts.Runs <= 0 {
		opts.Runs = 20
	}
	if opts.CommitChanges <= 0 {
		opts.CommitChanges = 1000
	}
	client, err := jobs.NewClient(w.Store.Pool, nil, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		return nil, fmt.Errorf("branches: %w", err)
	}
	b := &branchRun{w: w, q: jobs.Queue(client), opts: opts, out: &Branches{ManyCount: opts.Many, Against: "copy", Deleted: "copy"},
		prefix: "perf/" + time.Now().UTC().Format("20060102T150405.000") + "/"}
	type step struct {
		name string
		fn   func(context.Context) error
	}
	steps := []step{
		{"overlay creation", b.overlays},
		{"copy creation and background copy", b.copy},
		{"the overlay to read", b.readOverlay},
		{"commits on the overlay, the copy and main", b.commits},
		{"the overlay's answers against the copy's", b.answers},
		{"overlay against copy", b.paired},
		{"copy deletion", b.deleteBranch},
		{"main with many overlays", b.many},
	}
	if opts.SkipCopy {
		b.out.Against, b.out.Deleted = "main", "overlay"
		steps = []step{
			{"overlay creation", b.overlays},
			{"the overlay to read", b.readOverlay},
			{"the overlay's answers against main's, before any commit", b.answers},
			{"commits on the overlay and main", b.commits},
			{"overlay against main", b.paired},
			{"overlay deletion", b.deleteBranch},
			{"main with many overlays", b.many},
		}
	}
	for _, st := range steps {
		if err := st.fn(ctx); err != nil {
			if ctx.Err() != nil {
				return b.out, ctx.Err()
			}
			b.out.Errors = append(b.out.Errors, fmt.Sprintf("%s: %v", st.name, err))
			b.logf("perf: branches: %s failed: %v", st.name, err)
		}
	}
	return b.out, nil
}

func (b *branchRun) overlayBranch() string { return b.prefix + "overlay" }

func (b *branchRun) copyBranch() string { return b.prefix + "copy" }

// againstBranch is the branch the overlay is read against: the copy, or
// main when the copy is left out.
func (b *branchRun) againstBranch() string {
	if b.opts.SkipCopy {
		return Branch
	}
	return b.copyBranch()
}

// deletedBranch is the branch whose deletion is measured.
func (b *branchRun) deletedBranch() string {
	if b.opts.SkipCopy {
		return b.overlayBranch()
	}
	return b.copyBranch()
}

func (b *branchRun) logf(format string, args ...any) {
	if b.opts.Log != nil {
		fmt.Fprintf(b.opts.Log, format+"\n", args...)
	}
}

func (b *branchRun) create(ctx context.Context, name, mode string) (*store.BranchInfo, time.Duration, error) {
	start := time.Now()
	info, err := b.w.Store.CreateBranch(ctx, b.w.DomainID, store.CreateBranchRequest{Name: name, From: Branch, Mode: mode}, b.q)
	return info, time.Since(start), err
}

func (b *branchRun) overlays(ctx context.Context) error {
	lat := make([]time.Duration, 0, b.opts.Runs)
	for i := range b.opts.Runs {
		_, d, err := b.create(ctx, fmt.Sprintf("%soverlay-%03d", b.prefix, i), store.ModeOverlay)
		if err != nil {
			return err
		}
		lat = append(lat, d)
	}
	st := Summarize(lat)
	b.out.OverlayCreate = &st
	b.logf("perf: overlay creation p50 %s p95 %s (%d runs)", ms(st.P50), ms(st.P95), st.N)
	return nil
}

func (b *branchRun) copy(ctx context.Context) error {
	info, d, err := b.create(ctx, b.copyBranch(), store.ModeCopy)
	if err != nil {
		return err
	}
	b.out.CopyRequest = d
	b.logf("perf: copy request %s ms; copying", ms(d))
	var batches []time.Duration
	run := &JobRun{}
	c := &jobs.Copier{Store: b.w.Store, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		batches = append(batches, st.Held)
		run.Rows += int64(st.Rows)
		run.Written += int64(st.Written)
		if st.Contended {
			run.Contended++
		}
		return nil
	}}
	start := time.Now()
	if err := c.Run(ctx, jobs.MaterializeArgs{DomainID: b.w.DomainID, BranchID: info.ID}); err != nil {
		return err
	}
	run.Total = time.Since(start)
	run.Batches = len(batches)
	run.Batch = Summarize(batches)
	run.PerSec = float64(run.Written) / run.Total.Seconds()
	b.out.Copy = run
	var state string
	if err := b.w.Store.Pool.QueryRow(ctx, `SELECT state FROM refs WHERE domain_id = $1 AND id = $2`, b.w.DomainID, info.ID).Scan(&state); err != nil {
		return fmt.Errorf("read copy state: %w", err)
	}
	if state != store.StateReady {
		return fmt.Errorf("the copy is %s after its job, not ready", state)
	}
	b.logf("perf: background copy %s, %d batches, %d rows written, %.0f rows/s, batch p95 %s ms",
		run.Total.Round(time.Millisecond), run.Batches, run.Written, run.PerSec, ms(run.Batch.P95))
	start = time.Now()
	if err := buildBranchIndexes(ctx, b.w, info.ID); err != nil {
		return err
	}
	b.out.CopyIndexes = time.Since(start)
	return nil
}

// readOverlay creates the overlay the paired reads use (after the copy, so
// both start from the same head of main).
func (b *branchRun) readOverlay(ctx context.Context) error {
	_, _, err := b.create(ctx, b.overlayBranch(), store.ModeOverlay)
	return err
}

// buildBranchIndexes builds the per-Attribute indexes of a branch's schema
// (what the store.index jobs queued with a copy do).
func buildBranchIndexes(ctx context.Context, w *Workload, branchID int32) error {
	var compiled []byte
	err := w.Store.Pool.QueryRow(ctx, `SELECT compiled FROM schemas WHERE domain_id = $1 AND branch_id = $2`, w.DomainID, branchID).Scan(&compiled)
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	var sc schema.Schema
	if err := json.Unmarshal(compiled, &sc); err != nil {
		return fmt.Errorf("decode schema: %w", err)
	}
	for _, a := range jobs.IndexBuildsForSchema(nil, &sc) {
		a.DomainID, a.BranchID = w.DomainID, branchID
		if err := jobs.BuildIndex(ctx, w.Store, a); err != nil {
			return fmt.Errorf("index %s.%s: %w", a.KindName, a.Attribute, err)
		}
	}
	if _, err := w.Store.Pool.Exec(ctx, "ANALYZE mat_records", pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	return nil
}

// commits makes the same commit of CommitChanges Part updates on the overlay
// and on the copy (unless it is left out), and CommitChanges other Part
// updates on main.
func (b *branchRun) commits(ctx context.Context) error {
	r := b.w.rand(77)
	same, err := b.w.PartUpdates(r, b.opts.CommitChanges)
	if err != nil {
		return err
	}
	other, err := b.w.PartUpdates(r, b.opts.CommitChanges)
	if err != nil {
		return err
	}
	var errs []error
	type target struct {
		label, branch string
		changes       []commit.Change
	}
	targets := []target{{"the overlay", b.overlayBranch(), same}, {"the copy", b.copyBranch(), same}, {"main", Branch, other}}
	if b.opts.SkipCopy {
		targets = []target{targets[0], targets[2]}
	}
	for _, c := range targets {
		start := time.Now()
		_, err := b.w.Pipeline.Commit(ctx, b.w.DomainID, c.branch, &commit.Request{
			Message: fmt.Sprintf("perf: update %d parts", len(c.changes)), Author: "perf:bench", Changes: c.changes,
		}, "")
		d := time.Since(start)
		res := Result{Name: fmt.Sprintf("commit of %d Part updates on %s", len(c.changes), c.label)}
		if err != nil {
			res.RLSError = err.Error()
			errs = append(errs, fmt.Errorf("on %s: %w", c.label, err))
		} else {
			res.RLS = &Stats{N: 1, P50: d, P95: d, P99: d, Mean: d, Min: d, Max: d}
		}
		b.out.Commits = append(b.out.Commits, res)
	}
	if _, err := b.w.Store.Pool.Exec(ctx, "ANALYZE mat_records", pgx.QueryExecModeSimpleProtocol); err != nil {
		errs = append(errs, err)
	}
	return errors.Join(errs...)
}

// paired runs each read on the overlay and the copy (or main) call by call
// with the same inputs, alternating which branch reads first.
func (b *branchRun) paired(ctx context.Context) error {
	ov, cp := b.w.ReadsOn(b.overlayBranch()), b.w.ReadsOn(b.againstBranch())
	h := b.opts.Harness
	for i := range ov {
		pr := PairedResult{Name: ov[i].Name, Target: ov[i].Target}
		var lo, lc []time.Duration
		var err error
		start, capped := h.now(), false
		for call := 0; call < h.Warmup+h.Iterations && err == nil; call++ {
			if len(lo) > 0 && h.over(start) {
				capped = true
				break
			}
			first, second := ov[i].RLS, cp[i].RLS
			if call%2 == 1 {
				first, second = second, first
			}
			var d1, d2 time.Duration
			if d1, err = timed(ctx, first); err != nil {
				break
			}
			if d2, err = timed(ctx, second); err != nil {
				break
			}
			if call%2 == 1 {
				d1, d2 = d2, d1
			}
			if call >= h.Warmup {
				lo, lc = append(lo, d1), append(lc, d2)
			}
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			pr.Error = err.Error()
		} else {
			so, sc := Summarize(lo), Summarize(lc)
			so.Capped, sc.Capped = capped, capped
			pr.Overlay, pr.Copy = &so, &sc
			b.logf("perf: %-40s overlay p50 %s p95 %s | copy p50 %s p95 %s", pr.Name, ms(so.P50), ms(so.P95), ms(sc.P50), ms(sc.P95))
		}
		b.out.Paired = append(b.out.Paired, pr)
	}
	return nil
}

func timed(ctx context.Context, fn func(context.Context) error) (time.Duration, error) {
	start := time.Now()
	err := fn(ctx)
	return time.Since(start), err
}

func (b *branchRun) deleteBranch(ctx context.Context) error {
	id, err := branchIDOf(ctx, b.w.Store, b.w.DomainID, b.deletedBranch())
	if err != nil {
		return fmt.Errorf("find the %s: %w", b.out.Deleted, err)
	}
	start := time.Now()
	if err := b.w.Store.DeleteBranch(ctx, b.w.DomainID, b.deletedBranch(), b.q); err != nil {
		return err
	}
	b.out.DeleteRequest = time.Since(start)
	var batches []time.Duration
	run := &JobRun{}
	dl := &jobs.Deleter{Store: b.w.Store, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		batches = append(batches, st.Held)
		run.Rows += int64(st.Rows)
		run.Written += int64(st.Written)
		if st.Contended {
			run.Contended++
		}
		return nil
	}}
	start = time.Now()
	if err := dl.Run(ctx, jobs.BranchDeleteArgs{DomainID: b.w.DomainID, BranchID: id}); err != nil {
		return err
	}
	run.Total = time.Since(start)
	run.Batches = len(batches)
	run.Batch = Summarize(batches)
	run.PerSec = float64(run.Written) / run.Total.Seconds()
	b.out.Delete = run
	b.logf("perf: delete request %s ms; background delete %s, %d batches, %d rows, batch p95 %s ms",
		ms(b.out.DeleteRequest), run.Total.Round(time.Millisecond), run.Batches, run.Written, ms(run.Batch.P95))
	return nil
}

// many measures main's get by key and full-text search, then creates Many
// overlays, each with one commit of one Part update, and measures them
// again on the same inputs.
func (b *branchRun) many(ctx context.Context) error {
	if b.opts.Many <= 0 {
		return nil
	}
	pick := func() []Op {
		var out []Op
		for _, op := range b.w.ReadsOn(Branch) {
			if op.Name == "get by key" || op.Name == "full-text search" {
				out = append(out, op)
			}
		}
		return out
	}
	h := b.opts.Harness
	before := pick()
	effects := make([]OverlayEffect, len(before))
	for i, op := range before {
		effects[i].Name = op.Name
		st, err := h.Time(ctx, op.RLS)
		if err != nil {
			effects[i].Error = err.Error()
			continue
		}
		effects[i].Before = &st
	}
	r := b.w.rand(78)
	var lat, commits []time.Duration
	var commitErr error
	for i := range b.opts.Many {
		name := fmt.Sprintf("%sagent-%04d", b.prefix, i)
		_, d, err := b.create(ctx, name, store.ModeOverlay)
		if err != nil {
			return fmt.Errorf("overlay %d: %w", i+1, err)
		}
		lat = append(lat, d)
		if commitErr != nil {
			continue
		}
		changes, err := b.w.PartUpdates(r, 1)
		if err != nil {
			return err
		}
		start := time.Now()
		_, commitErr = b.w.Pipeline.Commit(ctx, b.w.DomainID, name, &commit.Request{
			Message: "perf: agent task", Author: "perf:bench", Changes: changes}, "")
		if commitErr == nil {
			commits = append(commits, time.Since(start))
		}
	}
	st := Summarize(lat)
	b.out.ManyOverlays = &st
	if len(commits) > 0 {
		cs := Summarize(commits)
		b.out.ManyOverlayCommits = &cs
	}
	b.logf("perf: %d overlays created, p50 %s p95 %s", st.N, ms(st.P50), ms(st.P95))
	if _, err := b.w.Store.Pool.Exec(ctx, "ANALYZE", pgx.QueryExecModeSimpleProtocol); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	for i, op := range pick() {
		st, err := h.Time(ctx, op.RLS)
		if err != nil {
			effects[i].Error = err.Error()
			continue
		}
		effects[i].After = &st
		if effects[i].Before != nil {
			b.logf("perf: main %-20s p50 %s with 0 overlays, %s with %d", op.Name, ms(effects[i].Before.P50), ms(st.P50), b.opts.Many)
		}
	}
	b.out.OverlayEffects = effects
	if commitErr != nil {
		return fmt.Errorf("commit on an overlay: %w", commitErr)
	}
	return nil
}
