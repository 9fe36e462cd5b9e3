package perf_test

import (
	"bytes"
	"context"
	"os"
	"strconv"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
)

// TestMeasureMerges runs the Proposal measurement on a small fixture.
// LOREBASE_MERGE_PERF_SCALE sets a larger scale (and then measures
// Proposals of 1,000 and 10,000 changes and prints the report's section).
//
// Not parallel: it runs before the package's parallel tests, so its load
// does not starve the timed windows of the concurrency test.
func TestMeasureMerges(t *testing.T) {
	ctx := context.Background()
	scale, sizes := 1, []int{10, 40}
	if v := os.Getenv("LOREBASE_MERGE_PERF_SCALE"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "LOREBASE_MERGE_PERF_SCALE")
		scale, sizes = n, []int{1000, 10000}
	}
	s := pgtest.Store(t)
	cfg := supply.Config{Seed: 2, Scale: scale, ExtraLinks: 1}
	_, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, SkipVacuum: scale == 1})
	require.NoError(t, err)
	gen, err := supply.New(cfg)
	require.NoError(t, err)
	w, err := perf.NewWorkload(ctx, s, gen, 3, 50)
	require.NoError(t, err)
	m, err := w.MeasureMerges(ctx, perf.MergeOptions{Sizes: sizes, Harness: perf.Harness{Warmup: 2, Iterations: 20}})
	require.NoError(t, err)
	require.Empty(t, m.Errors)
	require.Len(t, m.Runs, len(sizes))
	for i, r := range m.Runs {
		require.Equal(t, sizes[i], r.Changes)
		require.Equal(t, 20, r.Show.N)
		require.Equal(t, 20, r.DiffPage.N)
		require.Positive(t, r.Merge)
	}
	var buf bytes.Buffer
	rep := &perf.Report{Merges: m}
	require.NoError(t, rep.WriteMarkdown(&buf))
	require.Contains(t, buf.String(), "## Proposals and merges")
	if scale > 1 {
		t.Logf("scale %d:\n%s", scale, buf.String())
	}
}
