// Command copyprobe times the background copy of a copy branch on an
// existing database (a copy of a perf seed): it creates a copy branch of
// main, runs the store.materialize job in-process batch by batch and
// reports, per table, the rows copied, their rate and the batches' hold
// times; then it deletes the branch (store.branch_delete in-process), so
// the database can be measured again.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

var noJobs = store.BranchJobs{
	Copy:   func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil },
	Delete: func(context.Context, pgx.Tx, int32, int32) error { return nil },
}

type phase struct {
	rows, written, batches int
	time                   time.Duration
	held                   []time.Duration
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "copyprobe:", err)
		os.Exit(1)
	}
}

func pct(d []time.Duration, p float64) time.Duration {
	if len(d) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), d...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	i := int(float64(len(s)-1) * p)
	return s[i]
}

func run() error {
	url := flag.String("database-url", "", "database to copy in")
	name := flag.String("branch", "probe-copy", "name of the copy branch")
	batch := flag.Int("batch-rows", 0, "fixed batch size (0: sized by the target)")
	keep := flag.Bool("keep", false, "keep the copy")
	domainFlag := flag.Int("domain", 0, "Domain id (0: the lowest with a main)")
	createOnly := flag.Bool("create-only", false, "create the copy branch, print its id and stop (no copy)")
	flag.Parse()
	ctx := context.Background()
	s, err := store.Open(ctx, *url, store.Config{MaxConns: 4, OwnerMaxConns: 4})
	if err != nil {
		return err
	}
	defer s.Pool.Close()
	domain := int32(*domainFlag)
	if domain == 0 {
		if err := s.Pool.QueryRow(ctx, `SELECT min(domain_id) FROM refs WHERE name = 'main'`).Scan(&domain); err != nil {
			return fmt.Errorf("find domain: %w", err)
		}
	}
	info, err := s.CreateBranch(ctx, domain, store.CreateBranchRequest{Name: *name, From: "main", Mode: store.ModeCopy}, noJobs)
	if err != nil {
		return err
	}
	if *createOnly {
		fmt.Println(domain, info.ID)
		return nil
	}
	phases := map[string]*phase{}
	order := []string{}
	var all []time.Duration
	last := time.Now()
	c := &jobs.Copier{Store: s, BatchRows: *batch, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		p := phases[st.Phase]
		if p == nil {
			p = &phase{}
			phases[st.Phase] = p
			order = append(order, st.Phase)
		}
		now := time.Now()
		p.rows += st.Rows
		p.written += st.Written
		p.batches++
		p.time += now.Sub(last)
		last = now
		p.held = append(p.held, st.Held)
		all = append(all, st.Held)
		return nil
	}}
	start := time.Now()
	if err := c.Run(ctx, jobs.MaterializeArgs{DomainID: domain, BranchID: info.ID}); err != nil {
		return err
	}
	total := time.Since(start)
	written := 0
	for _, n := range order {
		p := phases[n]
		written += p.written
		fmt.Printf("%-13s %9d rows %8.0f rows/s %4d batches  held p50 %4.0f p95 %4.0f max %4.0f ms  (%.1f s)\n",
			n, p.written, float64(p.written)/p.time.Seconds(), p.batches,
			float64(pct(p.held, 0.5).Microseconds())/1000, float64(pct(p.held, 0.95).Microseconds())/1000,
			float64(pct(p.held, 1).Microseconds())/1000, p.time.Seconds())
	}
	fmt.Printf("total         %9d rows %8.0f rows/s %4d batches  held p50 %4.0f p95 %4.0f max %4.0f ms  (%.1f s, analyze included)\n",
		written, float64(written)/total.Seconds(), len(all),
		float64(pct(all, 0.5).Microseconds())/1000, float64(pct(all, 0.95).Microseconds())/1000,
		float64(pct(all, 1).Microseconds())/1000, total.Seconds())
	if *keep {
		return nil
	}
	if err := s.DeleteBranch(ctx, domain, *name, noJobs); err != nil {
		return err
	}
	return (&jobs.Deleter{Store: s}).Run(ctx, jobs.BranchDeleteArgs{DomainID: domain, BranchID: info.ID})
}
