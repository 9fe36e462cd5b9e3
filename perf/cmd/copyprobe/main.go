// Command copyprobe times the background copy of a copy branch on an
// existing database (a copy of a perf seed): it creates a copy branch of
// main, runs the store.materialize job in-process batch by batch and
// reports, per table, the rows copied, their rate over the batches' time
// and the batches' hold times (the copy's lanes copy tables side by side),
// and for the whole copy its rate and the server CPU time its backends
// spent (read from /proc where the server runs on this machine: a count
// that depends less on other work than the wall time); then it deletes the branch (store.branch_delete in-process), so
// the database can be measured again.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
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

// clockTick is the unit of utime and stime in /proc/<pid>/stat (USER_HZ,
// 100 on Linux).
const clockTick = 10 * time.Millisecond

// serverCPU sums the user and system CPU time of the client backends
// connected to the database; ok is false where /proc does not show them
// (a server on another machine).
func serverCPU(ctx context.Context, s *store.Store) (time.Duration, bool) {
	rows, err := s.Pool.Query(ctx, `SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND backend_type = 'client backend'`)
	if err != nil {
		return 0, false
	}
	pids, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil || len(pids) == 0 {
		return 0, false
	}
	var total time.Duration
	for _, pid := range pids {
		b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
		if err != nil {
			return 0, false
		}
		// Fields after the command name, which is in parentheses and may
		// hold spaces: state is field 3, utime 14, stime 15.
		f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
		if len(f) < 13 {
			return 0, false
		}
		for _, v := range f[11:13] {
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil {
				return 0, false
			}
			total += time.Duration(n) * clockTick
		}
	}
	return total, true
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "copyprobe:", err)
		os.Exit(1)
	}
}

// cpuNote is the server CPU time of a part of the run, with the rows a
// server CPU second copies when rows is positive.
func cpuNote(cpu time.Duration, rows int, ok bool) string {
	if !ok {
		return ""
	}
	if rows <= 0 || cpu <= 0 {
		return fmt.Sprintf("; server CPU %.1f s", cpu.Seconds())
	}
	return fmt.Sprintf("; server CPU %.1f s, %.0f rows per CPU s", cpu.Seconds(), float64(rows)/cpu.Seconds())
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
	var lastBatch time.Time
	startCPU, cpuOK := serverCPU(ctx, s)
	// The copy's lanes run side by side: AfterBatch is called by one lane
	// at a time; a table's time is the sum of its batches' hold times.
	c := &jobs.Copier{Store: s, BatchRows: *batch, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		p := phases[st.Phase]
		if p == nil {
			p = &phase{}
			phases[st.Phase] = p
			order = append(order, st.Phase)
		}
		lastBatch = time.Now()
		p.rows += st.Rows
		p.written += st.Written
		p.batches++
		p.time += st.Held
		p.held = append(p.held, st.Held)
		all = append(all, st.Held)
		return nil
	}}
	start := time.Now()
	if err := c.Run(ctx, jobs.MaterializeArgs{DomainID: domain, BranchID: info.ID}); err != nil {
		return err
	}
	total := time.Since(start)
	endCPU, ok := serverCPU(ctx, s)
	cpuOK = cpuOK && ok
	written := 0
	for _, n := range order {
		p := phases[n]
		written += p.written
		fmt.Printf("%-13s %9d rows %8.0f rows/s of its batches' time %4d batches  held p50 %4.0f p95 %4.0f max %4.0f ms  (%.1f s in batches)\n",
			n, p.written, float64(p.written)/p.time.Seconds(), p.batches,
			float64(pct(p.held, 0.5).Microseconds())/1000, float64(pct(p.held, 0.95).Microseconds())/1000,
			float64(pct(p.held, 1).Microseconds())/1000, p.time.Seconds())
	}
	copying := lastBatch.Sub(start)
	fmt.Printf("copy          %9d rows %8.0f rows/s  (%.1f s to the last batch, the statistics of the last lane's tables left out)\n",
		written, float64(written)/copying.Seconds(), copying.Seconds())
	fmt.Printf("total         %9d rows %8.0f rows/s %4d batches  held p50 %4.0f p95 %4.0f max %4.0f ms  (%.1f s, analyze included%s)\n",
		written, float64(written)/total.Seconds(), len(all),
		float64(pct(all, 0.5).Microseconds())/1000, float64(pct(all, 0.95).Microseconds())/1000,
		float64(pct(all, 1).Microseconds())/1000, total.Seconds(), cpuNote(endCPU-startCPU, written, cpuOK))
	if *keep {
		return nil
	}
	if err := s.DeleteBranch(ctx, domain, *name, noJobs); err != nil {
		return err
	}
	return (&jobs.Deleter{Store: s}).Run(ctx, jobs.BranchDeleteArgs{DomainID: domain, BranchID: info.ID})
}
