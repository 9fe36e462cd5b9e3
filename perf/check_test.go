package perf_test

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/perf"
)

// gateOf is a floor-paired measurement with the given ratios (a read
// named with a ratio of 0 failed).
func gateOf(ratios map[string]float64) *perf.Gate {
	g := &perf.Gate{Options: perf.GateOptions{Rounds: 3, Pairs: 10}}
	for n, r := range ratios {
		if r == 0 {
			g.Reads = append(g.Reads, perf.GateRead{Name: n, Error: "round 1, pair 1: boom"})
			continue
		}
		g.Reads = append(g.Reads, perf.GateRead{Name: n, Ratio: r, Rounds: []float64{r, r, r}, Spread: 1})
	}
	return g
}

func TestCompareBaseline(t *testing.T) {
	t.Parallel()
	base := &perf.Baseline{Format: perf.BaselineFormat, Reads: map[string]perf.BaselineRead{
		"get by key":       {Ratio: 2, Spread: 1.1},
		"full-text search": {Ratio: 10, Spread: 1.2},
		"an old read":      {Ratio: 3, Spread: 2}, // a noisy read: its spread is its tolerance
	}, P50Ratios: map[string]float64{"get by key": 2, "full-text search": 10}}
	p50 := func(name string, ratio float64) perf.Result { return perf.Result{Name: name, FloorRatio: ratio} }
	for _, tc := range []struct {
		name       string
		gate       *perf.Gate
		tolerance  float64
		wantFailed []string
		wantWhy    string
		wantNow    map[string]float64
	}{
		{"all within", gateOf(map[string]float64{"get by key": 2.9, "full-text search": 5, "an old read": 3}), 1.5, nil, "",
			map[string]float64{"get by key": 2.9, "full-text search": 5}},
		{"exactly at the tolerance passes", gateOf(map[string]float64{"get by key": 3, "full-text search": 15, "an old read": 6}), 1.5, nil, "", nil},
		{"past the tolerance fails", gateOf(map[string]float64{"get by key": 3.1, "full-text search": 16, "an old read": 3}), 1.5,
			[]string{"get by key", "full-text search"}, "3.10× the floor, baseline 2.00×: 1.55 times it, tolerance 1.50", nil},
		{"a noisy read's spread widens its tolerance", gateOf(map[string]float64{"get by key": 2, "full-text search": 10, "an old read": 5.9}), 1.5, nil, "", nil},
		{"past the spread fails", gateOf(map[string]float64{"get by key": 2, "full-text search": 10, "an old read": 6.1}), 1.5,
			[]string{"an old read"}, "tolerance 2.00", nil},
		{"a tighter tolerance", gateOf(map[string]float64{"get by key": 2.5, "full-text search": 10, "an old read": 3}), 1.2,
			[]string{"get by key"}, "tolerance 1.20", nil},
		{"a read not measured fails", gateOf(map[string]float64{"get by key": 2, "an old read": 3}), 1.5,
			[]string{"full-text search"}, "full-text search (not measured)", nil},
		{"a read that failed fails", gateOf(map[string]float64{"get by key": 2, "full-text search": 0, "an old read": 3}), 1.5,
			[]string{"full-text search"}, "failed: round 1, pair 1: boom", nil},
		{"no floor-paired measurement fails every read", nil, 1.5, []string{"get by key", "full-text search", "an old read"}, "not measured", nil},
		{"a new read is not compared", gateOf(map[string]float64{"get by key": 2, "full-text search": 10, "an old read": 3, "new": 99}), 1.5, nil, "", nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			// The p50 over p50 of the reads pass moves a lot: shown beside, it decides nothing.
			reads := []perf.Result{p50("get by key", 9), p50("full-text search", 10)}
			rows := perf.CompareBaseline(base, tc.gate, reads, tc.tolerance)
			require.Len(t, rows, 3)
			require.Equal(t, []string{"get by key", "full-text search", "an old read"}, []string{rows[0].Name, rows[1].Name, rows[2].Name},
				"the reads of ReadNames first, in their order")
			c := &perf.Check{Path: "b.json", Tolerance: tc.tolerance, Baseline: base, Rows: rows}
			require.Equal(t, tc.wantFailed, c.Failed())
			require.Equal(t, []string{"get by key"}, c.P50Failed())
			require.InDelta(t, 4.5, rows[0].P50Growth, 1e-9)
			if tc.wantFailed == nil {
				require.NoError(t, c.Error())
			} else {
				require.Error(t, c.Error())
				for _, n := range tc.wantFailed {
					require.Contains(t, c.Error().Error(), n)
				}
				require.Contains(t, c.Error().Error(), tc.wantWhy)
			}
			for _, r := range rows {
				if want, ok := tc.wantNow[r.Name]; ok {
					require.InDelta(t, want, r.Now, 1e-9)
					require.InDelta(t, want/base.Reads[r.Name].Ratio, r.Growth, 1e-9)
				}
			}
		})
	}
}

func TestReadBaselineRefusesOtherFormats(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		file    string
		wantErr string
	}{
		{"format 1 (one p50 over one floor p50)", `{"at": "2026-12-01T07:12:17Z", "floor_p50_ns": 159012, "ratios": {"get by key": 1.13}}`,
			"written by an older perf-check (no format: one p50 over one floor p50), this check needs format 2 (floor-paired rounds): run `make perf-baseline` to rewrite it"},
		{"a later format", `{"format": 3, "reads": {"get by key": {"ratio": 1.1}}}`, "written by format 3"},
		{"no reads", `{"format": 2, "reads": {}}`, "no reads: run `make perf-baseline`"},
		{"a read without a ratio", `{"format": 2, "reads": {"get by key": {"ratio": 0}}}`, `read "get by key" has no ratio`},
		{"not JSON", `ratios: 1`, "invalid character"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			path := filepath.Join(t.TempDir(), "baseline.json")
			require.NoError(t, os.WriteFile(path, []byte(tc.file), 0o600))
			_, err := perf.ReadBaseline(path)
			require.ErrorContains(t, err, tc.wantErr)
			require.ErrorContains(t, err, path)
		})
	}
}

func TestBaselineRoundTripAndReport(t *testing.T) {
	t.Parallel()
	st := func(p50 time.Duration) *perf.Stats { return &perf.Stats{N: 10, P50: p50} }
	rep := &perf.Report{At: time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC), Command: "bench", Iterations: 300,
		LoadAverage: []string{"3.1 3.0 2.9", "3.2 3.0 2.9"}, Dataset: perf.Dataset{Scale: 540, Records: 100000},
		Floor: perf.Result{Name: "floor", RLS: st(time.Millisecond)},
		Reads: []perf.Result{{Name: "get by key", RLS: st(2 * time.Millisecond), FloorRatio: 2}, {Name: "record lineage", RLSError: "boom"}},
		Gate: &perf.Gate{Options: perf.GateOptions{Rounds: 3, Pairs: 10, Warmup: 2}, Reads: []perf.GateRead{
			{Name: "get by key", Ratio: 2, Rounds: []float64{1.9, 2, 2.2}, Spread: 2.2 / 1.9, Read: st(2 * time.Millisecond), Floor: st(time.Millisecond)},
			{Name: "record lineage", Error: "round 1, pair 3: boom"}}}}
	b, err := perf.NewBaseline(rep)
	require.NoError(t, err)
	require.Equal(t, perf.BaselineFormat, b.Format)
	require.Equal(t, map[string]perf.BaselineRead{"get by key": {Ratio: 2, Rounds: []float64{1.9, 2, 2.2}, Spread: 2.2 / 1.9}}, b.Reads,
		"a read without a ratio is left out")
	require.Equal(t, map[string]float64{"get by key": 2}, b.P50Ratios)
	require.Equal(t, perf.GateOptions{Rounds: 3, Pairs: 10, Warmup: 2}, b.Gate)
	path := filepath.Join(t.TempDir(), "baseline.json")
	require.NoError(t, perf.WriteBaseline(path, b))
	back, err := perf.ReadBaseline(path)
	require.NoError(t, err)
	require.Equal(t, b.Reads, back.Reads)
	require.Equal(t, b.LoadAverage, back.LoadAverage)

	_, err = perf.NewBaseline(&perf.Report{Reads: []perf.Result{{Name: "get by key", FloorRatio: 2}}})
	require.ErrorContains(t, err, "no floor-paired measurement", "a run without the floor-paired reads makes no baseline")
	_, err = perf.NewBaseline(&perf.Report{Gate: &perf.Gate{Reads: []perf.GateRead{{Name: "get by key", Error: "boom"}}}})
	require.Error(t, err, "a run with no ratio makes no baseline")
	_, err = perf.ReadBaseline(filepath.Join(t.TempDir(), "absent.json"))
	require.Error(t, err)

	rep.Reads[0].FloorRatio = 3.5
	rep.Gate.Reads[0].Ratio, rep.Gate.Reads[0].Rounds = 3.5, []float64{3.4, 3.5, 3.6}
	rep.Check = &perf.Check{Path: path, Tolerance: 1.5, Baseline: back, Rows: perf.CompareBaseline(back, rep.Gate, rep.Reads, 1.5)}
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	require.Contains(t, md.String(), "## Reads paired with the floor (regression gate)")
	require.Contains(t, md.String(), "| get by key | 3.50× | 3.40 3.50 3.60 | 1.16 | 2.00 | 1.00 | 10 |")
	require.Contains(t, md.String(), "| record lineage | — | failed: round 1, pair 3: boom |")
	require.Contains(t, md.String(), "## Regression check")
	require.Contains(t, md.String(), "load average 3.1 3.0 2.9 / 3.2 3.0 2.9")
	require.Contains(t, md.String(),
		"| get by key | 2.00× | 3.50× | 1.75 | 1.50 | FAILED: 3.50× the floor, baseline 2.00×: 1.75 times it, tolerance 1.50 | 2.00× | 3.50× | 1.75 (past) |")
	var sum bytes.Buffer
	require.NoError(t, rep.Check.WriteCheckSummary(&sum))
	require.Contains(t, sum.String(), "get by key")
	require.Contains(t, sum.String(), "p50 over p50 (format 1, not deciding): 1 of 1 reads past 1.5×: get by key")
	require.ErrorContains(t, rep.Check.Error(), "1 of 1 reads past their tolerance")
}

// simClock is a clock the operations advance: a call of cost d moves it
// by d, so the gate's timings are exact.
type simClock struct{ now time.Time }

func (c *simClock) op(d time.Duration, calls *[]string, name string) func(context.Context) error {
	return func(context.Context) error {
		c.now = c.now.Add(d)
		*calls = append(*calls, name)
		return nil
	}
}

func TestRunGatePairsEachCallWithTheFloor(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// the floor's cost and the read's cost, per timed pair in order
		floor, read []time.Duration
		rounds      int
		pairs       int
		wantRatio   float64
		wantRounds  []float64
		wantSpread  float64
	}{
		// The floor slows down with the read (a busy moment): the ratio holds.
		{"a busier machine moves both", []time.Duration{1, 2, 4, 1, 2, 4}, []time.Duration{3, 6, 12, 3, 6, 12}, 2, 3, 3, []float64{3, 3}, 1},
		// One slow read call in a round does not move the round's median.
		{"an outlier call", []time.Duration{1, 1, 1, 1, 1, 1}, []time.Duration{2, 2, 50, 2, 2, 2}, 2, 3, 2, []float64{2, 2}, 1},
		// Rounds differ: the read's ratio is their median.
		{"the median round", []time.Duration{1, 1, 1}, []time.Duration{2, 5, 3}, 3, 1, 3, []float64{2, 5, 3}, 2.5},
		// Spread: the upper quartile of the rounds over the lower one (nearest rank).
		{"the spread of seven rounds", []time.Duration{1, 1, 1, 1, 1, 1, 1}, []time.Duration{9, 2, 4, 3, 5, 6, 30}, 7, 1, 5,
			[]float64{9, 2, 4, 3, 5, 6, 30}, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			c := &simClock{now: time.Date(2026, 12, 1, 0, 0, 0, 0, time.UTC)}
			var calls []string
			k := 0 // the timed pair the calls belong to (after the warm-up pair)
			var fk, rk int
			floor := perf.Op{Name: "floor", RLS: func(ctx context.Context) error {
				d := time.Duration(1)
				if fk > 0 {
					d = tc.floor[fk-1] * time.Millisecond
				}
				fk++
				return c.op(d, &calls, "floor")(ctx)
			}}
			read := perf.Op{Name: "get by key", RLS: func(ctx context.Context) error {
				d := time.Duration(1)
				if rk > 0 {
					d = tc.read[rk-1] * time.Millisecond
				}
				rk++
				k++
				return c.op(d, &calls, "read")(ctx)
			}}
			h := perf.Harness{Clock: func() time.Time { return c.now }}
			built := 0
			g, err := h.RunGate(context.Background(), func() (perf.Op, []perf.Op) { built++; return floor, []perf.Op{read} },
				perf.GateOptions{Rounds: tc.rounds, Pairs: tc.pairs, Warmup: 1})
			require.NoError(t, err)
			require.Equal(t, tc.rounds+1, built, "the operations are built again for every round, to make the same calls")
			require.Len(t, g.Reads, 1)
			gr := g.Reads[0]
			require.Empty(t, gr.Error)
			require.InDeltaSlice(t, tc.wantRounds, gr.Rounds, 1e-9)
			require.InDelta(t, tc.wantRatio, gr.Ratio, 1e-9)
			require.InDelta(t, tc.wantSpread, gr.Spread, 1e-9)
			require.Equal(t, tc.rounds*tc.pairs, gr.Read.N, "the warm-up pair is not timed")
			require.Equal(t, tc.rounds*tc.pairs+1, k)
			// The floor goes first in even pairs, the read in odd ones (per round).
			require.Equal(t, []string{"floor", "read"}, calls[0:2], "warm-up pair")
			if tc.pairs > 1 {
				require.Equal(t, []string{"floor", "read", "read", "floor"}, calls[2:6])
			}
		})
	}
}

func TestRunGateRecordsAFailingReadAndGoesOn(t *testing.T) {
	t.Parallel()
	ok := func(context.Context) error { return nil }
	floor := perf.Op{Name: "floor", RLS: ok}
	ops := []perf.Op{
		{Name: "get by key", RLS: ok},
		{Name: "broken", RLS: func(context.Context) error { return errors.New("no such function") }},
		{Name: "owner only", Owner: ok},
	}
	build := func() (perf.Op, []perf.Op) { return floor, ops }
	g, err := perf.Harness{}.RunGate(context.Background(), build, perf.GateOptions{Rounds: 2, Pairs: 4, Warmup: 1})
	require.NoError(t, err)
	require.Empty(t, g.Reads[0].Error)
	require.Len(t, g.Reads[0].Rounds, 2)
	require.Contains(t, g.Reads[1].Error, "warm-up pair 1: no such function")
	require.Nil(t, g.Reads[1].Rounds)
	require.Equal(t, "no rls side", g.Reads[2].Error)

	_, err = perf.Harness{}.RunGate(context.Background(), build, perf.GateOptions{Rounds: 0, Pairs: 4})
	require.ErrorContains(t, err, "rounds and pairs must be at least 1")
	_, err = perf.Harness{}.RunGate(context.Background(), func() (perf.Op, []perf.Op) { return perf.Op{Name: "floor"}, ops }, perf.GateOptions{Rounds: 1, Pairs: 1})
	require.ErrorContains(t, err, "no rls side")
}

// TestHTTPGateReport: each read over HTTP is reported with its in-process
// read's p50 and what HTTP adds to it (none for a read with no in-process
// twin); the reads over HTTP paired with the floor are reported under
// them, with their p95 and p99, and a failed one with its error.
func TestHTTPGateReport(t *testing.T) {
	t.Parallel()
	st := func(p50, p95, p99 time.Duration) *perf.Stats {
		return &perf.Stats{N: 420, P50: p50, P95: p95, P99: p99}
	}
	for _, tc := range []struct {
		name string
		gate *perf.Gate
		want []string
		not  []string
	}{
		{"paired", &perf.Gate{Options: perf.GateOptions{Rounds: 7, Pairs: 60, Warmup: 10}, Reads: []perf.GateRead{
			{Name: "HTTP: get by key", Ratio: 2.9, Rounds: []float64{2.8, 2.9, 3.0}, Spread: 1.1,
				Read: st(400*time.Microsecond, 2*time.Millisecond, 6*time.Millisecond), Floor: st(140*time.Microsecond, 0, 0)},
			{Name: "HTTP: search q=steel", Error: "round 1, pair 2: status 500"}}},
			[]string{"Paired with the floor: after 10 untimed pairs per read, 7 rounds",
				"| HTTP: get by key | 2.90× | 2.80 2.90 3.00 | 1.10 | 0.40 | 2.00 | 6.00 | 0.14 | 420 |",
				"| HTTP: search q=steel | — | failed: round 1, pair 2: status 500 |"}, nil},
		{"not paired", nil, []string{"| HTTP: get by key | 10.00 | 0.40 | 2.00 | 6.00 | 0.15 | 0.25 | — |",
			"| HTTP: search q=steel | 50.00 | 3.00 | 4.00 | 5.00 | — | — | — |"}, []string{"Paired with the floor"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rep := &perf.Report{HTTPGate: tc.gate, HTTP: []perf.Result{{Name: "HTTP: get by key", Target: 10 * time.Millisecond,
				RLS: st(400*time.Microsecond, 2*time.Millisecond, 6*time.Millisecond)},
				{Name: "HTTP: search q=steel", Target: 50 * time.Millisecond, RLS: st(3*time.Millisecond, 4*time.Millisecond, 5*time.Millisecond)}},
				// The in-process reads beside them: get by key's p50 is
				// subtracted, another read's is not.
				Reads: []perf.Result{{Name: "links of a record", RLS: st(time.Millisecond, 0, 0)},
					{Name: "get by key", RLS: st(150*time.Microsecond, 0, 0)}}}
			var md bytes.Buffer
			require.NoError(t, rep.WriteMarkdown(&md))
			for _, w := range tc.want {
				require.Contains(t, md.String(), w)
			}
			for _, n := range tc.not {
				require.NotContains(t, md.String(), n)
			}
		})
	}
}
