package perf_test

import (
	"bytes"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/perf"
)

func TestCompareBaseline(t *testing.T) {
	t.Parallel()
	base := &perf.Baseline{Ratios: map[string]float64{"get by key": 2, "full-text search": 10, "an old read": 3}}
	read := func(name string, ratio float64) perf.Result { return perf.Result{Name: name, FloorRatio: ratio} }
	for _, tc := range []struct {
		name       string
		reads      []perf.Result
		tolerance  float64
		wantFailed []string
		wantNow    map[string]float64
	}{
		{"all within", []perf.Result{read("get by key", 2.9), read("full-text search", 5), read("an old read", 3)}, 1.5, nil,
			map[string]float64{"get by key": 2.9, "full-text search": 5}},
		{"exactly at the tolerance passes", []perf.Result{read("get by key", 3), read("full-text search", 15), read("an old read", 4.5)}, 1.5, nil, nil},
		{"past the tolerance fails", []perf.Result{read("get by key", 3.1), read("full-text search", 16), read("an old read", 3)}, 1.5,
			[]string{"get by key", "full-text search"}, nil},
		{"a tighter tolerance", []perf.Result{read("get by key", 2.5), read("full-text search", 10), read("an old read", 3)}, 1.2,
			[]string{"get by key"}, nil},
		{"a read not measured fails", []perf.Result{read("get by key", 2), read("an old read", 3)}, 1.5, []string{"full-text search"}, nil},
		{"a read that failed fails", []perf.Result{read("get by key", 2), {Name: "full-text search", RLSError: "boom"}, read("an old read", 3)}, 1.5,
			[]string{"full-text search"}, nil},
		{"a new read is not compared", []perf.Result{read("get by key", 2), read("full-text search", 10), read("an old read", 3), read("new", 99)}, 1.5, nil, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			rows := perf.CompareBaseline(base, tc.reads, tc.tolerance)
			require.Len(t, rows, 3)
			require.Equal(t, []string{"get by key", "full-text search", "an old read"}, []string{rows[0].Name, rows[1].Name, rows[2].Name},
				"the reads of ReadNames first, in their order")
			c := &perf.Check{Path: "b.json", Tolerance: tc.tolerance, Baseline: base, Rows: rows}
			require.Equal(t, tc.wantFailed, c.Failed())
			if tc.wantFailed == nil {
				require.NoError(t, c.Error())
			} else {
				require.Error(t, c.Error())
				for _, n := range tc.wantFailed {
					require.Contains(t, c.Error().Error(), n)
				}
			}
			for _, r := range rows {
				if want, ok := tc.wantNow[r.Name]; ok {
					require.InDelta(t, want, r.Now, 1e-9)
					require.InDelta(t, want/base.Ratios[r.Name], r.Growth, 1e-9)
				}
			}
		})
	}
}

func TestBaselineRoundTripAndReport(t *testing.T) {
	t.Parallel()
	st := func(p50 time.Duration) *perf.Stats { return &perf.Stats{N: 10, P50: p50} }
	rep := &perf.Report{At: time.Date(2026, 12, 1, 6, 0, 0, 0, time.UTC), Command: "bench", Iterations: 300,
		LoadAverage: []string{"3.1 3.0 2.9", "3.2 3.0 2.9"}, Dataset: perf.Dataset{Scale: 540, Records: 100000},
		Floor: perf.Result{Name: "floor", RLS: st(time.Millisecond)},
		Reads: []perf.Result{{Name: "get by key", RLS: st(2 * time.Millisecond), FloorRatio: 2}, {Name: "record lineage", RLSError: "boom"}}}
	b, err := perf.NewBaseline(rep)
	require.NoError(t, err)
	require.Equal(t, map[string]float64{"get by key": 2}, b.Ratios, "a read without a ratio is left out")
	require.Equal(t, time.Millisecond, b.FloorP50)
	path := filepath.Join(t.TempDir(), "baseline.json")
	require.NoError(t, perf.WriteBaseline(path, b))
	back, err := perf.ReadBaseline(path)
	require.NoError(t, err)
	require.Equal(t, b.Ratios, back.Ratios)
	require.Equal(t, b.LoadAverage, back.LoadAverage)

	_, err = perf.NewBaseline(&perf.Report{Reads: []perf.Result{{Name: "get by key"}}})
	require.Error(t, err, "a run with no ratio makes no baseline")
	_, err = perf.ReadBaseline(filepath.Join(t.TempDir(), "absent.json"))
	require.Error(t, err)

	rep.Reads[0].FloorRatio = 3.5
	rep.Check = &perf.Check{Path: path, Tolerance: 1.5, Baseline: back, Rows: perf.CompareBaseline(back, rep.Reads, 1.5)}
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	require.Contains(t, md.String(), "## Regression check")
	require.Contains(t, md.String(), "load average 3.1 3.0 2.9 / 3.2 3.0 2.9")
	require.Contains(t, md.String(), "| get by key | 2.0× | 3.5× | 1.75 | FAILED: 3.5× the floor, baseline 2.0×: 1.75 times it |")
	var sum bytes.Buffer
	require.NoError(t, rep.Check.WriteCheckSummary(&sum))
	require.Contains(t, sum.String(), "get by key")
	require.ErrorContains(t, rep.Check.Error(), "1 of 1 reads past 1.5×")
}
