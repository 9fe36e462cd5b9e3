// Command planaudit calls each read of the supply Domain many times in one
// session per branch, with auto_explain's nested plans, and reports the
// statements whose plan changes from the sixth call (PostgreSQL's kept
// generic plans) and the reads' timings under plan_cache_mode auto against
// force_custom_plan:
//
//	go run ./perf/cmd/planaudit --database-url postgres://postgres@.../copy --scale 5406 \
//	    --branches main,audit-overlay,audit-copy --calls 25 --out plans.md
//
// The database is a loaded supply Domain (a copy of a seed database); the
// URL is a superuser's (auto_explain is loaded per session). Branches
// named --overlay and --copy are created (the copy materialized and
// indexed) when missing, with the same commit of Part updates on both.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"os/signal"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "planaudit:", err)
		os.Exit(1)
	}
}

func run() error {
	url := flag.String("database-url", "", "database holding the loaded supply Domain (a superuser's URL)")
	scale := flag.Int("scale", 5406, "dataset scale the database was loaded with")
	extra := flag.Int("extra-links", 4, "extra Links per Part the database was loaded with")
	seed := flag.Uint64("seed", 1, "dataset seed")
	benchSeed := flag.Uint64("bench-seed", 7, "seed of the keys and queries")
	calls := flag.Int("calls", 25, "calls of each read in one session")
	branches := flag.String("branches", "main", "comma-separated branches to read")
	overlay := flag.String("overlay", "audit-overlay", "overlay branch created when missing (empty: none)")
	copyBr := flag.String("copy", "audit-copy", "copy branch created when missing (empty: none)")
	only := flag.String("reads", "", "comma-separated reads to audit (empty: all)")
	out := flag.String("out", "", "report path (default stdout)")
	flag.Parse()
	if *url == "" {
		return errors.New("--database-url is required")
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	s, err := store.Open(ctx, *url, store.Config{MaxConns: 2})
	if err != nil {
		return err
	}
	defer s.Close()
	gen, err := supply.New(supply.Config{Seed: *seed, Scale: *scale, ExtraLinks: *extra})
	if err != nil {
		return err
	}
	w, err := perf.NewWorkload(ctx, s, gen, *benchSeed, *calls)
	if err != nil {
		return err
	}
	if _, err := w.BuildIndexes(ctx); err != nil {
		return err
	}
	if err := ensureBranches(ctx, w, *overlay, *copyBr); err != nil {
		return err
	}
	var reads []string
	if *only != "" {
		reads = strings.Split(*only, ",")
	}
	runs, err := w.AuditPlans(ctx, perf.PlanAuditOptions{URL: *url, Branches: strings.Split(*branches, ","),
		Reads: reads, Calls: *calls, Log: os.Stderr})
	if err != nil {
		return err
	}
	if *out == "" {
		perf.WritePlanAudit(os.Stdout, runs)
		return nil
	}
	f, err := os.Create(*out)
	if err != nil {
		return err
	}
	perf.WritePlanAudit(f, runs)
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", *out, err)
	}
	return nil
}

// ensureBranches creates the overlay and the copy when missing, with the
// same commit of Part updates on each.
func ensureBranches(ctx context.Context, w *perf.Workload, overlay, copyBr string) error {
	rows, err := w.Store.Pool.Query(ctx, `SELECT name FROM refs WHERE domain_id = $1`, w.DomainID)
	if err != nil {
		return fmt.Errorf("list branches: %w", err)
	}
	names, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return fmt.Errorf("list branches: %w", err)
	}
	has := map[string]bool{}
	for _, n := range names {
		has[n] = true
	}
	client, err := jobs.NewClient(w.Store.Pool, nil, nil, slog.New(slog.DiscardHandler))
	if err != nil {
		return err
	}
	q := jobs.Queue(client)
	changes, err := w.PartUpdates(rand.New(rand.NewPCG(w.Seed, 77)), 1000)
	if err != nil {
		return err
	}
	for _, b := range []struct{ name, mode string }{{overlay, store.ModeOverlay}, {copyBr, store.ModeCopy}} {
		if b.name == "" || has[b.name] {
			continue
		}
		info, err := w.Store.CreateBranch(ctx, w.DomainID, store.CreateBranchRequest{Name: b.name, From: perf.Branch, Mode: b.mode}, q)
		if err != nil {
			return fmt.Errorf("create %s: %w", b.name, err)
		}
		if b.mode == store.ModeCopy {
			fmt.Fprintf(os.Stderr, "planaudit: copying main to %s\n", b.name)
			c := &jobs.Copier{Store: w.Store}
			if err := c.Run(ctx, jobs.MaterializeArgs{DomainID: w.DomainID, BranchID: info.ID}); err != nil {
				return fmt.Errorf("copy %s: %w", b.name, err)
			}
			if err := perf.BuildSchemaIndexes(ctx, w.Store, w.DomainID, info.ID); err != nil {
				return err
			}
		}
		if _, err := w.Pipeline.Commit(ctx, w.DomainID, b.name, &commit.Request{
			Message: "audit: update 1000 parts", Author: "perf:planaudit", Changes: changes}, ""); err != nil {
			return fmt.Errorf("commit on %s: %w", b.name, err)
		}
	}
	_, err = w.Store.Pool.Exec(ctx, "ANALYZE mat_records")
	return err
}
