// Command supply loads the supply Domain of the perf harness into a
// database through the commit pipeline (resuming an interrupted load), for
// example:
//
//	go run ./perf/cmd/supply --scale 540 --extra-links 4 --seed-database perf_seed_100k --database-url postgres://...
//
// With --seed-database it loads that database and keeps it; without, it
// loads a new database and keeps it when --keep is given.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"syscall"

	"github.com/lorebase/lorebase/perf"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "supply:", err)
		os.Exit(1)
	}
}

func run() error {
	var f perf.CommonFlags
	fs := flag.NewFlagSet("supply", flag.ExitOnError)
	f.Register(fs)
	stopAfter := fs.Int("stop-after", 0, "stop after committing this many batches (to try resuming)")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the load to this file")
	_ = fs.Parse(os.Args[1:])
	if *cpuProfile != "" {
		stopProfile, err := perf.StartCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := perf.OpenServer(ctx, f.ServerOptions())
	if err != nil {
		return err
	}
	defer srv.Close() //nolint:errcheck // stopping the server on exit
	if srv.Throwaway() && !f.Keep {
		fmt.Fprintln(os.Stderr, "supply: loading into a throwaway cluster that is removed at exit (give --database-url to keep the load)")
	}
	db := f.SeedDatabase
	if db == "" {
		db = f.Database
	}
	if db == "" {
		db = "lorebase_perf_supply"
	}
	url, err := srv.URL(db)
	if err != nil {
		return err
	}
	if err := perf.EnsureDatabase(ctx, srv, db); err != nil {
		return err
	}
	if f.Profile != "" {
		if err := perf.ApplyProfile(ctx, url, f.Profile, os.Stderr); err != nil {
			return err
		}
	}
	res, err := perf.LoadDatabase(ctx, url, perf.LoadOptions{Supply: f.SupplyConfig(), BatchSize: f.BatchSize,
		Progress: os.Stderr, ProgressBar: perf.IsTerminal(os.Stderr), StopAfter: *stopAfter})
	if err != nil {
		return err
	}
	out := map[string]any{
		"database": db, "result": res, "records_per_second": res.RecordsPerSecond(),
		"changes_per_second": res.ChangesPerSecond(),
	}
	if res.Complete && f.Replicas > 1 {
		rep, err := perf.ReplicateDatabase(ctx, url, f.SupplyConfig(), os.Stderr)
		if err != nil {
			return err
		}
		out["replicate"] = rep
	}
	return json.NewEncoder(os.Stdout).Encode(out)
}
