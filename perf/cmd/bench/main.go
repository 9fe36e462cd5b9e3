// Command bench measures Lorebase on the supply Domain: it loads the
// dataset (or copies a kept seed database), builds the per-Attribute
// indexes, measures the floor, every read of design section 6 as the owner
// and as lorebase_app, and commits of 1,000 and 10,000 changes, then writes
// a Markdown report and a JSON file beside it, for example:
//
//	go run ./perf/cmd/bench --scale 540 --extra-links 4 --out docs/perf/perf-100k.md
//
// docs/perf-harness.md describes the flags.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
		os.Exit(1)
	}
}

func run() error {
	var f perf.CommonFlags
	fs := flag.NewFlagSet("bench", flag.ExitOnError)
	f.Register(fs)
	iterations := fs.Int("iterations", 300, "timed calls per read and role")
	warmup := fs.Int("warmup", 30, "warm-up calls per read and role")
	writeRuns := fs.Int("write-iterations", 5, "timed commits per write operation (after one warm-up commit)")
	benchSeed := fs.Uint64("bench-seed", 7, "seed of the random keys and queries")
	out := fs.String("out", "", "Markdown report path; the JSON goes beside it (.json); default: stdout only")
	_ = fs.Parse(os.Args[1:])

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	command := "go run ./perf/cmd/bench " + strings.Join(os.Args[1:], " ")

	srv, err := perf.OpenServer(ctx, f.ServerOptions())
	if err != nil {
		return err
	}
	defer srv.Close()
	fx, err := srv.Fixture(ctx, perf.FixtureOptions{
		Load:         perf.LoadOptions{Supply: f.SupplyConfig(), BatchSize: f.BatchSize, Progress: os.Stderr},
		SeedDatabase: f.SeedDatabase,
		Database:     f.Database,
		Keep:         f.Keep,
		Log:          os.Stderr,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := fx.Drop(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(os.Stderr, "bench: drop fixture:", err)
		}
	}()

	s, err := store.Open(ctx, fx.URL, store.Config{MaxConns: 4})
	if err != nil {
		return err
	}
	defer s.Close()
	gen, err := supply.New(f.SupplyConfig())
	if err != nil {
		return err
	}
	w, err := perf.NewWorkload(ctx, s, gen, *benchSeed, *warmup+*iterations)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "bench: building per-Attribute indexes")
	idx, err := w.BuildIndexes(ctx)
	if err != nil {
		return err
	}
	rep := &perf.Report{At: time.Now(), Command: command, Machine: perf.ReadMachine(), Load: fx.Load, FromSeed: fx.FromSeed,
		IndexBuild: idx, Warmup: *warmup, Iterations: *iterations, NotMeasured: perf.PendingReads()}
	if rep.Postgres, err = perf.ReadPostgres(ctx, s); err != nil {
		return err
	}
	if rep.Dataset, err = perf.ReadDataset(ctx, s, w.DomainID); err != nil {
		return err
	}
	rep.Dataset.Seed, rep.Dataset.Scale, rep.Dataset.ExtraLinks = f.Seed, f.Scale, f.ExtraLinks

	h := perf.Harness{Warmup: *warmup, Iterations: *iterations, Log: os.Stderr}
	floor, err := h.Run(ctx, []perf.Op{w.Floor()}, nil)
	if err != nil {
		return err
	}
	rep.Floor = floor[0]
	if rep.Reads, err = h.Run(ctx, w.Reads(), &rep.Floor); err != nil {
		return err
	}
	hw := perf.Harness{Warmup: 1, Iterations: *writeRuns, Log: os.Stderr}
	writes := []perf.Op{w.CommitParts(1000, 0)}
	if big := w.CommitParts(10000, 5*time.Second); big.Name != writes[0].Name {
		writes = append(writes, big)
	}
	if rep.Writes, err = hw.Run(ctx, writes, nil); err != nil {
		return err
	}

	if *out == "" {
		return rep.WriteMarkdown(os.Stdout)
	}
	if err := os.MkdirAll(filepath.Dir(*out), 0o755); err != nil {
		return fmt.Errorf("create report directory: %w", err)
	}
	if err := writeFile(*out, rep.WriteMarkdown); err != nil {
		return err
	}
	jsonPath := strings.TrimSuffix(*out, filepath.Ext(*out)) + ".json"
	if err := writeFile(jsonPath, rep.WriteJSON); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s and %s\n", *out, jsonPath)
	return nil
}

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := write(f); err != nil {
		f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	return f.Close()
}
