package perf_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
)

func TestMeasureBranches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := openStore(t)
	cfg := supply.Config{Seed: 2, Scale: 1, ExtraLinks: 1}
	_, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, SkipVacuum: true})
	require.NoError(t, err)
	gen, err := supply.New(cfg)
	require.NoError(t, err)
	w, err := perf.NewWorkload(ctx, s, gen, 3, 4)
	require.NoError(t, err)
	for _, tc := range []struct {
		name     string
		skipCopy bool
		against  string
		deleted  string
		commits  int
	}{
		{"with the copy", false, "copy", "copy", 3},
		{"without the copy", true, "main", "overlay", 2},
	} {
		t.Run(tc.name, func(t *testing.T) {
			br, err := w.MeasureBranches(ctx, perf.BranchOptions{Runs: 3, Many: 4, CommitChanges: 10, SkipCopy: tc.skipCopy,
				Harness: perf.Harness{Warmup: 1, Iterations: 3}})
			require.NoError(t, err)
			require.Empty(t, br.Errors)
			require.Equal(t, tc.against, br.Against)
			require.Equal(t, tc.deleted, br.Deleted)
			for _, p := range br.Paired {
				require.Empty(t, p.Error, p.Name)
				require.Equal(t, 3, p.Overlay.N, p.Name)
				require.Equal(t, 3, p.Copy.N, p.Name)
			}
			for _, c := range br.Commits {
				require.NotNil(t, c.RLS, c.Name)
			}
			require.Equal(t, 4, br.ManyOverlayCommits.N)
			require.Equal(t, 3, br.OverlayCreate.N)
			if tc.skipCopy {
				require.Nil(t, br.Copy)
			} else {
				require.NotNil(t, br.Copy)
				require.Positive(t, br.Copy.Written)
				require.Positive(t, br.Copy.Batches)
			}
			require.NotNil(t, br.Delete)
			require.Positive(t, br.Delete.Written)
			require.Len(t, br.Commits, tc.commits)
			require.Len(t, br.Paired, len(perf.ReadNames()))
			require.Equal(t, 4, br.ManyOverlays.N)
			require.Len(t, br.OverlayEffects, 2)
			for _, e := range br.OverlayEffects {
				require.NotNil(t, e.Before, e.Error)
				require.NotNil(t, e.After, e.Error)
			}
		})
	}
}
