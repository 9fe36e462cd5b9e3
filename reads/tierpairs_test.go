package reads_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// tierParts writes the Parts of the second-tier tests: alpha, beta and
// gamma 1 to 3 times in the name or the note (several score plateaus
// each), so that hundreds of Records hold two of them and only P-0001 and
// P-0002 hold all three; delta is in 3 Records.
func tierParts(n int) []change {
	var out []change
	for i := range n {
		var name, note []string
		add := func(w string) {
			for range 1 + (i/7+len(w))%3 {
				if (i/11+len(w))%4 == 0 {
					name = append(name, w)
				} else {
					note = append(note, w)
				}
			}
		}
		alpha, beta := i%2 == 0, i%3 == 0
		gamma := i%4 == 1 || (i%3 != 0 && i%5 == 2)
		if i == 1 || i == 2 {
			alpha, beta, gamma = true, true, true
		}
		for _, w := range []struct {
			w  string
			on bool
		}{{"alpha", alpha}, {"beta", beta}, {"gamma", gamma}, {"delta", i == 4 || i == 9 || i == 10}} {
			if w.on {
				add(w.w)
			}
		}
		name = append(name, fmt.Sprintf("p%d", i))
		out = append(out, put("Part", fmt.Sprintf("P-%04d", i), map[string]any{
			"name": strings.Join(name, " "), "note": strings.Join(append(note, "plain"), " ")}))
	}
	return out
}

// TestSearchTierPairs: a three-word query with fewer than five full
// matches ranks its second tier (two of the three words) from the pairs
// of the words' score plateaus (lb_search_tier_pairs): what lb_search
// returns is the exhaustive ranking (ties interchangeable) at every limit,
// in every order of the words, the first tier following from the postings
// walk when the second is too small; lb_search_tier_pairs alone returns
// the exhaustive second tier or NULL when it cannot fill it; another
// Domain's Records in the same partition, under the same keys and holding
// two words at their best, stay out.
func TestSearchTierPairs(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "tier-pairs")
	f.commit("alice", "", tierParts(900)...)
	other := f.sharingPartition(t, s, "tier-pairs-other", put("Part", "P-0000", map[string]any{"name": "alpha beta"}))
	var hostile []change
	for i := range 300 {
		hostile = append(hostile, put("Part", fmt.Sprintf("P-%04d", i*3), map[string]any{
			"name": "alpha alpha alpha beta beta gamma gamma", "note": "alpha beta gamma"}))
	}
	other.commit("zed", "", hostile...)

	for _, tc := range []struct {
		q     string
		limit int
	}{{"alpha beta gamma", 1}, {"alpha beta gamma", 5}, {"alpha beta gamma", 20}, {"gamma alpha beta", 20},
		{"beta gamma alpha", 7}, {"alpha beta gamma", 100}, {"alpha beta delta", 20},
		{"delta gamma alpha", 20}} {
		t.Run(fmt.Sprintf("%s/%d", tc.q, tc.limit), func(t *testing.T) {
			res, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: tc.limit})
			require.NoError(t, err)
			require.False(t, res.Truncated)
			want := rankByWords(t, s, f, tc.q, tc.limit)
			require.Len(t, want, tc.limit, "the dataset has too few partial matches")
			requireSameRanking(t, s, f, tc.q, want, res.Results)
		})
	}

	// lb_search_tier_pairs alone against the exhaustive second tier: the
	// sums of two words' postings of every Record holding exactly two.
	full := f.strings(`SELECT key FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted
		AND search @@ 'alpha & beta & gamma'::tsquery ORDER BY key`, f.domain, f.branch)
	require.Equal(t, []string{"P-0001", "P-0002"}, full)
	rows, err := s.Pool.Query(f.ctx, `SELECT sum(score::float8) FROM mat_search_words
		WHERE domain_id = $1 AND branch_id = $2 AND word IN ('alpha', 'beta', 'gamma')
		GROUP BY key HAVING count(*) = 2 ORDER BY 1 DESC`, f.domain, f.branch)
	require.NoError(t, err)
	tier, err := pgx.CollectRows(rows, pgx.RowTo[float64])
	require.NoError(t, err)
	require.Greater(t, len(tier), 100)
	words := []string{"alpha", "beta", "gamma"}
	for _, limit := range []int{1, 2, 20, 99, len(tier), len(tier) + 1} {
		var keys []string
		var scores []float64
		var ranked int
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT keys, scores, ranked FROM lb_search_tier_pairs($1, $2, $3, $4, $5)`,
			f.domain, f.branch, words, full, limit).Scan(&keys, &scores, &ranked))
		if limit > len(tier) {
			require.Nil(t, keys, "more than the second tier asked: the first follows")
			continue
		}
		requireTopWithTies(t, scores, limit, "limit %d", limit)
		require.GreaterOrEqual(t, ranked, limit)
		for i, k := range keys {
			require.NotContains(t, full, k)
			require.InDelta(t, tier[i], scores[i], 1e-6, "limit %d: %d-th best", limit, i)
			own := f.strings(`SELECT sum(score::float8)::text FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2
				AND key = $3 AND word IN ('alpha', 'beta', 'gamma') HAVING count(*) = 2`, f.domain, f.branch, k)
			require.Len(t, own, 1, "%s holds exactly two words", k)
			require.InDelta(t, scores[i], parseFloat(t, own[0]), 1e-12, "%s's own sum", k)
		}
	}
	// Each word is in two of the three pairs: its plateaus are read once
	// and no plateau's size is counted twice (lb_search_word_plateaus,
	// lb_search_pairs_of handing back what it counted), however many pairs
	// need it.
	const count = "lb_search_plateau_count(integer,integer,text,real,integer)"
	var plateaus int64
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT sum(cardinality(lb_search_plateaus($1, $2, w, 256)))
		FROM unnest($3::text[]) w`, f.domain, f.branch, words).Scan(&plateaus))
	var memoKeys []string
	got := functionCalls(t, f, "pl", []string{"lb_search_word_plateaus", "lb_search_plateaus", "lb_search_pairs_of", count},
		func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT keys FROM lb_search_tier_pairs($1, $2, $3, $4, 99)`, f.domain, f.branch, words, full).Scan(&memoKeys)
		})
	require.Equal(t, int64(3), got["lb_search_pairs_of"], "%v", got)
	require.Equal(t, int64(3), got["lb_search_word_plateaus"], "%v", got)
	require.Equal(t, int64(3), got["lb_search_plateaus"], "%v", got)
	require.Positive(t, got[count], "%v", got)
	require.LessOrEqual(t, got[count], plateaus, "a plateau counted twice: %v", got)
	require.NotNil(t, memoKeys)

	// lorebase_app may call it: scoped to the other Domain, row-level
	// security leaves it none of this Domain's postings (no second tier).
	require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, other.domain); err != nil {
			return err
		}
		var keys []string
		if err := tx.QueryRow(f.ctx, `SELECT keys FROM lb_search_tier_pairs($1, $2, $3, $4, 20)`,
			f.domain, f.branch, words, full).Scan(&keys); err != nil {
			return err
		}
		require.Nil(t, keys)
		return nil
	}))
}
