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
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/jobs"
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
	clients := fs.String("clients", "1,2,4,8,16", "numbers of concurrent clients to measure (empty: no concurrent measurement)")
	loadDuration := fs.Duration("load-duration", 10*time.Second, "duration of each concurrency level")
	loadMaxCalls := fs.Int("load-max-calls", 200000, "calls of one client in one level at most")
	writerRate := fs.Float64("writer-rate", 1, "writer commits per second in the second concurrency pass (0: no writer)")
	writerChanges := fs.Int("writer-changes", 100, "Part updates per writer commit")
	secondScale := fs.Int("second-scale", 5, "scale of the second Domain the concurrent clients read (same keys, another seed, marked titles)")
	branchRuns := fs.Int("branch-runs", 20, "overlays whose creation is timed")
	answerCalls := fs.Int("branch-answers", 20, "branches: calls of each read whose answers on the overlay and on the copy (or main) are compared")
	overlays := fs.Int("overlays", 1000, "overlays created (each with one commit) before main's reads are measured again")
	skipBranches := fs.Bool("skip-branches", false, "leave out the branch measurement")
	skipCopy := fs.Bool("skip-copy", false, "branches: leave out the copy branch (a dataset whose copy would not fit on the disk); the overlay is read against main and the overlay's deletion is measured")
	skipMerges := fs.Bool("skip-merges", false, "leave out the Proposal and merge measurement")
	rankingQueries := fs.Int("ranking-queries", 10, "queries per class of the ranking measurement (0: leave it out)")
	rankingRepeats := fs.Int("ranking-repeats", 3, "timed calls per query and search path of the ranking measurement")
	searchCandidates := fs.Bool("search-candidates", false, "also measure the candidate search paths (RUM, GIN with every match ranked, impact-ordered postings) beside the served one")
	httpReads := fs.Bool("http", true, "also measure reads through a Keeper over loopback HTTP (get by key, full-text search, q=steel)")
	httpOnly := fs.Bool("http-only", false, "reads part: measure the floor and the reads over HTTP only (with their floor-paired rounds), no other read")
	searchOnly := fs.Bool("search-only", false, "measure the floor, the searches and the ranking only (no other reads, writes, load, branches or merges)")
	partsFlag := fs.String("parts", "all", "comma-separated parts to measure: "+strings.Join(perf.PartNames(), ", ")+" (or all)")
	coldWarm := fs.Bool("cold-warm", false, "measure the reads twice per role: cold on keys from a seed the run has not used, then warm on the same calls (the Reads table is then the warm pass)")
	coldSeed := fs.Uint64("cold-seed", 0, "seed of the cold pass's owner keys (the rls keys use the next seed); 0: a random one")
	readTimeLimit := fs.Duration("read-time-limit", 0, "stop each read, role and pass after this long (warm-up included; 0: no limit), the branches' and merges' timed reads too; the report shows the calls measured")
	explain := fs.String("explain", "over", "EXPLAIN (ANALYZE, BUFFERS) of reads: over (those whose rls p95 passes the budget), all, or none")
	explainSamples := fs.Int("explain-samples", 3, "calls explained per read to pick the slowest")
	keepWarm := fs.Duration("keep-warm-interval", 0, "keep the write path's primary keys in shared buffers as Keeper does (jobs.Warmer): one pass before the measured parts, then one every interval until the run ends (0: never)")
	prewarm := fs.Bool("prewarm", false, "run storage prewarm for the Domain before the reads, with the cache residency before and after")
	residencyTop := fs.Int("residency-top", 12, "relations listed per cache residency snapshot (pg_buffercache; 0: no snapshots)")
	writeBaseline := fs.String("write-baseline", "", "measure the reads paired with the floor and write their ratios to the floor as the baseline file of --check-baseline")
	checkBaseline := fs.String("check-baseline", "", "measure the reads paired with the floor, compare each read's ratio to the floor with this baseline file and fail past its tolerance")
	checkTolerance := fs.Float64("check-tolerance", perf.DefaultCheckTolerance, "how many times its baseline ratio a read may reach before --check-baseline fails (a read whose rounds' upper quartile over their lower quartile was wider in the baseline run gets that spread)")
	gateDefaults := perf.DefaultGateOptions()
	gateRounds := fs.Int("gate-rounds", gateDefaults.Rounds, "rounds over every read of the floor-paired measurement (--check-baseline, --write-baseline)")
	gatePairs := fs.Int("gate-pairs", gateDefaults.Pairs, "timed pairs (a floor call and a read call) per read and round of the floor-paired measurement")
	gateWarmup := fs.Int("gate-warmup", gateDefaults.Warmup, "untimed pairs per read before the first round of the floor-paired measurement")
	beforeReads := fs.String("before-reads", "", "SQL run as the owner on the measured copy after the per-Attribute indexes are built, before the reads (for example to drop an index and see the gate fail); refused with --in-place")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile (pprof) of the run to this file")
	_ = fs.Parse(os.Args[1:])
	if *cpuProfile != "" {
		stopProfile, err := perf.StartCPUProfile(*cpuProfile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	parts, err := perf.ParseParts(*partsFlag)
	if err != nil {
		return err
	}
	if *explain != "over" && *explain != "all" && *explain != "none" {
		return fmt.Errorf("--explain: %q is not over, all or none", *explain)
	}
	if *checkTolerance < 1 {
		return fmt.Errorf("--check-tolerance: %g is below 1", *checkTolerance)
	}
	var base *perf.Baseline
	if *checkBaseline != "" {
		if base, err = perf.ReadBaseline(*checkBaseline); err != nil {
			return err
		}
	}
	if (*checkBaseline != "" || *writeBaseline != "") && !parts.Has(perf.PartReads) {
		return fmt.Errorf("--check-baseline and --write-baseline need the reads part")
	}
	gateOpts := perf.GateOptions{Rounds: *gateRounds, Pairs: *gatePairs, Warmup: *gateWarmup}
	if gateOpts.Rounds < 1 || gateOpts.Pairs < 1 || gateOpts.Warmup < 0 {
		return fmt.Errorf("--gate-rounds %d, --gate-pairs %d, --gate-warmup %d: rounds and pairs must be at least 1, warm-up pairs at least 0",
			gateOpts.Rounds, gateOpts.Pairs, gateOpts.Warmup)
	}
	if *beforeReads != "" && f.InPlace {
		return fmt.Errorf("--before-reads changes the measured database: it runs on a copy only, not with --in-place")
	}
	if *readTimeLimit < 0 {
		return fmt.Errorf("--read-time-limit: %s is negative", *readTimeLimit)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	command := perf.CommandLine("go run ./perf/cmd/bench", os.Args[1:])

	srv, err := perf.OpenServer(ctx, f.ServerOptions())
	if err != nil {
		return err
	}
	defer srv.Close() //nolint:errcheck // stopping the server on exit
	fx, err := srv.Fixture(ctx, perf.FixtureOptions{
		Load:         perf.LoadOptions{Supply: f.SupplyConfig(), BatchSize: f.BatchSize, Progress: os.Stderr, ProgressBar: perf.IsTerminal(os.Stderr)},
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
	if *beforeReads != "" {
		fmt.Fprintf(os.Stderr, "bench: before the reads: %s\n", *beforeReads)
		if _, err := s.Pool.Exec(ctx, *beforeReads, pgx.QueryExecModeSimpleProtocol); err != nil {
			return fmt.Errorf("--before-reads: %w", err)
		}
	}
	rep := &perf.Report{At: time.Now(), Command: command, Machine: perf.ReadMachine(), Load: fx.Load, FromSeed: fx.FromSeed, InPlace: f.InPlace && f.SeedDatabase != "",
		IndexBuild: idx, Warmup: *warmup, Iterations: *iterations, NotMeasured: perf.PendingReads(), Replicate: fx.Replicate,
		LoadAverage: []string{perf.ReadLoadAverage()}, BeforeReads: *beforeReads}
	if *partsFlag != "all" && *partsFlag != "" {
		rep.Parts = parts.List()
	}
	if rep.Postgres, err = perf.ReadPostgres(ctx, s); err != nil {
		return err
	}
	if err := probeCPU(ctx, s, rep, "start"); err != nil {
		return err
	}
	if rep.SearchWords, err = w.SearchWordMatches(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "bench:", err)
	}

	if *keepWarm > 0 {
		kw := &jobs.Warmer{Store: s}
		res, err := kw.Warm(ctx)
		if err != nil {
			return fmt.Errorf("--keep-warm-interval: %w", err)
		}
		rep.KeepWarm = describeWarm(res, *keepWarm)
		fmt.Fprintln(os.Stderr, "bench: keep warm:", rep.KeepWarm)
		warmCtx, stopWarm := context.WithCancel(ctx)
		warmed := make(chan struct{})
		go func() {
			defer close(warmed)
			select {
			case <-warmCtx.Done():
				return
			case <-time.After(*keepWarm):
			}
			kw.Run(warmCtx, *keepWarm)
		}()
		defer func() { stopWarm(); <-warmed }()
	}

	if parts.Has(perf.PartReads) {
		h := perf.Harness{Warmup: *warmup, Iterations: *iterations, TimeLimit: *readTimeLimit, Log: os.Stderr}
		rep.ReadTimeLimit = *readTimeLimit
		floor, err := h.Run(ctx, []perf.Op{w.Floor()}, nil)
		if err != nil {
			return err
		}
		rep.Floor = floor[0]
		httpW := w
		readsOf := func(w *perf.Workload) []perf.Op {
			ops := w.Reads()
			switch {
			case *httpOnly:
				ops = nil
			case *searchOnly:
				ops = slices.DeleteFunc(ops, func(op perf.Op) bool { return !strings.Contains(op.Name, "search") })
			}
			return ops
		}
		snap := residency(ctx, rep, w, *residencyTop)
		if *prewarm {
			snap("before prewarm")
			fmt.Fprintln(os.Stderr, "bench: storage prewarm")
			rep.Prewarm = w.Prewarm(ctx)
			snap("after prewarm")
		}
		if *coldWarm {
			seed := *coldSeed
			if seed == 0 {
				if seed, err = perf.FreshSeed(*benchSeed, *benchSeed+1, *benchSeed+2); err != nil {
					return err
				}
			}
			rep.ColdWarm, err = h.RunColdWarm(ctx, func(seed uint64) []perf.Op { return readsOf(w.WithSeed(seed)) },
				seed, seed+1, &rep.Floor, func(pass string) { snap("after the " + pass + " pass") })
			if err != nil {
				return err
			}
			// The reads over HTTP draw the rls passes' keys and queries, so
			// that each is set beside the same calls in process, warm.
			httpW = w.WithSeed(seed + 1)
			rep.Reads = rep.ColdWarm.Warm
		} else {
			if rep.Reads, err = h.Run(ctx, readsOf(w), &rep.Floor); err != nil {
				return err
			}
			snap("after the reads")
		}
		if *checkBaseline != "" || *writeBaseline != "" {
			if rep.Prewarm == nil {
				fmt.Fprintln(os.Stderr, "bench: storage prewarm")
				rep.Prewarm, rep.PrewarmForGate = w.Prewarm(ctx), true
			}
			fmt.Fprintln(os.Stderr, "bench: reads paired with the floor")
			if rep.Gate, err = h.RunGate(ctx, func() (perf.Op, []perf.Op) { return w.Floor(), readsOf(w) }, gateOpts); err != nil {
				return err
			}
		}
		explainReads(ctx, rep, w, *explain, *explainSamples)
		if *httpReads {
			fmt.Fprintln(os.Stderr, "bench: reads over HTTP")
			if err := overHTTP(ctx, rep, httpW, h, gateOpts); err != nil {
				if ctx.Err() != nil {
					return err
				}
				rep.HTTPSkipped = "failed: " + err.Error()
				fmt.Fprintln(os.Stderr, "bench: reads over HTTP:", err)
			}
		} else {
			rep.HTTPSkipped = "--http=false"
		}
		if *rankingQueries > 0 {
			fmt.Fprintln(os.Stderr, "bench: ranking")
			rep.Ranking, err = w.MeasureRanking(ctx, perf.RankingOptions{PerClass: *rankingQueries, Repeats: *rankingRepeats,
				Candidates: *searchCandidates, Log: func(format string, args ...any) { fmt.Fprintf(os.Stderr, format+"\n", args...) }})
			if err != nil {
				if ctx.Err() != nil {
					return err
				}
				rep.RankingSkipped = "failed: " + err.Error()
				fmt.Fprintln(os.Stderr, "bench: ranking:", err)
			}
		} else {
			rep.RankingSkipped = "--ranking-queries 0"
		}
	} else {
		rep.ReadsSkipped = parts.Skipped(perf.PartReads)
	}
	if *searchOnly || *httpOnly {
		*clients, *skipBranches, *skipMerges, *writeRuns = "", true, true, 0
	}
	if parts.Has(perf.PartWrites) && *writeRuns > 0 {
		hw := perf.Harness{Warmup: 1, Iterations: *writeRuns, Log: os.Stderr}
		writes := []perf.Op{w.CommitParts(1000, 0)}
		if big := w.CommitParts(10000, 5*time.Second); big.Name != writes[0].Name {
			writes = append(writes, big)
		}
		if rep.Writes, err = hw.Run(ctx, writes, nil); err != nil {
			return err
		}
	} else if !parts.Has(perf.PartWrites) {
		rep.WritesSkipped = parts.Skipped(perf.PartWrites)
	} else {
		rep.WritesSkipped = "no write runs (--search-only or --write-iterations 0)"
	}

	switch {
	case !parts.Has(perf.PartConcurrency):
		rep.ConcurrencySkipped = parts.Skipped(perf.PartConcurrency)
	case *clients == "":
		rep.ConcurrencySkipped = "--clients is empty"
	default:
		err := underLoad(ctx, rep, fx.URL, f, w, perf.ConcurrencyOptions{
			Duration: *loadDuration, MaxCalls: *loadMaxCalls, WriterRate: *writerRate, WriterChanges: *writerChanges,
			Seed: *benchSeed, Log: os.Stderr,
		}, *clients, *secondScale)
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			rep.ConcurrencySkipped = "failed: " + err.Error()
			fmt.Fprintln(os.Stderr, "bench: under load:", err)
		}
	}

	switch {
	case !parts.Has(perf.PartBranches):
		rep.BranchesSkipped = parts.Skipped(perf.PartBranches)
	case *skipBranches:
		rep.BranchesSkipped = "--skip-branches"
	default:
		fmt.Fprintln(os.Stderr, "bench: branches")
		rep.Branches, err = w.MeasureBranches(ctx, perf.BranchOptions{Runs: *branchRuns, Many: *overlays, CommitChanges: 1000, SkipCopy: *skipCopy, AnswerCalls: *answerCalls,
			Harness: perf.Harness{Warmup: *warmup, Iterations: *iterations, TimeLimit: *readTimeLimit}, Log: os.Stderr})
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			rep.BranchesSkipped = "failed: " + err.Error()
		}
	}
	switch {
	case !parts.Has(perf.PartMerges):
		rep.MergesSkipped = parts.Skipped(perf.PartMerges)
	case *skipMerges:
		rep.MergesSkipped = "--skip-merges"
	default:
		fmt.Fprintln(os.Stderr, "bench: proposals and merges")
		rep.Merges, err = w.MeasureMerges(ctx, perf.MergeOptions{Sizes: []int{1000, 10000},
			Harness: perf.Harness{Warmup: *warmup, Iterations: *iterations, TimeLimit: *readTimeLimit}, Log: os.Stderr})
		if err != nil {
			if ctx.Err() != nil {
				return err
			}
			rep.MergesSkipped = "failed: " + err.Error()
		}
	}
	// The dataset is counted after the measured parts: the count reads
	// every Record of main through an index, which puts their heap pages in
	// shared buffers, and a pass measured after it would find them there
	// (the cold pass's Records among them). No part changes the number of
	// main's Records or Links (writes and merges update Parts; branches and
	// load write other branches and another Domain).
	if rep.Dataset, err = perf.ReadDataset(ctx, s, w.DomainID); err != nil {
		return err
	}
	rep.Dataset.Seed, rep.Dataset.Scale, rep.Dataset.ExtraLinks = f.Seed, f.Scale, f.ExtraLinks
	rep.LoadAverage = append(rep.LoadAverage, perf.ReadLoadAverage())
	if err := probeCPU(ctx, s, rep, "end"); err != nil {
		return err
	}
	if base != nil {
		rep.Check = &perf.Check{Path: *checkBaseline, Tolerance: *checkTolerance, Baseline: base,
			Rows: perf.CompareBaseline(base, rep.Gate, rep.Reads, *checkTolerance)}
	}
	if err := writeReport(rep, *out); err != nil {
		return err
	}
	if *writeBaseline != "" {
		b, err := perf.NewBaseline(rep)
		if err != nil {
			return err
		}
		if err := perf.WriteBaseline(*writeBaseline, b); err != nil {
			return err
		}
		fmt.Fprintf(os.Stderr, "bench: wrote the baseline %s\n", *writeBaseline)
	}
	if c := rep.Check; c != nil {
		if err := c.WriteCheckSummary(os.Stderr); err != nil {
			return err
		}
		return c.Error()
	}
	return nil
}

// writeReport writes the Markdown report to out and the JSON beside it
// (stdout only when out is empty).
func writeReport(rep *perf.Report, out string) error {
	if out == "" {
		return rep.WriteMarkdown(os.Stdout)
	}
	if err := os.MkdirAll(filepath.Dir(out), 0o755); err != nil {
		return fmt.Errorf("create report directory: %w", err)
	}
	if err := writeFile(out, rep.WriteMarkdown); err != nil {
		return err
	}
	jsonPath := strings.TrimSuffix(out, filepath.Ext(out)) + ".json"
	if err := writeFile(jsonPath, rep.WriteJSON); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "bench: wrote %s and %s\n", out, jsonPath)
	return nil
}

// overHTTP measures the HTTP reads through a Keeper on a loopback port,
// then each of them paired call by call with the floor (rounds and pairs
// of the gate's options), so that their ratios to the floor are taken at
// the same moment.
func overHTTP(ctx context.Context, rep *perf.Report, w *perf.Workload, h perf.Harness, gate perf.GateOptions) error {
	hk, err := w.StartKeeper(ctx)
	if err != nil {
		return err
	}
	rep.HTTP, err = h.Run(ctx, w.HTTPReads(hk), &rep.Floor)
	if err == nil {
		fmt.Fprintln(os.Stderr, "bench: reads over HTTP paired with the floor")
		rep.HTTPGate, err = h.RunGate(ctx, func() (perf.Op, []perf.Op) { return w.Floor(), w.HTTPReads(hk) }, gate)
	}
	if cerr := hk.Close(); err == nil {
		err = cerr
	}
	return err
}

// underLoad loads the second Domain (same keys, another seed, titles
// marked) and runs the concurrent clients over both Domains, on a pool
// large enough for every client and the writer.
func underLoad(ctx context.Context, rep *perf.Report, url string, f perf.CommonFlags, w *perf.Workload, opts perf.ConcurrencyOptions, clients string, secondScale int) error {
	for _, c := range strings.Split(clients, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 || n > 256 {
			return fmt.Errorf("--clients: %q is not a number of clients between 1 and 256", c)
		}
		opts.Clients = append(opts.Clients, n)
	}
	second := supply.Config{Seed: f.Seed + 1000, Scale: secondScale, ExtraLinks: f.ExtraLinks, Marker: secondMarker}
	fmt.Fprintf(os.Stderr, "bench: loading the second Domain %s (scale %d)\n", secondDomain, secondScale)
	s, err := store.Open(ctx, url, store.Config{MaxConns: int32(slices.Max(opts.Clients) + 4)})
	if err != nil {
		return err
	}
	defer s.Close()
	if _, err := perf.Load(ctx, s, perf.LoadOptions{Domain: secondDomain, Supply: second}); err != nil {
		return err
	}
	gen2, err := supply.New(second)
	if err != nil {
		return err
	}
	w2, err := perf.NewWorkloadIn(ctx, s, secondDomain, gen2, opts.Seed, 1)
	if err != nil {
		return err
	}
	if _, err := w2.BuildIndexes(ctx); err != nil {
		return err
	}
	w1, err := perf.NewWorkloadIn(ctx, s, perf.DomainName, w.Gen, opts.Seed, 1)
	if err != nil {
		return err
	}
	tenants := []*perf.Tenant{perf.NewTenant(w1, ""), perf.NewTenant(w2, secondMarker)}
	rep.Concurrency, err = perf.RunConcurrency(ctx, tenants, opts)
	return err
}

// residency returns a function that adds a pg_buffercache snapshot to the
// report (after creating the extension once; when it cannot, the report
// says why and no snapshot is taken).
func residency(ctx context.Context, rep *perf.Report, w *perf.Workload, top int) func(label string) {
	if top <= 0 {
		rep.ResidencySkipped = "--residency-top 0"
		return func(string) {}
	}
	if err := w.EnableBuffercache(ctx); err != nil {
		rep.ResidencySkipped = "pg_buffercache is not available: " + err.Error()
		fmt.Fprintln(os.Stderr, "bench:", rep.ResidencySkipped)
		return func(string) {}
	}
	return func(label string) {
		r, err := w.ReadResidency(ctx, label, top)
		if err != nil {
			fmt.Fprintln(os.Stderr, "bench: cache residency:", err)
			return
		}
		rep.Residency = append(rep.Residency, r)
	}
}

// explainReads explains the reads over budget (or all, or none) on keys
// from a seed the run has not used.
func explainReads(ctx context.Context, rep *perf.Report, w *perf.Workload, mode string, samples int) {
	if mode == "none" {
		return
	}
	passes := []perf.Pass{{Name: "reads", Results: rep.Reads}}
	if cw := rep.ColdWarm; cw != nil {
		passes = []perf.Pass{{Name: "cold", Results: cw.Cold}, {Name: "warm", Results: cw.Warm}}
	}
	why := map[string]string{}
	for _, m := range perf.OverBudget(passes...) {
		why[m.Name] = fmt.Sprintf("%s p95 %.2f ms in the %s pass, over the %.0f ms budget", m.Role,
			float64(m.P95)/float64(time.Millisecond), m.Pass, float64(m.Target)/float64(time.Millisecond))
	}
	seed, err := perf.FreshSeed()
	if err != nil {
		rep.ExplainNote = err.Error()
		return
	}
	ops := w.WithSeed(seed).Reads()
	n := 0
	for _, op := range ops {
		reason, over := why[op.Name]
		if mode == "all" && !over {
			reason, over = "explained on request (--explain all)", true
		}
		if !over || op.Explain == nil {
			continue
		}
		fmt.Fprintf(os.Stderr, "bench: explain %s\n", op.Name)
		rep.Explains = append(rep.Explains, w.ExplainRead(ctx, op, reason, samples))
		n++
	}
	if n == 0 {
		rep.ExplainNote = "Every read's rls p95 is within its design section 6 budget: none explained."
	}
}

// The second Domain of the concurrent measurement.
const (
	secondDomain = "supply_other"
	secondMarker = "zzother"
)

func writeFile(path string, write func(io.Writer) error) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("create %s: %w", path, err)
	}
	if err := write(f); err != nil {
		return errors.Join(fmt.Errorf("write %s: %w", path, err), f.Close())
	}
	return f.Close()
}

// describeWarm says what the first keep-warm pass of a run did.
func describeWarm(res *jobs.WarmResult, every time.Duration) string {
	if res.Missing {
		return "not done: the pg_prewarm extension is not installed"
	}
	var loaded int64
	for _, ix := range res.Warmed {
		loaded += ix.Loaded
	}
	out := fmt.Sprintf("every %s; the first pass, before the measured parts, asked pg_prewarm for %d blocks of %d primary keys (budget %d blocks)", every, loaded, len(res.Warmed), res.Budget)
	if len(res.Skipped) > 0 {
		out += fmt.Sprintf(", %d left out past the budget", len(res.Skipped))
	}
	return out
}

// probeCPU adds the server CPU probe at moment at to the report and logs it.
func probeCPU(ctx context.Context, s *store.Store, rep *perf.Report, at string) error {
	c, err := perf.ProbeCPU(ctx, s.Pool, at)
	if err != nil {
		return err
	}
	rep.CPUProbe = append(rep.CPUProbe, c)
	fmt.Fprintf(os.Stderr, "bench: server CPU probe at %s: median %.1f ms, fastest %.1f ms\n", at,
		float64(c.Median)/float64(time.Millisecond), float64(c.Min)/float64(time.Millisecond))
	return nil
}
