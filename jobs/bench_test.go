package jobs_test

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

// benchRecords is the size of the large benchmark Domain
// (LOREBASE_BENCH_RECORDS, default 20,000).
func benchRecords(b *testing.B) int {
	if v := os.Getenv("LOREBASE_BENCH_RECORDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(b, err, "LOREBASE_BENCH_RECORDS")
		return n
	}
	return 20000
}

// BenchmarkCreateOverlay: creating an overlay costs the same whatever the
// size of its base (no row copies).
func BenchmarkCreateOverlay(b *testing.B) {
	for _, n := range []int{100, benchRecords(b)} {
		b.Run(fmt.Sprintf("records=%d", n), func(b *testing.B) {
			f := newFixture(b, n)
			ctx := context.Background()
			i := 0
			for b.Loop() {
				i++
				_, err := f.s.CreateBranch(ctx, f.domain, store.CreateBranchRequest{Name: fmt.Sprintf("agent/%d", i), From: "main"}, noJobs)
				require.NoError(b, err)
			}
		})
	}
}

// batchTimes collects the hold times of a job's batches.
type batchTimes struct {
	mu   sync.Mutex
	held []time.Duration
	rows int
}

func (bt *batchTimes) add(_ context.Context, st jobs.BatchStats) error {
	bt.mu.Lock()
	defer bt.mu.Unlock()
	bt.held = append(bt.held, st.Held)
	bt.rows += st.Written
	return nil
}

func (bt *batchTimes) report(b *testing.B, elapsed time.Duration) {
	sort.Slice(bt.held, func(i, j int) bool { return bt.held[i] < bt.held[j] })
	p95 := bt.held[(len(bt.held)*95)/100]
	if len(bt.held) > 0 && (len(bt.held)*95)/100 >= len(bt.held) {
		p95 = bt.held[len(bt.held)-1]
	}
	b.ReportMetric(float64(bt.rows)/elapsed.Seconds(), "rows/s")
	b.ReportMetric(float64(p95.Microseconds())/1000, "batch-p95-ms")
	b.ReportMetric(float64(len(bt.held))/float64(b.N), "batches/op")
	b.ReportMetric(float64(bt.rows)/float64(b.N), "rows/op")
}

// BenchmarkCopy: the store.materialize job on a base of
// LOREBASE_BENCH_RECORDS Records (and their Links and history), batches
// sized by the default 200 ms target.
func BenchmarkCopy(b *testing.B) {
	f := newFixture(b, benchRecords(b))
	f.exec(b, `ANALYZE`)
	ctx := context.Background()
	bt := &batchTimes{}
	var elapsed time.Duration
	i := 0
	for b.Loop() {
		i++
		id := f.createBranch(b, fmt.Sprintf("copy-%d", i), store.ModeCopy)
		start := time.Now()
		require.NoError(b, (&jobs.Copier{Store: f.s, AfterBatch: bt.add}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: id}))
		elapsed += time.Since(start)
	}
	bt.report(b, elapsed)
}

// BenchmarkDelete: the store.branch_delete job on a copy of
// LOREBASE_BENCH_RECORDS Records.
func BenchmarkDelete(b *testing.B) {
	f := newFixture(b, benchRecords(b))
	ctx := context.Background()
	bt := &batchTimes{}
	var elapsed time.Duration
	i := 0
	for b.Loop() {
		b.StopTimer()
		i++
		name := fmt.Sprintf("copy-%d", i)
		id := f.createBranch(b, name, store.ModeCopy)
		require.NoError(b, (&jobs.Copier{Store: f.s}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: id}))
		require.NoError(b, f.s.DeleteBranch(ctx, f.domain, name, noJobs))
		b.StartTimer()
		start := time.Now()
		require.NoError(b, (&jobs.Deleter{Store: f.s, AfterBatch: bt.add}).Run(ctx, jobs.BranchDeleteArgs{DomainID: f.domain, BranchID: id}))
		elapsed += time.Since(start)
	}
	bt.report(b, elapsed)
}

// BenchmarkDomainDelete: the store.domain_delete job on a Domain of
// LOREBASE_BENCH_RECORDS Records (with their Links and history), each
// iteration on a fresh database. It reports the time each batch took
// (a transaction: the rows and the Domain's progress) at p50, p95 and p99.
func BenchmarkDomainDelete(b *testing.B) {
	ctx := context.Background()
	bt := &batchTimes{}
	var elapsed time.Duration
	for b.Loop() {
		b.StopTimer()
		f := newFixture(b, benchRecords(b))
		_, err := f.s.DeleteDomain(ctx, "d", func(context.Context, pgx.Tx, int32) error { return nil })
		require.NoError(b, err)
		b.StartTimer()
		start := time.Now()
		require.NoError(b, (&jobs.DomainDeleter{Store: f.s, AfterBatch: bt.add}).Run(ctx, jobs.DomainDeleteArgs{DomainID: f.domain}))
		elapsed += time.Since(start)
	}
	bt.report(b, elapsed)
	for _, p := range []int{50, 99} {
		b.ReportMetric(float64(bt.held[min(len(bt.held)-1, len(bt.held)*p/100)].Microseconds())/1000, fmt.Sprintf("batch-p%d-ms", p))
	}
}
