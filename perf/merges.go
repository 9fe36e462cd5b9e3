package perf

import (
	"context"
	"fmt"
	"io"
	"sync"
	"time"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/store"
)

// MergeRun is one Proposal of N Part updates on an overlay of main, from
// opening to merge.
type MergeRun struct {
	Changes int `json:"changes"`
	// Open is the request time of opening the Proposal (it computes the
	// summary and conflicts); Merge the merge through the engine.
	Open  time.Duration `json:"open_ns"`
	Merge time.Duration `json:"merge_ns"`
	// Show is a Proposal show with its computation cached; DiffPage a diff
	// page of 100 changes (from the start and after a random key).
	Show     *Stats `json:"show,omitempty"`
	DiffPage *Stats `json:"diff_page,omitempty"`
	// MainGets are gets by key on main made while the merge ran.
	MainGets *Stats `json:"main_gets,omitempty"`
}

// Merges is the Proposal measurement of a run.
type Merges struct {
	Runs   []MergeRun `json:"runs"`
	Errors []string   `json:"errors,omitempty"`
}

// MergeOptions tune MeasureMerges.
type MergeOptions struct {
	// Sizes are the Proposal sizes (changes) measured, one Proposal each.
	Sizes   []int
	Harness Harness
	Log     io.Writer
}

// MeasureMerges opens and merges one Proposal per size into main: an
// overlay of main with that many Part updates, then show, diff pages and
// the merge, with gets on main timed while the merge runs. Every call goes
// through package merge as lorebase_app, as Keeper's routes do.
func (w *Workload) MeasureMerges(ctx context.Context, opts MergeOptions) (*Merges, error) {
	e := merge.New(w.Store, w.Pipeline)
	out := &Merges{}
	noJobs := store.BranchJobs{}
	for i, n := range opts.Sizes {
		name := fmt.Sprintf("perf/merge-%d-%d", n, time.Now().UnixNano())
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "bench: merge of %d changes\n", n)
		}
		if _, err := w.Store.CreateBranch(ctx, w.DomainID, store.CreateBranchRequest{Name: name, From: Branch, Mode: store.ModeOverlay}, noJobs); err != nil {
			return nil, fmt.Errorf("create %s: %w", name, err)
		}
		changes, err := w.PartUpdates(w.rand(uint64(700+i)), n)
		if err != nil {
			return nil, err
		}
		for from := 0; from < len(changes); from += 10000 {
			batch := changes[from:min(from+10000, len(changes))]
			if _, err := w.Pipeline.Commit(ctx, w.DomainID, name, &commit.Request{Message: "perf merge", Author: "perf", Changes: batch}, ""); err != nil {
				return nil, fmt.Errorf("commit to %s: %w", name, err)
			}
		}
		run := MergeRun{Changes: len(changes)}
		start := time.Now()
		p, err := e.Open(ctx, w.DomainID, &merge.OpenRequest{Title: name, Source: name, Target: Branch}, "perf")
		if err != nil {
			return nil, fmt.Errorf("open proposal of %s: %w", name, err)
		}
		run.Open = time.Since(start)
		show, err := opts.Harness.Time(ctx, func(ctx context.Context) error {
			_, _, err := e.Show(ctx, w.DomainID, p.ID)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("show proposal: %w", err)
		}
		run.Show = &show
		keys := make([]string, len(changes))
		for j, c := range changes {
			keys[j] = c.Key
		}
		r := w.rand(uint64(800 + i))
		diff, err := opts.Harness.Time(ctx, func(ctx context.Context) error {
			after := ""
			if r.IntN(2) == 1 {
				after = keys[r.IntN(len(keys))]
			}
			_, err := e.DiffBranches(ctx, w.DomainID, name, Branch, after, 100)
			return err
		})
		if err != nil {
			return nil, fmt.Errorf("diff page: %w", err)
		}
		run.DiffPage = &diff

		// Gets on main while the merge runs.
		stop := make(chan struct{})
		var wg sync.WaitGroup
		var gets []time.Duration
		wg.Add(1)
		go func() {
			defer wg.Done()
			kc := w.keys(uint64(900 + i))
			for {
				select {
				case <-stop:
					return
				default:
				}
				k := kc.take()
				t0 := time.Now()
				if _, err := w.Reader.Get(ctx, w.DomainID, Branch, k.key, ""); err == nil {
					gets = append(gets, time.Since(t0))
				}
			}
		}()
		start = time.Now()
		_, err = e.MergeProposal(ctx, w.DomainID, p.ID, &merge.MergeRequest{}, "perf")
		run.Merge = time.Since(start)
		close(stop)
		wg.Wait()
		if err != nil {
			out.Errors = append(out.Errors, fmt.Sprintf("merge of %d changes: %v", n, err))
			continue
		}
		if len(gets) > 0 {
			s := Summarize(gets)
			run.MainGets = &s
		}
		out.Runs = append(out.Runs, run)
	}
	return out, nil
}

func (r *Report) writeMerges(p func(string, ...any)) {
	m := r.Merges
	p("")
	p("## Proposals and merges (milliseconds)")
	p("")
	if m == nil {
		p("Not measured: %s.", orDash(r.MergesSkipped))
		return
	}
	p("One Proposal per size: an overlay of main with that many Part updates, merged into main. Calls through package merge as lorebase_app; show is cached (heads unchanged), a diff page holds 100 changes; gets by key on main run in a loop while the merge runs.")
	p("")
	p("| Changes | open | show p50 | show p95 | diff page p50 | diff page p95 | merge | main gets during merge (n, p50, p95) |")
	p("| ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, run := range m.Runs {
		gets := "—"
		if run.MainGets != nil {
			gets = fmt.Sprintf("%d, %s, %s", run.MainGets.N, ms(run.MainGets.P50), ms(run.MainGets.P95))
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |", thousands(int64(run.Changes)), ms(run.Open), stat(run.Show, 50), stat(run.Show, 95),
			stat(run.DiffPage, 50), stat(run.DiffPage, 95), ms(run.Merge), gets)
	}
	for _, e := range m.Errors {
		p("- failed: %s", e)
	}
}
