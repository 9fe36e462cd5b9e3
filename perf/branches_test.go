package perf_test

import (
	"context"
	"log/slog"
	"math/rand/v2"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

func TestMeasureBranches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := loadedWorkload(t, supply.Config{Seed: 2, Scale: 1, ExtraLinks: 1}, 3, 4)
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
			br, err := w.MeasureBranches(ctx, perf.BranchOptions{Runs: 3, Many: 4, CommitChanges: 10, SkipCopy: tc.skipCopy, AnswerCalls: 5,
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
			require.Len(t, br.Answers, len(perf.ReadNames()))
			for _, c := range br.Answers {
				require.Equal(t, 5, c.Calls, c.Name)
				require.Zero(t, c.Different, "%s: %s", c.Name, c.First)
			}
			require.Equal(t, 4, br.ManyOverlays.N)
			require.Len(t, br.OverlayEffects, 2)
			for _, e := range br.OverlayEffects {
				require.NotNil(t, e.Before, e.Error)
				require.NotNil(t, e.After, e.Error)
			}
		})
	}
}

// TestCompareAnswers: an overlay answers as main does at the fork, and the
// comparison sees it when main moves on: every Part updated on main changes
// what get, history and lineage answer for Parts, not what the overlay does.
func TestCompareAnswers(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := loadedWorkload(t, supply.Config{Seed: 5, Scale: 1, ExtraLinks: 1}, 3, 8)
	s := w.Store
	client, err := jobs.NewClient(s.Pool, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	_, err = s.CreateBranch(ctx, w.DomainID, store.CreateBranchRequest{Name: "cmp", From: perf.Branch, Mode: store.ModeOverlay}, jobs.Queue(client))
	require.NoError(t, err)

	same, err := w.CompareAnswers(ctx, "cmp", perf.Branch, 8)
	require.NoError(t, err)
	require.Len(t, same, len(perf.ReadNames()))
	for _, c := range same {
		require.Equal(t, 8, c.Calls, c.Name)
		require.Zero(t, c.Different, "%s: %s", c.Name, c.First)
	}

	changes, err := w.PartUpdates(rand.New(rand.NewPCG(1, 2)), w.Gen.Counts().Parts)
	require.NoError(t, err)
	_, err = w.Pipeline.Commit(ctx, w.DomainID, perf.Branch, &commit.Request{Message: "every Part", Author: "test", Changes: changes}, "")
	require.NoError(t, err)
	moved, err := w.CompareAnswers(ctx, "cmp", perf.Branch, 8)
	require.NoError(t, err)
	differ := map[string]int{}
	for _, c := range moved {
		differ[c.Name] = c.Different
		if c.Different > 0 {
			require.Contains(t, c.First, "call ", c.Name)
		}
	}
	// The keys drawn are of every Kind; Parts are most of them.
	for _, name := range []string{"get by key", "record history page", "record lineage"} {
		require.Positive(t, differ[name], name)
	}
	require.Zero(t, differ["links of a record"], "updating values changes no Link")
}
