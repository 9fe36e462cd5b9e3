package reads_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
)

// TestSearchCorrelatedWords: three words that meet far more often than
// independent ones would (expected in fewer than 32 × search_candidates
// Records by the lexicon's counts, held together by more) are ranked from
// every full match the GIN index reads, up to 128 × search_candidates:
// exact and not truncated, where the postings walk's budget would run out;
// another Domain's Records in the same partition, under the same keys and
// holding the words at their best, stay out.
func TestSearchCorrelatedWords(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "correlated")
	var changes []change
	for i := range 1000 {
		var name, note []string
		for j, w := range []string{"alpha", "beta", "gamma"} {
			// 90 Records hold all three, 100 more each one alone.
			if i < 90 || (i >= 100+j*100 && i < 200+j*100) {
				for k := range 1 + (i+j)%3 {
					if (i+k+j)%4 == 0 {
						name = append(name, w)
					} else {
						note = append(note, w)
					}
				}
			}
		}
		name = append(name, fmt.Sprintf("p%d", i))
		changes = append(changes, put("Part", fmt.Sprintf("P-%04d", i), map[string]any{
			"name": strings.Join(name, " "), "note": strings.Join(append(note, "plain"), " ")}))
	}
	f.commit("alice", "", changes...)
	// Main's Record counters (the fixture's commits keep none): the choice
	// of path reads them (1,000 Records; each word in 190: 6.9 expected to
	// hold all three).
	f.keepCounters()
	other := f.sharingPartition(t, s, "correlated-other", put("Part", "P-0000", map[string]any{"name": "alpha beta gamma"}))
	var hostile []change
	for i := range 40 {
		hostile = append(hostile, put("Part", fmt.Sprintf("P-%04d", i*2), map[string]any{
			"name": "alpha alpha alpha beta beta beta gamma gamma gamma"}))
	}
	other.commit("zed", "", hostile...)

	// One candidate: the GIN index may read 128 full matches (90 here),
	// the walk score 32 Records.
	r := reads.New(s, reads.Config{SearchCandidates: 1})
	for _, q := range []string{"alpha beta gamma", "gamma alpha beta"} {
		for _, limit := range []int{1, 20, 100} {
			t.Run(fmt.Sprintf("%s/%d", q, limit), func(t *testing.T) {
				res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: q, Limit: limit})
				require.NoError(t, err)
				require.False(t, res.Truncated)
				require.Equal(t, 90, res.Ranked, "every full match ranked")
				requireSameRanking(t, s, f, q, rankByWords(t, s, f, q, limit), res.Results)
			})
		}
	}
}
