package reads_test

import (
	"context"
	"math"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
)

// TestSearchTierWords: a three-word query with fewer than five full
// matches reads its second tier from the pairs of the words' score
// plateaus (lb_search_tier_pairs) only when two of the words some Record
// holds are expected to meet in 7 × search_candidates Records or more (the
// lexicon's counts over the branch's Records, lb_search_tier_words);
// otherwise the postings walk (lb_search_tiers) reads it. A word no Record
// holds (no correction either) is left out: the tier is the other two
// words' meeting, one pair. Each case asserts the path (the calls of
// lb_search_pairs_of and lb_search_tiers; each word's plateaus read once,
// lb_search_word_plateaus, for every pair it is in) and the answer, equal
// to the exhaustive ranking, at candidates on either side of the boundary.
func TestSearchTierWords(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "tier-words")
	f.commit("alice", "", tierParts(900)...)
	// Main's Record counters (the fixture's commits keep none): the choice
	// of path reads them.
	f.keepCounters()

	// The meeting expected of the two most common words held, as
	// lb_search_tier_words reckons it.
	expected := func(words ...string) float64 {
		var n []float64
		for _, w := range words {
			var c float64
			err := s.Pool.QueryRow(f.ctx, `SELECT coalesce((SELECT records FROM mat_lexicon
				WHERE domain_id = $1 AND branch_id = $2 AND word = $3), 0)`, f.domain, f.branch, w).Scan(&c)
			require.NoError(t, err)
			n = append(n, c)
		}
		var records float64
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_records($1, $2)`, f.domain, f.branch).Scan(&records))
		require.Equal(t, 900.0, records)
		best := 0.0
		for i := range n {
			for j := i + 1; j < len(n); j++ {
				best = math.Max(best, n[i]*n[j]/records)
			}
		}
		return best
	}
	three := expected("alpha", "beta", "gamma")
	two := expected("alpha", "beta", "zzqx")
	require.Greater(t, three, 100.0)
	require.Greater(t, two, 100.0)
	// The largest candidates that still take the pairs, and the next.
	atPairs := func(est float64) int { return int(math.Floor(est / 7)) }

	for _, tc := range []struct {
		name       string
		q          string
		candidates int
		// pairs is the calls of lb_search_pairs_of (0: the walk alone),
		// words the words whose plateaus the pairs read.
		pairs, words int
	}{
		{"pairs: expected to meet in 7 × candidates", "alpha beta gamma", atPairs(three), 3, 3},
		{"pairs: far above", "gamma alpha beta", 10, 3, 3},
		{"walk: expected to meet in fewer", "alpha beta gamma", atPairs(three) + 1, 0, 0},
		{"walk: far below", "beta gamma alpha", 1000, 0, 0},
		{"unknown word: the other two words' pair", "alpha beta zzqx", atPairs(two), 1, 2},
		{"unknown word first: the other two words' pair", "zzqx gamma alpha", 10, 1, 2},
		{"unknown word, the two others expected in fewer: the walk", "alpha beta zzqx", atPairs(two) + 1, 0, 0},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := reads.Config{SearchCandidates: tc.candidates, PartialMinResults: 5, PartialCandidates: 50}
			for _, limit := range []int{1, 5, 20} {
				res, err := reads.New(s, cfg).Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: limit})
				require.NoError(t, err)
				require.False(t, res.Truncated)
				require.Empty(t, res.Corrections, "zzqx has no correction")
				want := rankByWords(t, s, f, tc.q, limit)
				require.Len(t, want, limit, "the dataset has too few partial matches")
				requireSameRanking(t, s, f, tc.q, want, res.Results)
			}
			got := functionCalls(t, f, "all", []string{"lb_search_pairs_of", "lb_search_word_plateaus", "lb_search_plateau_sizes",
				"lb_search_tier_pairs", "lb_search_tiers"},
				func(ctx context.Context, tx pgx.Tx) error {
					return drain(tx.Query(ctx, `SELECT * FROM lb_search('main', $1, '', 20, NULL, $2, 5, 50)`, tc.q, tc.candidates))
				})
			require.Equal(t, int64(tc.pairs), got["lb_search_pairs_of"], "%v", got)
			require.Equal(t, int64(tc.words), got["lb_search_word_plateaus"], "each word's plateaus read once: %v", got)
			require.Equal(t, int64(tc.words), got["lb_search_plateau_sizes"], "each word's plateaus counted once: %v", got)
			if tc.pairs > 0 {
				require.Equal(t, int64(1), got["lb_search_tier_pairs"], "%v", got)
				require.Zero(t, got["lb_search_tiers"], "the pairs fill the answer: %v", got)
			} else {
				require.Zero(t, got["lb_search_tier_pairs"], "%v", got)
				require.Equal(t, int64(1), got["lb_search_tiers"], "%v", got)
			}
		})
	}
}

// TestSearchTierPairsOnALargeBranch: on a branch of 3,000 ×
// search_candidates Records or more the second tier comes from the pairs
// of the words' score plateaus however few Records the words are expected
// to meet in (the walk of their postings grows with the branch), and the
// answer is the exhaustive ranking.
func TestSearchTierPairsOnALargeBranch(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "tier-pairs-large")
	f.commit("alice", "", wordParts(3000, "plain", func(i int) (name, note []string) {
		if i%30 == 0 {
			name = append(name, "ka")
			if i%150 == 0 {
				name = append(name, "ka")
			}
		}
		if i%60 == 0 || i%60 == 7 {
			note = append(note, "kb")
			if i%180 == 7 {
				name = append(name, "kb")
			}
		}
		if i%1500 == 0 || i%90 == 45 || i%120 == 7 {
			note = append(note, "kc")
			if i%270 == 45 {
				name = append(name, "kc")
			}
		}
		return name, note
	})...)
	f.keepCounters()
	var records, ka, kb float64
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_records($1, $2),
		(SELECT records FROM mat_lexicon WHERE domain_id = $1 AND branch_id = $2 AND word = 'ka'),
		(SELECT records FROM mat_lexicon WHERE domain_id = $1 AND branch_id = $2 AND word = 'kb')`, f.domain, f.branch).Scan(&records, &ka, &kb))
	require.Equal(t, 3000.0, records)
	require.Less(t, ka*kb/records, 7.0, "expected to meet in fewer than 7 × candidates")
	// More Records hold some word than 8 × partial candidates: not the
	// GIN index's partial tiers.
	require.Greater(t, ka+kb, 8.0*20)

	const q = "ka kb kc"
	r := reads.New(s, reads.Config{SearchCandidates: 1, PartialMinResults: 5, PartialCandidates: 20})
	requireSearchExhaustive(t, s, f, r, q, nil, true, 1, 5, 20, 60)
	calls := func(candidates int) map[string]int64 {
		return searchCallsAt(t, f, q, candidates, 20, "lb_search_tier_pairs", "lb_search_tiers")
	}
	got := calls(1)
	require.Equal(t, int64(1), got["lb_search_tier_pairs"], "%v", got)
	require.Zero(t, got["lb_search_tiers"], "%v", got)
	// Two candidates: a branch of fewer than 3,000 × candidates Records,
	// and the words expected to meet in fewer than 7 × candidates: the walk.
	got = calls(2)
	require.Zero(t, got["lb_search_tier_pairs"], "%v", got)
	require.Equal(t, int64(1), got["lb_search_tiers"], "%v", got)
}
