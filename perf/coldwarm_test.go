package perf_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/storagecli"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
)

// fakeClock is a clock that moves only when a call advances it.
type fakeClock struct{ t time.Time }

func (c *fakeClock) now() time.Time { return c.t }

// call is an operation taking one second of the fake clock.
func (c *fakeClock) call(context.Context) error {
	c.t = c.t.Add(time.Second)
	return nil
}

func TestHarnessTimeLimit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name              string
		warmup, iter      int
		limit             time.Duration
		wantN, wantWarmup int
		wantCapped        bool
	}{
		{"no limit", 3, 20, 0, 20, 3, false},
		{"limit past every call", 3, 20, time.Hour, 20, 3, false},
		{"limit cuts the timed calls", 3, 100, 10 * time.Second, 7, 3, true},
		{"limit cuts the warm-up, one timed call still made", 5, 100, 2 * time.Second, 1, 2, true},
		{"limit exactly at the last call", 0, 4, 4 * time.Second, 4, 0, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &fakeClock{t: time.Unix(0, 0)}
			h := perf.Harness{Warmup: tc.warmup, Iterations: tc.iter, TimeLimit: tc.limit, Clock: c.now}
			st, err := h.Time(context.Background(), c.call)
			require.NoError(t, err)
			require.Equal(t, tc.wantN, st.N)
			require.Equal(t, tc.wantWarmup, st.Warmup)
			require.Equal(t, tc.wantCapped, st.Capped)
			require.Equal(t, time.Second, st.P99, "each call takes one second of the clock")
		})
	}
}

func TestRunColdWarmRepeatsTheColdCalls(t *testing.T) {
	t.Parallel()
	c := &fakeClock{t: time.Unix(0, 0)}
	calls := map[string][]string{} // pass/role/op → keys
	pass := "cold"
	// build draws keys from the seed in order, like Workload.Reads; the
	// slow op takes 3 s a call so the 10 s limit cuts it.
	build := func(seed uint64) []perf.Op {
		var ops []perf.Op
		for _, name := range []string{"fast", "slow"} {
			n := 0
			cost := time.Second
			if name == "slow" {
				cost = 3 * time.Second
			}
			fn := func(role string) func(context.Context) error {
				return func(context.Context) error {
					n++
					c.t = c.t.Add(cost)
					k := pass + "/" + role + "/" + name
					calls[k] = append(calls[k], fmt.Sprintf("%d-%d", seed, n))
					return nil
				}
			}
			ops = append(ops, perf.Op{Name: name, Target: 2 * time.Second, Owner: fn("owner"), RLS: fn("rls")})
		}
		return ops
	}
	h := perf.Harness{Warmup: 1, Iterations: 5, TimeLimit: 10 * time.Second, Clock: c.now}
	var after []string
	cw, err := h.RunColdWarm(context.Background(), build, 11, 12, nil, func(p string) {
		after = append(after, p)
		pass = "warm"
	})
	require.NoError(t, err)
	require.Equal(t, []string{"cold", "warm"}, after)
	require.Equal(t, uint64(11), cw.OwnerSeed)
	for _, role := range []string{"owner", "rls"} {
		for _, name := range []string{"fast", "slow"} {
			cold, warm := calls["cold/"+role+"/"+name], calls["warm/"+role+"/"+name]
			require.Equal(t, cold, warm, "%s %s: the warm pass repeats the cold calls", role, name)
		}
		seed := "11-"
		if role == "rls" {
			seed = "12-"
		}
		require.Contains(t, calls["cold/"+role+"/fast"][0], seed)
	}
	require.Equal(t, 5, cw.Cold[0].Owner.N)
	require.False(t, cw.Cold[0].Owner.Capped)
	// slow: warm-up 3 s, then calls at 3, 6, 9 s: 3 timed calls.
	require.Equal(t, 3, cw.Cold[1].RLS.N)
	require.True(t, cw.Cold[1].RLS.Capped)
	require.Equal(t, 3, cw.Warm[1].RLS.N)
	require.Equal(t, 3*time.Second, cw.Warm[1].RLS.P95)
}

func TestOverBudget(t *testing.T) {
	t.Parallel()
	st := func(p95 time.Duration) *perf.Stats { return &perf.Stats{N: 1, P95: p95} }
	ms := time.Millisecond
	for _, tc := range []struct {
		name   string
		passes []perf.Pass
		want   []perf.Miss
	}{
		{"none over", []perf.Pass{{"reads", []perf.Result{{Name: "get", Target: 5 * ms, RLS: st(5 * ms)}}}}, nil},
		{"no target", []perf.Pass{{"reads", []perf.Result{{Name: "floor", RLS: st(time.Second)}}}}, nil},
		{"owner over does not count", []perf.Pass{{"reads", []perf.Result{{Name: "get", Target: 5 * ms, Owner: st(time.Second), RLS: st(ms)}}}}, nil},
		{"failed rls side", []perf.Pass{{"reads", []perf.Result{{Name: "get", Target: 5 * ms, RLSError: "boom"}}}}, nil},
		{"one over", []perf.Pass{{"reads", []perf.Result{{Name: "get", Target: 5 * ms, RLS: st(ms)}, {Name: "search", Target: 50 * ms, RLS: st(51 * ms)}}}},
			[]perf.Miss{{Name: "search", Pass: "reads", Role: "rls", P95: 51 * ms, Target: 50 * ms}}},
		{"worst pass kept, order of first sight", []perf.Pass{
			{"cold", []perf.Result{{Name: "a", Target: ms, RLS: st(2 * ms)}, {Name: "b", Target: ms, RLS: st(9 * ms)}}},
			{"warm", []perf.Result{{Name: "a", Target: ms, RLS: st(3 * ms)}, {Name: "b", Target: ms, RLS: st(4 * ms)}}},
		}, []perf.Miss{{Name: "a", Pass: "warm", Role: "rls", P95: 3 * ms, Target: ms}, {Name: "b", Pass: "cold", Role: "rls", P95: 9 * ms, Target: ms}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, perf.OverBudget(tc.passes...))
		})
	}
}

func TestReportRendersColdWarmAndDiagnosis(t *testing.T) {
	t.Parallel()
	cold := &perf.Stats{N: 41, P50: 10 * time.Millisecond, P95: 60 * time.Millisecond, P99: 70 * time.Millisecond, Warmup: 30, Capped: true}
	warm := &perf.Stats{N: 41, P50: 2 * time.Millisecond, P95: 3 * time.Millisecond, P99: 4 * time.Millisecond, Warmup: 30}
	rep := &perf.Report{
		At: time.Date(2026, 1, 2, 3, 4, 0, 0, time.UTC), Command: "bench", Machine: perf.ReadMachine(), ReadTimeLimit: 45 * time.Second,
		Floor: perf.Result{Name: "floor", RLS: warm},
		ColdWarm: &perf.ColdWarm{OwnerSeed: 5, RLSSeed: 6,
			Cold: []perf.Result{{Name: "full-text search", Target: 50 * time.Millisecond, RLS: cold}},
			Warm: []perf.Result{{Name: "full-text search", Target: 50 * time.Millisecond, RLS: warm}}},
		Reads: []perf.Result{{Name: "full-text search", Target: 50 * time.Millisecond, RLS: warm, Owner: cold}},
		Residency: []*perf.Residency{{Label: "after the cold pass", SharedBuffers: 128 << 20, Used: 64 << 20, Database: 32 << 20,
			Top: []perf.RelationResidency{{Relation: "mat_records_p1", Kind: "r", Cached: 8 << 20, Size: 32 << 20}}}},
		Prewarm: &perf.PrewarmRun{Took: 1500 * time.Millisecond, Result: &storagecli.PrewarmResult{Domain: "supply", Loaded: 100 << 20,
			Budget: 200 << 20, SharedBuffers: 256 << 20, Steps: []storagecli.PrewarmStep{{Relation: "x"}, {Relation: "y", Partial: true}}, Skipped: []string{"z"}}},
		Explains: []*perf.Explain{{Name: "full-text search", Why: "rls p95 60.00 ms in the cold pass, over the 50 ms budget", SQL: "SELECT * FROM lb_search($1)", Args: "[main steel]", Samples: 3,
			Cold: &perf.PlanCall{Planning: time.Millisecond, Execution: 55 * time.Millisecond, SharedHit: 1200, SharedRead: 3400,
				Plan:   []string{"Function Scan of lb_search: 55.00 ms, 20 rows × 1 loops, hit 1200, read 3400"},
				Nested: []perf.NestedPlan{{Duration: 50 * time.Millisecond, Text: "duration: 50.000 ms  plan:\nBitmap Heap Scan on mat_records_p1"}}},
			Warm: &perf.PlanCall{Execution: 5 * time.Millisecond, SharedHit: 4600}}},
	}
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	out := md.String()
	for _, want := range []string{
		"| full-text search | 50.00 | 10.00 | 60.00 | 70.00 | 2.00 | 3.00 | 4.00 | — | 41* / 41 |",
		"stops after 45s (warm-up included)",
		"## Cold and warm reads (milliseconds)",
		"owner seed 5, rls seed 6",
		"| full-text search | 50.00 | rls | 10.00 | 60.00 | 70.00 | 41* | 2.00 | 3.00 | 4.00 | 41 | 20.0× |",
		"## Prewarm",
		"100 MiB loaded into shared buffers in 1.5s (budget 200 MiB, shared_buffers 256 MiB), 2 relations (1 partly), 1 left out",
		"after the cold pass: shared buffers 128 MiB, 64 MiB in use, 32 MiB of this database",
		"| mat_records_p1 | table | 8 MiB | 32 MiB | 25% |",
		"### full-text search",
		"rls p95 60.00 ms in the cold pass, over the 50 ms budget",
		"- cold: planning 1.00 ms, execution 55.00 ms, shared blocks hit 1,200, read 3,400.",
		"Function Scan of lb_search",
		"Bitmap Heap Scan on mat_records_p1",
		"- warm: planning 0.00 ms, execution 5.00 ms, shared blocks hit 4,600, read 0.",
	} {
		require.Contains(t, out, want)
	}
	var js bytes.Buffer
	require.NoError(t, rep.WriteJSON(&js))
	var back perf.Report
	require.NoError(t, json.Unmarshal(js.Bytes(), &back))
	require.Equal(t, rep.ColdWarm, back.ColdWarm)
	require.True(t, back.ColdWarm.Cold[0].RLS.Capped)
	require.Equal(t, rep.Explains, back.Explains)
}

// TestColdWarmOnLoadedDomain runs the cold and warm passes with a cap, the
// EXPLAIN of a read, the cache residency and storage prewarm on a small
// loaded Domain.
func TestColdWarmOnLoadedDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := loadedWorkload(t, supply.Config{Seed: 4, Scale: 1, ExtraLinks: 1}, 3, 6)
	_, err := w.BuildIndexes(ctx)
	require.NoError(t, err)

	require.NoError(t, w.EnableBuffercache(ctx))
	before, err := w.ReadResidency(ctx, "before", 5)
	require.NoError(t, err)
	require.Positive(t, before.SharedBuffers)
	require.NotEmpty(t, before.Top)
	require.LessOrEqual(t, len(before.Top), 5)

	pr := w.Prewarm(ctx)
	require.Empty(t, pr.Error)
	require.Equal(t, perf.DomainName, pr.Result.Domain)
	require.Positive(t, pr.Result.Loaded)

	// A one-nanosecond limit stops every read after its first timed call.
	h := perf.Harness{Warmup: 2, Iterations: 4, TimeLimit: time.Nanosecond}
	var snaps []string
	seed, err := perf.FreshSeed(3)
	require.NoError(t, err)
	cw, err := h.RunColdWarm(ctx, func(seed uint64) []perf.Op { return w.WithSeed(seed).Reads() }, seed, seed+1, nil,
		func(p string) { snaps = append(snaps, p) })
	require.NoError(t, err)
	require.Equal(t, []string{"cold", "warm"}, snaps)
	require.Len(t, cw.Cold, len(perf.ReadNames()))
	for i, r := range cw.Cold {
		require.Empty(t, r.OwnerError, r.Name)
		require.Empty(t, r.RLSError, r.Name)
		require.Empty(t, cw.Warm[i].RLSError, r.Name)
		require.Equal(t, 1, r.RLS.N, r.Name)
		require.True(t, r.RLS.Capped, r.Name)
		require.Equal(t, 1, cw.Warm[i].RLS.N, r.Name)
	}

	var search perf.Op
	for _, op := range w.Reads() {
		if op.Name == "full-text search" {
			search = op
		}
	}
	ex := w.ExplainRead(ctx, search, "asked", 2)
	require.Empty(t, ex.Error)
	require.Contains(t, ex.SQL, "lb_search")
	for _, pc := range []*perf.PlanCall{ex.Cold, ex.Warm} {
		require.NotNil(t, pc)
		require.Positive(t, pc.Execution)
		require.Positive(t, pc.SharedHit+pc.SharedRead)
		require.NotEmpty(t, pc.Plan)
	}
	if ex.NestedSkipped == "" {
		require.NotEmpty(t, ex.Cold.Nested, "auto_explain loaded: the statements inside lb_search are explained")
	}
}
