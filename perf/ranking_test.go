package perf_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
)

func TestScoreRanking(t *testing.T) {
	t.Parallel()
	// 25 matches: five at gain 2, twenty at gain 1 (tied), best first.
	var exKeys []string
	var exGains []float64
	for i := range 25 {
		exKeys = append(exKeys, fmt.Sprintf("k%02d", i))
		g := 1.0
		if i < 5 {
			g = 2
		}
		exGains = append(exGains, g)
	}
	gains := func(keys []string) []float64 {
		out := make([]float64, len(keys))
		for i, k := range keys {
			for j, e := range exKeys {
				if e == k {
					out[i] = exGains[j]
				}
			}
		}
		return out
	}
	for _, tc := range []struct {
		name                  string
		got                   []string
		overlap, strict, ndcg float64
	}{
		{"the exhaustive top 20", exKeys[:20], 1, 1, 1},
		{"other Records of the tie", append(append([]string{}, exKeys[:5]...), exKeys[10:25]...), 1, 0.75, 1},
		{"the best five missing", exKeys[5:25], 0.75, 0.75, 0},
		{"nothing", nil, 0, 0, 0},
		{"a Record that does not match", append([]string{"zz"}, exKeys[:19]...), 0.95, 0.95, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o, s, n := perf.ScoreRanking(tc.got, gains(tc.got), exKeys, exGains)
			require.InDelta(t, tc.overlap, o, 1e-9)
			require.InDelta(t, tc.strict, s, 1e-9)
			if tc.ndcg == 1 || tc.ndcg == 0 && len(tc.got) == 0 {
				require.InDelta(t, tc.ndcg, n, 1e-9)
			} else {
				require.Less(t, n, 1.0)
				require.Positive(t, n)
			}
		})
	}
	o, s, n := perf.ScoreRanking(nil, nil, nil, nil)
	require.Equal(t, []float64{1, 1, 1}, []float64{o, s, n}, "no match and no result is right")
}

// TestRankingAndHTTPOnLoadedDomain measures the ranking (served and
// candidate paths) and the reads over HTTP on a small loaded Domain.
func TestRankingAndHTTPOnLoadedDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	w := loadedWorkload(t, supply.Config{Seed: 3, Scale: 2, ExtraLinks: 1}, 5, 4)
	rk, err := w.MeasureRanking(ctx, perf.RankingOptions{PerClass: 2, Repeats: 1, Candidates: true})
	require.NoError(t, err)
	require.Len(t, rk.Queries, 2*len(perf.RankingClasses))
	byName := map[string]perf.SearchPath{}
	for _, p := range rk.Paths {
		if p.Name != "RUM" { // absent where the server lacks the rum extension
			require.Empty(t, p.Error, p.Name)
		}
		byName[p.Name] = p
	}
	for _, name := range []string{"served (package reads, lorebase_app)", "GIN, every match ranked"} {
		p, ok := byName[name]
		require.True(t, ok, name)
		require.Len(t, p.Classes, len(perf.RankingClasses), name)
		for _, c := range p.Classes {
			require.Equal(t, 2, c.Queries)
			require.Equal(t, 1.0, c.Overlap, "%s: %s", name, c.Class)
			require.Zero(t, c.Truncated, "%s: %s", name, c.Class)
		}
	}

	hk, err := w.StartKeeper(ctx)
	require.NoError(t, err)
	res, err := perf.Harness{Warmup: 1, Iterations: 3}.Run(ctx, w.HTTPReads(hk), nil)
	require.NoError(t, hk.Close())
	require.NoError(t, err)
	require.Len(t, res, len(perf.ReadNames())+1)
	for _, r := range res {
		require.Empty(t, r.RLSError, r.Name)
		require.NotNil(t, r.RLS, r.Name)
	}
}
