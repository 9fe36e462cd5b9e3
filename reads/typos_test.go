package reads_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
)

// TestSearchSwaps: the words one swap of two adjacent letters away, which
// lb_search_terms looks up before the trigram neighbours.
func TestSearchSwaps(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, tc := range []struct {
		word string
		want []string
	}{
		{"vavle", []string{"avvle", "vvale", "valve", "vavel"}},
		{"ab", []string{"ba"}},
		{"aab", []string{"aba"}},
		{"aa", []string{}},
		{"a", []string{}},
		{"", []string{}},
	} {
		var got []string
		require.NoError(t, s.Pool.QueryRow(t.Context(), `SELECT lb_search_swaps($1)`, tc.word).Scan(&got))
		require.Equal(t, tc.want, got, tc.word)
	}
}

// TestSearchCorrectsSwappedLetters: a word with two adjacent letters
// swapped is corrected to the word ("setel" shares two of its six
// trigrams with "steel": under pg_trgm's threshold), first among its
// corrections, on a branch and over an overlay's levels, and the
// overlay's results equal a copy's.
func TestSearchCorrectsSwappedLetters(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "swapped-letters", "")
	for _, tc := range []struct{ q, word, want string }{
		{"setel", "setel", "steel"}, {"vavle", "vavle", "valve"}, {"sprnig gaer", "gaer", "gear"}, {"hxe", "hxe", "hex"},
	} {
		for _, br := range []string{"main", "ov", "ov2", "ref"} {
			res, err := f.r.Search(f.ctx, f.domain, br, reads.SearchQuery{Q: tc.q, Limit: 5})
			require.NoError(t, err)
			require.NotEmpty(t, res.Corrections[tc.word], "%s %q: %v", br, tc.q, res.Corrections)
			require.Equal(t, tc.want, res.Corrections[tc.word][0], "%s %q: %v", br, tc.q, res.Corrections)
			require.NotEmpty(t, res.Results, "%s %q", br, tc.q)
		}
		for _, pair := range [][2]string{{"ov", "ref"}, {"ov2", "ref2"}} {
			for _, lim := range []int{1, 5, 20} {
				q := reads.SearchQuery{Q: tc.q, Limit: lim}
				want, err := f.r.Search(f.ctx, f.domain, pair[1], q)
				require.NoError(t, err)
				got, err := f.r.Search(f.ctx, f.domain, pair[0], q)
				require.NoError(t, err)
				require.Equal(t, want.Results, got.Results, "%s %+v", pair[0], q)
				require.Equal(t, want.Corrections, got.Corrections, "%s %+v", pair[0], q)
			}
		}
	}
}
