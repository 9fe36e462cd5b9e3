// Command searchplans counts the statements PostgreSQL plans and runs per
// search call, per query class (one word, misspelled word, two words,
// partial match of three words, entity resolution), from
// pg_stat_statements with nested statements and planning counted
// (pg_stat_statements.track = all, track_planning = on):
//
//	go run ./perf/cmd/searchplans --scale 54 --calls 200
//	go run ./perf/cmd/searchplans --database-url postgres://postgres@127.0.0.1:55432/postgres \
//	    --seed-database perf_seed_100k --scale 540 --top 8
//
// All calls of a class run in one session after --warmup calls, as a
// Keeper connection serves them. Without --database-url (or
// LOREBASE_TEST_DATABASE_URL, LOREBASE_DATABASE_URL) it starts a
// throwaway cluster loading pg_stat_statements and loads the supply
// dataset at --scale into it; a server given by URL must load
// pg_stat_statements (shared_preload_libraries) and the URL be a
// superuser's. With --plans it also writes the plan shapes of each class's
// statements as a session keeps them (auto_explain after the warm-up), to
// compare two versions of the functions, and with --answers every
// query's answer. The measured database (a copy of --seed-database when
// given) gets the extension and the two settings.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/reads"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "searchplans:", err)
		os.Exit(1)
	}
}

func run() error {
	var f perf.CommonFlags
	fs := flag.NewFlagSet("searchplans", flag.ExitOnError)
	f.Register(fs)
	calls := fs.Int("calls", 200, "counted calls per class")
	warmup := fs.Int("warmup", 20, "calls per class before counting")
	benchSeed := fs.Uint64("bench-seed", 7, "seed of the queries")
	top := fs.Int("top", 0, "list this many statements per class, those planned most")
	only := fs.String("classes", "", "comma-separated classes to measure (empty: all)")
	plans := fs.String("plans", "", "also write the plan shapes of each class's statements (auto_explain, after the warm-up) to this file")
	planCalls := fs.Int("plan-calls", 20, "with --plans: explained calls per class")
	answers := fs.String("answers", "", "also write each class's answers (every query once, as JSON) to this file, to compare two versions of the functions")
	_ = fs.Parse(os.Args[1:])
	if f.Settings == nil {
		f.Settings = perf.SettingFlags{}
	}
	if _, ok := f.Settings["shared_preload_libraries"]; !ok {
		f.Settings["shared_preload_libraries"] = "pg_stat_statements"
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := perf.OpenServer(ctx, f.ServerOptions())
	if err != nil {
		return err
	}
	defer srv.Close() //nolint:errcheck // stopping the server on exit
	fx, err := srv.Fixture(ctx, perf.FixtureOptions{
		Load:         perf.LoadOptions{Supply: f.SupplyConfig(), BatchSize: f.BatchSize, Progress: os.Stderr},
		SeedDatabase: f.SeedDatabase,
		Database:     f.Database,
		Keep:         f.Keep,
		Profile:      f.Profile,
		InPlace:      f.InPlace,
		Log:          os.Stderr,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := fx.Drop(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(os.Stderr, "searchplans: drop fixture:", err)
		}
	}()

	stats, err := pgx.Connect(ctx, fx.URL)
	if err != nil {
		return fmt.Errorf("connect: %w", err)
	}
	defer stats.Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing on exit
	if err := perf.EnableStatementStats(ctx, stats); err != nil {
		return err
	}
	defer func() {
		if err := perf.DisableStatementStats(context.WithoutCancel(ctx), stats); err != nil {
			fmt.Fprintln(os.Stderr, "searchplans:", err)
		}
	}()

	s, err := perf.OneSessionStore(ctx, fx.URL)
	if err != nil {
		return err
	}
	defer s.Close()
	gen, err := supply.New(f.SupplyConfig())
	if err != nil {
		return err
	}
	w, err := perf.NewWorkload(ctx, s, gen, *benchSeed, *calls+*warmup)
	if err != nil {
		return err
	}
	if _, err := w.BuildIndexes(ctx); err != nil {
		return err
	}
	classes := w.SearchClasses(*calls + *warmup)
	if *only != "" {
		want := strings.Split(*only, ",")
		var keep []perf.SearchClass
		for _, c := range classes {
			for _, n := range want {
				if strings.TrimSpace(n) == c.Name {
					keep = append(keep, c)
				}
			}
		}
		if len(keep) == 0 {
			return errors.New("--classes names no class")
		}
		classes = keep
	}
	res, err := perf.MeasureSearchPlans(ctx, stats, w.Reader, w.DomainID, perf.Branch, classes,
		perf.SearchPlanOptions{Warmup: *warmup, Calls: *calls, Top: *top, Log: os.Stderr})
	if err != nil {
		return err
	}
	perf.WriteSearchPlans(os.Stdout, res)
	if *answers != "" {
		if err := writeAnswers(ctx, w, classes, *answers); err != nil {
			return err
		}
	}
	if *plans == "" {
		return nil
	}
	shapes, err := w.ExplainSearchClasses(ctx, fx.URL, classes, *warmup, *planCalls)
	if err != nil {
		return err
	}
	pf, err := os.Create(*plans)
	if err != nil {
		return fmt.Errorf("create %s: %w", *plans, err)
	}
	perf.WriteSearchClassPlans(pf, shapes)
	if err := pf.Close(); err != nil {
		return fmt.Errorf("write %s: %w", *plans, err)
	}
	return nil
}

// writeAnswers writes a line per query of each class: the class, the
// query and its answer as JSON.
func writeAnswers(ctx context.Context, w *perf.Workload, classes []perf.SearchClass, path string) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	bw := bufio.NewWriter(f)
	for _, c := range classes {
		for _, q := range c.Queries {
			var ans any
			if c.Resolve {
				ans, err = w.Reader.Resolve(ctx, w.DomainID, perf.Branch, q, "", 0)
			} else {
				ans, err = w.Reader.Search(ctx, w.DomainID, perf.Branch, reads.SearchQuery{Q: q})
			}
			if err != nil {
				_ = f.Close()
				return fmt.Errorf("%s %q: %w", c.Name, q, err)
			}
			b, err := json.Marshal(ans)
			if err != nil {
				_ = f.Close()
				return fmt.Errorf("encode the answer to %q: %w", q, err)
			}
			fmt.Fprintf(bw, "%s\t%s\t%s\n", c.Name, q, b)
		}
	}
	if err := bw.Flush(); err != nil {
		_ = f.Close()
		return fmt.Errorf("write %s: %w", path, err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}
