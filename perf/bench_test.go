package perf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

func TestSummarize(t *testing.T) {
	t.Parallel()
	var lat []time.Duration
	for i := 100; i >= 1; i-- {
		lat = append(lat, time.Duration(i)*time.Millisecond)
	}
	s := perf.Summarize(lat)
	require.Equal(t, perf.Stats{N: 100, P50: 50 * time.Millisecond, P95: 95 * time.Millisecond, P99: 99 * time.Millisecond,
		Mean: 50500 * time.Microsecond, Min: time.Millisecond, Max: 100 * time.Millisecond}, s)
	require.Equal(t, perf.Stats{}, perf.Summarize(nil))
	one := perf.Summarize([]time.Duration{3})
	require.Equal(t, time.Duration(3), one.P99)
}

func TestHarnessRecordsFailuresAndGoesOn(t *testing.T) {
	t.Parallel()
	calls := 0
	h := perf.Harness{Warmup: 2, Iterations: 5}
	ops := []perf.Op{
		{Name: "ok", Owner: func(context.Context) error { calls++; return nil }, RLS: func(context.Context) error { calls++; return nil }},
		{Name: "broken", RLS: func(context.Context) error { return errors.New("not implemented") }},
	}
	floor := perf.Result{Name: "floor", RLS: &perf.Stats{P50: 1}}
	res, err := h.Run(context.Background(), ops, &floor)
	require.NoError(t, err)
	require.Equal(t, 14, calls)
	require.Equal(t, 5, res[0].Owner.N)
	require.Equal(t, 5, res[0].RLS.N)
	require.Nil(t, res[1].RLS)
	require.Contains(t, res[1].RLSError, "not implemented")
	require.Nil(t, res[1].Owner)
}

// TestHarnessPrepareIsNotTimed: Run calls an Op's Prepare before each of
// its calls, warm-up included, and times the call alone; a failing Prepare
// is the Op's error. The clock moves 7 ms in each Prepare and 2 ms in each
// call.
func TestHarnessPrepareIsNotTimed(t *testing.T) {
	t.Parallel()
	now := time.Unix(0, 0)
	h := perf.Harness{Warmup: 2, Iterations: 4, Clock: func() time.Time { return now }}
	var order []string
	ops := []perf.Op{{
		Name: "commit",
		Prepare: func(context.Context) error {
			order = append(order, "prepare")
			now = now.Add(7 * time.Millisecond)
			return nil
		},
		RLS: func(context.Context) error {
			order = append(order, "call")
			now = now.Add(2 * time.Millisecond)
			return nil
		},
	}, {
		Name:    "broken",
		Prepare: func(context.Context) error { return errors.New("no changes drawn") },
		RLS:     func(context.Context) error { order = append(order, "broken call"); return nil },
	}}
	res, err := h.Run(context.Background(), ops, nil)
	require.NoError(t, err)
	require.Equal(t, strings.Split(strings.Repeat("prepare call ", 6), " ")[:12], order)
	require.Equal(t, 4, res[0].RLS.N)
	require.Equal(t, 2*time.Millisecond, res[0].RLS.P50)
	require.Equal(t, 2*time.Millisecond, res[0].RLS.Max)
	require.Nil(t, res[1].RLS)
	require.Contains(t, res[1].RLSError, "no changes drawn")
}

func TestReportRenders(t *testing.T) {
	t.Parallel()
	st := &perf.Stats{N: 3, P50: 1500 * time.Microsecond, P95: 2 * time.Millisecond, P99: 3 * time.Millisecond, Mean: time.Millisecond}
	rep := &perf.Report{
		At: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Command: "bench --scale 5", Machine: perf.ReadMachine(),
		Dataset:     perf.Dataset{Scale: 5, Records: 925, Links: 2000, StoredLinks: 1000, ByKind: map[string]int{"Part": 200}},
		Load:        &perf.LoadResult{Committed: 1, Records: 925, Links: 2000, Duration: time.Second},
		Floor:       perf.Result{Name: "floor", Owner: st, RLS: st},
		Reads:       []perf.Result{{Name: "get by key", Target: 5 * time.Millisecond, RLS: st, FloorRatio: 1.5, OwnerError: "boom"}},
		Writes:      []perf.Result{{Name: "commit of 1000 changes", RLS: st}},
		NotMeasured: []string{"overlay reads"},
		Branches: &perf.Branches{Against: "copy", Answers: []perf.AnswerCheck{{Name: "get by key", Calls: 20},
			{Name: "record lineage", Calls: 20, Different: 2, First: "call 3: a | b"}}},
		CPUProbe: []perf.CPUProbe{{At: "start", Median: 86 * time.Millisecond, Min: 84500 * time.Microsecond},
			{At: "end", Median: 140 * time.Millisecond, Min: 90 * time.Millisecond}},
	}
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	out := md.String()
	for _, want := range []string{
		"| Operation | Target p95 | owner p50 | owner p95 | owner p99 | rls p50 | rls p95 | rls p99 | ratio to floor |",
		"| get by key | 5.00 | — | — | — | 1.50 | 2.00 | 3.00 | 1.5× |",
		"| commit of 1000 changes | — | 3 | 1.50 | 2.00 | 3.00 | 1.00 |",
		"- overlay reads: not implemented yet",
		"- get by key (owner): boom",
		"925 Records on main",
		"The overlay's answers against copy's, call by call on the same inputs, after the same commit on both",
		"| get by key | 20 | 0 | — |",
		"| record lineage | 20 | 2 | call 3: a / b |",
		"- server CPU probe (`" + perf.CPUProbeSQL + "`, median / fastest of 5 runs, ms): start 86.00 / 84.50; end 140.00 / 90.00",
	} {
		require.Contains(t, out, want)
	}
	var js bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	var back perf.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, rep.Reads, back.Reads)
	require.Equal(t, rep.CPUProbe, back.CPUProbe)
	require.True(t, strings.HasPrefix(js.String(), "{"))
}

// TestProbeCPU: the probe runs its statement on the server, CPUProbeRuns
// times, and neither reads a table nor writes a temporary file (its time
// is the server's CPU alone).
func TestProbeCPU(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	c, err := perf.ProbeCPU(ctx, s.Pool, "start")
	require.NoError(t, err)
	require.Equal(t, "start", c.At)
	require.Positive(t, c.Min)
	require.LessOrEqual(t, c.Min, c.Median)
	var sum int64
	require.NoError(t, s.Pool.QueryRow(ctx, perf.CPUProbeSQL).Scan(&sum))
	require.Equal(t, int64(3000000)*3000001/2, sum)
	rows, err := s.Pool.Query(ctx, "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF, TIMING OFF) "+perf.CPUProbeSQL)
	require.NoError(t, err)
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	plan := strings.Join(lines, "\n")
	require.Contains(t, plan, "ProjectSet", "values one at a time, not a tuplestore")
	require.NotContains(t, plan, "Function Scan")
	// The plan's nodes, without the planning's own buffers (a new
	// session's planner may read catalog pages).
	nodes, _, _ := strings.Cut(plan, "\nPlanning")
	require.NotContains(t, nodes, "temp", "no temporary file")
	require.NotContains(t, nodes, "shared", "no table")
	require.NotContains(t, nodes, "Scan", "no table")
}

func TestWorkloadOnLoadedDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := loadedWorkload(t, supply.Config{Seed: 2, Scale: 1, ExtraLinks: 1}, 3, 4)
	_, err := w.BuildIndexes(ctx)
	require.NoError(t, err)
	words, err := w.SearchWordMatches(ctx)
	require.NoError(t, err)
	require.Equal(t, 4, words.Calls)
	require.Positive(t, words.Max, "the drawn words are title words")
	require.NotEmpty(t, words.Top)
	h := perf.Harness{Warmup: 1, Iterations: 3}
	floor, err := h.Run(ctx, []perf.Op{w.Floor()}, nil)
	require.NoError(t, err)
	require.NotNil(t, floor[0].Owner, floor[0].OwnerError)
	require.NotNil(t, floor[0].RLS, floor[0].RLSError)
	ops := append(w.Reads(), w.CommitParts(10, 0))
	require.Len(t, ops, len(perf.ReadNames())+1)
	res, err := h.Run(ctx, ops, &floor[0])
	require.NoError(t, err)
	for _, r := range res {
		require.Empty(t, r.OwnerError, r.Name)
		require.Empty(t, r.RLSError, r.Name)
		require.NotNil(t, r.RLS, r.Name)
	}
}
