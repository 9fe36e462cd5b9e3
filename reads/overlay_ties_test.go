package reads_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOverlayWithoutOwnRowsSearchesAsItsBase: an overlay that decides no
// key (no own rows, its base unchanged since the fork) answers every
// search exactly as its base does, the Records ranked and the count of
// candidates included. 120 Parts each match two of the words "alpha",
// "beta" and "gamma" with the same score, so the partial tier's answer
// depends on how the base is asked: an overlay that asked its base for
// more than the limit listed other Records among the tied ones at 1M, and
// here counts other candidates ("ranked").
func TestOverlayWithoutOwnRowsSearchesAsItsBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newStore(t), "overlay-ties")
	cs := []change{put("Supplier", "S-1", map[string]any{"name": "Supplier one", "country": "C1"})}
	for i := range 120 {
		cs = append(cs, put("Part", fmt.Sprintf("P-%03d", (i*37)%120), map[string]any{"name": fmt.Sprintf("Part %s %d", []string{"alpha beta", "alpha gamma", "beta gamma"}[(i*7/3)%3], i), "maker": "S-1"}))
	}
	f.commit("alice", "", cs...)
	f.fork("ov", "overlay", revInfo{})

	conn, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	defer conn.Release()
	search := func(branch, q string, limit, cands, partial int) []string {
		return scopedStrings(t, f, conn, `SELECT coalesce(key, '') || ' ' || coalesce(score::text, '') || ' ' || match || ' ' || ranked || ' ' || truncated
			FROM lb_search($1, $2, '', $3, NULL, $4, 5, $5)`, branch, q, limit, cands, partial)
	}
	for _, tc := range []struct {
		q                     string
		limit, cands, partial int
	}{
		{"alpha beta zircon", 5, 10, 8},
		{"alpha beta zircon", 5, 4, 8},
		{"alpha beta zircon", 20, 10, 30},
		{"alpha beta gamma", 5, 10, 8},
		{"alpha beta gamma", 20, 10, 100},
		{"alpha beta gamma", 20, 30, 100},
		{"alpha beta gamma", 7, 5, 9},
		{"alpha zircon", 3, 5, 4},
		{"alpha beta", 10, 5, 100},
	} {
		want := search("main", tc.q, tc.limit, tc.cands, tc.partial)
		require.NotEmpty(t, want)
		require.Equal(t, want, search("ov", tc.q, tc.limit, tc.cands, tc.partial), "%+v", tc)
	}
}

// tiedWorld is a Domain whose Parts tie in score across any limit: 3 match
// "alpha beta gamma"; 3,000 match two of those words, one in the name and
// one in the note, so that a pair of words scores one sum from postings
// that are not the same (a Part read early from one word's postings is
// read late from the other's), and each word is in the name of another
// number of Parts (alpha 1,600, beta 400, gamma 1,000: a walk of the
// postings reaches the end of one word's best postings before the
// other's; each word's plateaus hold more than 512 postings, so the pairs
// of plateaus are read); 60 hold two of the words in the name (a higher
// score); 40 match one word.
func tiedWorld(t *testing.T, domain string) *fixture {
	t.Helper()
	f := newFixture(t, newStore(t), domain)
	cs := []change{put("Supplier", "S-1", map[string]any{"name": "Supplier one", "country": "C1"})}
	for i := range 3 {
		cs = append(cs, put("Part", fmt.Sprintf("F-%d", i), map[string]any{"name": fmt.Sprintf("Part alpha beta gamma %d", i), "maker": "S-1"}))
	}
	words := []string{"alpha", "beta", "gamma"}
	// The word of the name and the word of the note, 200 Parts each.
	pairs := [][2]int{{0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {0, 1}, {1, 0}, {0, 2}, {0, 2}, {2, 0}, {1, 2}, {2, 1}, {2, 1}, {2, 1}, {2, 1}}
	for i := range 3000 {
		p := pairs[(i*7)%15]
		cs = append(cs, put("Part", fmt.Sprintf("P-%04d", (i*37)%3000), map[string]any{"name": fmt.Sprintf("Part %s %d", words[p[0]], i),
			"note": words[p[1]], "maker": "S-1"}))
	}
	for i := range 60 {
		p := pairs[i%6]
		cs = append(cs, put("Part", fmt.Sprintf("R-%02d", i), map[string]any{"name": fmt.Sprintf("Part %s %s %d", words[p[0]], words[p[1]], i), "maker": "S-1"}))
	}
	for i := range 40 {
		cs = append(cs, put("Part", fmt.Sprintf("Q-%02d", i), map[string]any{"name": fmt.Sprintf("Part %s %d", []string{"alpha", "beta", "gamma", "delta"}[i%4], i), "maker": "S-1"}))
	}
	f.commit("alice", "", cs...)
	return f
}

// tiedSearch is one search's parameters: the query, the limit, the
// candidates and the partial candidates.
type tiedSearch struct {
	q                     string
	limit, cands, partial int
}

// tiedSearches are the queries of tiedWorld over the paths of partial
// matching (the GIN index's tiers, the postings' tiers, the pairs of the
// second tier, the threshold walk), full matches tied at the limit, a word
// no Record holds and a misspelled word.
func tiedSearches() []tiedSearch {
	var out []tiedSearch
	for _, q := range []string{"alpha beta gamma", "alpha beta zircon", "alpha beta", "alpah beta gamma", "beta gamma delta"} {
		for _, cp := range [][2]int{{1, 100}, {5, 8}, {100, 100}} {
			for _, lim := range []int{5, 70, 600} {
				out = append(out, tiedSearch{q, lim, cp[0], cp[1]})
			}
		}
	}
	return out
}

// TestPartialTiesAtTheLimitArePrefixes: on main the answer to a search
// with limit L is the first L results of the same search with a larger
// limit (the same keys in the same order with the same scores), however
// many Records tie at the limit: ties are decided by key over every match
// of the tied score, not by which candidates the limit gathered.
func TestPartialTiesAtTheLimitArePrefixes(t *testing.T) {
	t.Parallel()
	f := tiedWorld(t, "partial-ties")
	conn, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	defer conn.Release()
	search := func(s tiedSearch) (rows []string, truncated bool) {
		out := scopedStrings(t, f, conn, `SELECT coalesce(key, '') || ' ' || coalesce(score::text, '') || ' ' || match || ' ' || truncated
			FROM lb_search('main', $1, '', $2, NULL, $3, 5, $4)`, s.q, s.limit, s.cands, s.partial)
		require.NotEmpty(t, out)
		return out[:len(out)-1], strings.HasSuffix(out[len(out)-1], "true")
	}
	for _, s := range tiedSearches() {
		got, cut := search(s)
		require.NotEmpty(t, got, "%+v", s)
		for _, k := range []int{1, 900} {
			more := s
			more.limit = min(s.limit+k, 1000)
			want, moreCut := search(more)
			if cut || moreCut {
				continue
			}
			require.Equal(t, want[:min(len(want), s.limit)], got, "%+v against limit %d", s, more.limit)
		}
	}
}

// TestOverlayWithOwnRowsTiesAsCopy: an overlay with own rows (a change
// to a Record no query matches; changes to tied Records) answers every
// search of tiedWorld as a copy holding the same Records: the same keys
// in the same order with the same scores, however many Records tie at the
// limit, unless a budget cut the ranking (truncated: the first Records
// found, not the best).
func TestOverlayWithOwnRowsTiesAsCopy(t *testing.T) {
	t.Parallel()
	f := tiedWorld(t, "overlay-own-ties")
	ov := f.fork("ov", "overlay", revInfo{})
	ov.commit("bob", "", patch("S-1", map[string]any{"name": "Supplier renamed"}))
	ov2 := f.fork("ov2", "overlay", revInfo{})
	ov2.commit("carol", "", patch("P-0007", map[string]any{"name": "Part beta 7", "note": "alpha"}),
		patch("P-0004", map[string]any{"name": "Part alpha 4", "note": "gamma"}), patch("P-0100", map[string]any{"name": "Part delta"}),
		patch("P-0011", map[string]any{"name": "Part alpha beta gamma 11"}), del("P-0012"))
	readyCopy(ov2, "ref2")
	conn, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	defer conn.Release()
	search := func(branch string, s tiedSearch) (rows []string, truncated bool) {
		out := scopedStrings(t, f, conn, `SELECT coalesce(key, '') || ' ' || coalesce(score::text, '') || ' ' || match || ' ' || truncated
			FROM lb_search($1, $2, '', $3, NULL, $4, 5, $5)`, branch, s.q, s.limit, s.cands, s.partial)
		require.NotEmpty(t, out)
		truncated = strings.HasSuffix(out[len(out)-1], " true")
		for i, x := range out {
			out[i] = strings.TrimSuffix(strings.TrimSuffix(x, " true"), " false")
		}
		return out, truncated
	}
	compared := 0
	for _, s := range tiedSearches() {
		for _, pair := range [][2]string{{"ov", "main"}, {"ov2", "ref2"}} {
			want, cut := search(pair[1], s)
			got, ovCut := search(pair[0], s)
			if cut || ovCut {
				continue
			}
			require.Equal(t, want, got, "%s against %s, %+v", pair[0], pair[1], s)
			compared++
		}
	}
	require.Greater(t, compared, len(tiedSearches()))
}
