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

// TestSearchTwoCorrections: a misspelled word with two present
// corrections is ranked by lb_search_or's static statement: each
// correction's best postings, and the Records holding both (more than the
// limit, on a few score plateaus, so ties at the limit are decided by
// key), ranked as the GIN index's scan reads them. Its answer is the
// exhaustive ranking of every match, Record by Record in order, with
// every match counted; another Domain's better Records in the same
// partition stay out.
func TestSearchTwoCorrections(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "two-corrections")
	var changes []change
	for i := range 600 {
		changes = append(changes, put("Part", fmt.Sprintf("F-%04d", i), map[string]any{"name": fmt.Sprintf("filler f%d", i)}))
	}
	for i := range 400 {
		var name, note []string
		if i%4 != 3 {
			name = append(name, strings.Repeat("gasket ", 1+i%2))
		} else {
			note = append(note, "gasket")
		}
		if i%3 == 0 {
			note = append(note, "gaskets")
		}
		if i%7 == 0 {
			name = append(name, "gaskets")
		}
		changes = append(changes, put("Part", fmt.Sprintf("P-%03d", (i*37)%400), map[string]any{
			"name": strings.Join(name, " "), "note": strings.Join(note, " ")}))
	}
	f.commit("alice", "", changes...)
	f.commit("bob", "", del("P-000"), del("P-037"), patch("P-074", map[string]any{"name": "gasket gaskets gasket gaskets", "note": ""}))
	other := f.sharingPartition(t, s, "two-corrections-other", put("Part", "X-0", map[string]any{"name": "gasket gaskets gasket gaskets gasket"}))
	other.commit("zed", "", put("Part", "X-1", map[string]any{"name": "gaskets gasket gaskets", "note": "gasket gaskets"}))

	var both, matching int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FILTER (WHERE search @@ 'gasket & gaskets'::tsquery), count(*)
		FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted AND search @@ 'gasket | gaskets'::tsquery`,
		f.domain, f.branch).Scan(&both, &matching))
	require.Greater(t, both, 100, "more Records hold both than any limit")
	keys := func(rs []reads.SearchResult) []string {
		out := make([]string, len(rs))
		for i, x := range rs {
			out[i] = x.Key
		}
		return out
	}
	for _, limit := range []int{1, 2, 5, 20, 57, 100} {
		res, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "gaskte", Limit: limit})
		require.NoError(t, err)
		require.ElementsMatch(t, []string{"gasket", "gaskets"}, res.Corrections["gaskte"])
		require.False(t, res.Truncated)
		require.Equal(t, matching, res.Ranked, "every match counted once")
		want := rankByWords(t, s, f, "gaskte", limit)
		require.Equal(t, keys(want), keys(res.Results), "limit %d", limit)
		requireSameRanking(t, s, f, "gaskte", want, res.Results)
	}
	// The static statement answered, not one built as text.
	got := functionCalls(t, f, "all", []string{"lb_search_or_ok", "lb_search_or_sql"}, func(ctx context.Context, tx pgx.Tx) error {
		return drain(tx.Query(ctx, searchSQL, "main", "gaskte", 20))
	})
	require.Equal(t, int64(1), got["lb_search_or_ok"], "%v", got)
	require.Zero(t, got["lb_search_or_sql"], "%v", got)
}

// gasketSupply: the name and note words of the i-th Part of the tests of
// a misspelled common word beside common words: gasket in more than half
// the Parts, supply in more than half, each once or twice in the name or
// once in the note.
func gasketSupply(i int) (name, note []string) {
	switch {
	case i%10 == 0:
		name = append(name, "gasket", "gasket")
	case i%2 == 0:
		name = append(name, "gasket")
	case i%7 == 1:
		note = append(note, "gasket")
	}
	switch {
	case i%9 == 0:
		name = append(name, "supply", "supply")
	case i%3 == 0:
		note = append(note, "supply")
	case i%4 == 1:
		name = append(name, "supply")
	}
	return name, note
}

// gasketWorld: a Domain of 900 Parts of gasketSupply's words, the words
// extra gives the i-th added to its note, on main; and another Domain in
// its partition holding Parts P-001 and P-002 with the values given,
// whose Records would rank first were their scores this Domain's.
func gasketWorld(t *testing.T, s *store.Store, name string, extra func(i int) []string, p1, p2 map[string]any) *fixture {
	t.Helper()
	f := newFixture(t, s, name)
	f.commit("alice", "", wordParts(900, "", func(i int) (name, note []string) {
		name, note = gasketSupply(i)
		return name, append(note, extra(i)...)
	})...)
	other := f.sharingPartition(t, s, name+"-other", put("Part", "P-001", p1))
	other.commit("zed", "", put("Part", "P-002", p2))
	return f
}

// TestSearchMisspelledBesideCommonWord: a misspelled common word beside a
// common word (the misspelling ORed with a common correction and a rarer
// one, and a word in many Records) ranks its full matches from the two
// common words' plateaus and the few Records holding the rarer
// correction, not from a walk of the postings: what it returns is the
// exhaustive ranking, at every limit, in this Domain only.
func TestSearchMisspelledBesideCommonWord(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "beside-common")
	f.commit("alice", "", wordParts(900, "", func(i int) (name, note []string) {
		name, note = gasketSupply(i)
		if i%45 == 4 || i%45 == 9 || i == 10 {
			note = append(note, "gaskets")
		}
		return name, note
	})...)
	f.commit("bob", "", del("P-000"), patch("P-037", map[string]any{"name": "gaskets supply supply gaskets", "note": ""}))
	other := f.sharingPartition(t, s, "beside-common-other", put("Part", "P-001", map[string]any{"name": "gasket gaskets supply supply gasket"}))
	other.commit("zed", "", put("Part", "P-002", map[string]any{"name": "gaskets gasket supply", "note": "gasket supply gaskets"}))

	// Two candidates: gasket and supply are common (16 Records or more),
	// gaskets rare (fewer than 64), and the terms would meet in more than 4.
	r := reads.New(s, reads.Config{SearchCandidates: 2})
	const q = "gaskte supply"
	// The other Domain's P-001 and P-002, which would rank first, would
	// carry their own scores, not this Domain's.
	requireSearchExhaustive(t, s, f, r, q, map[string][]string{"gaskte": {"gasket", "gaskets"}}, false, 1, 3, 10, 40, 100)
	// The path: the pair's plateaus and the GIN index's read of the rarer
	// correction's Records, no walk of the postings.
	got := searchCallsAt(t, f, q, 2, 100, "lb_search_pairs_of", "lb_search_full_keys", "lb_search_postings")
	require.Equal(t, int64(1), got["lb_search_pairs_of"], "%v", got)
	require.Equal(t, int64(1), got["lb_search_full_keys"], "%v", got)
	require.Zero(t, got["lb_search_postings"], "%v", got)

	// With the branch's Record counters: 900 Records, fewer than 3,000 ×
	// candidates, where the walk of the postings measured faster (at 1M):
	// the walk (whose budget, 32 × two candidates, this query passes: it
	// answers truncated).
	f.keepCounters()
	got = searchCallsAt(t, f, q, 2, 100, "lb_search_pairs_of", "lb_search_postings")
	require.Zero(t, got["lb_search_pairs_of"], "%v", got)
	require.Equal(t, int64(1), got["lb_search_postings"], "%v", got)
}

// TestSearchMisspelledTierPairs: three terms, one the OR of a misspelled
// word's corrections, held all three by fewer Records than the partial
// matches follow after: the second tier (Records holding two terms) comes
// from the pairs of the terms' most common words and the GIN index's read
// of the few Records holding the rarer correction, not a walk of the
// postings, and is the exhaustive ranking at every limit.
func TestSearchMisspelledTierPairs(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "tier-pairs-typo")
	f.commit("alice", "", wordParts(900, "", func(i int) (name, note []string) {
		name, note = gasketSupply(i)
		if i%45 == 4 || i%45 == 9 || i == 1 {
			// i == 1 holds the three terms, gaskets among them.
			note = append(note, "gaskets")
		}
		switch {
		case i%12 == 11:
			note = append(note, "valve")
		case i%36 == 1:
			name = append(name, "valve")
		}
		return name, note
	})...)
	other := f.sharingPartition(t, s, "tier-pairs-typo-other", put("Part", "P-001", map[string]any{"name": "gasket gaskets supply supply gasket"}))
	other.commit("zed", "", put("Part", "P-002", map[string]any{"name": "gaskets gasket supply", "note": "gasket supply gaskets valve"}))

	const q = "gaskte supply valve"
	var full int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted
		AND search @@ '(gasket | gaskets) & supply & valve'::tsquery`, f.domain, f.branch).Scan(&full))
	require.Positive(t, full)
	require.Less(t, full, 5, "fewer than the partial matches follow after")
	r := reads.New(s, reads.Config{SearchCandidates: 2})
	// The other Domain's P-001 and P-002 would carry their own scores, not
	// this Domain's.
	requireSearchExhaustive(t, s, f, r, q, map[string][]string{"gaskte": {"gasket", "gaskets"}}, true, 5, 8, 20, 60, 100)
	got := searchCallsAt(t, f, q, 2, 100, "lb_search_tier_pairs", "lb_search_full_keys", "lb_search_tiers")
	require.Equal(t, int64(1), got["lb_search_tier_pairs"], "%v", got)
	require.Equal(t, int64(2), got["lb_search_full_keys"], "the full matches and the rarer correction's: %v", got)
	require.Zero(t, got["lb_search_tiers"], "%v", got)

	// With the branch's Record counters: fewer Records than 3,000 ×
	// candidates, the walk; the same answer.
	f.keepCounters()
	requireSearchExhaustive(t, s, f, r, q, nil, false, 5, 60)
	got = searchCallsAt(t, f, q, 2, 100, "lb_search_tier_pairs", "lb_search_tiers")
	require.Zero(t, got["lb_search_tier_pairs"], "%v", got)
	require.Equal(t, int64(1), got["lb_search_tiers"], "%v", got)
}

// TestSearchOthersRest: what a Record holding one of a query's rarer
// corrections must match besides (lb_search_others_rest). When every such
// word belongs to one term, the other terms k - 1 at a time, without that
// term's common words (whose posting lists the GIN index would otherwise
// decode whole); otherwise the terms k at a time.
func TestSearchOthersRest(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	three := []string{"gasket | gaskets | gaskte", "supply", "valve"}
	cases := []struct {
		name   string
		terms  []string
		words  []string
		masks  []int32
		common []string
		k      int
		want   string
	}{
		{"three terms, the others of the first", three,
			[]string{"gasket", "gaskets", "gaskte", "supply", "valve"}, []int32{1, 1, 1, 2, 4},
			[]string{"gasket", "supply", "valve"}, 2, "supply | valve"},
		{"three terms, the others of the last", []string{"supply", "valve", "seal | steal | sael"},
			[]string{"sael", "seal", "steal", "supply", "valve"}, []int32{4, 4, 4, 1, 2},
			[]string{"steal", "supply", "valve"}, 2, "supply | valve"},
		{"three terms, the others of the second", []string{"supply", "seal | steal", "valve"},
			[]string{"seal", "steal", "supply", "valve"}, []int32{2, 2, 1, 4},
			[]string{"steal", "supply", "valve"}, 2, "supply | valve"},
		{"two terms: the other term", []string{"steel | setel | set", "supply"},
			[]string{"set", "setel", "steel", "supply"}, []int32{1, 1, 1, 2},
			[]string{"steel", "supply"}, 2, "supply"},
		{"others in two terms: every pair of terms", []string{"gasket | gaskte", "supply | suply", "valve"},
			[]string{"gasket", "gaskte", "suply", "supply", "valve"}, []int32{1, 1, 2, 2, 4},
			[]string{"gasket", "supply", "valve"}, 2,
			"(gasket | gaskte) & (supply | suply) | (gasket | gaskte) & valve | (supply | suply) & valve"},
		{"another word in two terms: every pair of terms", []string{"gasket | gaskte", "gaskte | valve", "supply"},
			[]string{"gasket", "gaskte", "supply", "valve"}, []int32{1, 3, 4, 2},
			[]string{"gasket", "supply", "valve"}, 2,
			"(gasket | gaskte) & (gaskte | valve) | (gasket | gaskte) & supply | (gaskte | valve) & supply"},
		{"no others: every pair of terms", three,
			[]string{"gasket", "gaskets", "gaskte", "supply", "valve"}, []int32{1, 1, 1, 2, 4},
			[]string{"gasket", "gaskets", "gaskte", "supply", "valve"}, 2,
			"(gasket | gaskets | gaskte) & supply | (gasket | gaskets | gaskte) & valve | supply & valve"},
		{"one term at a time: the terms", three,
			[]string{"gasket", "gaskets", "gaskte", "supply", "valve"}, []int32{1, 1, 1, 2, 4},
			[]string{"gasket", "supply", "valve"}, 1, "(gasket | gaskets | gaskte) | supply | valve"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var got, want string
			require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT lb_search_others_rest($1::text[]::tsquery[], $2, $3, $4, $5)::text, $6::tsquery::text`,
				tc.terms, tc.words, tc.masks, tc.common, tc.k, tc.want).Scan(&got, &want))
			require.Equal(t, want, got)
		})
	}
}

// TestSearchMisspelledTwoCommonCorrections: a misspelled word whose two
// corrections are both common ("lsat": slat and last, one swap each)
// beside a common word ranks its full matches from the pair of each
// correction with the other word, and the GIN index's read of the Records
// holding both corrections: what it returns is the exhaustive ranking at
// every limit, not truncated.
func TestSearchMisspelledTwoCommonCorrections(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "two-common-corrections")
	f.commit("alice", "", wordParts(900, "", func(i int) (name, note []string) {
		_, note = gasketSupply(i)
		// Both corrections twice in the names of a few Records (i%36 ==
		// 21), beside supply once in the note: each pair of words scores
		// them below the Records holding a correction and supply twice in
		// the name, the three words above.
		switch {
		case i%36 == 21:
			name = append(name, "slat", "slat", "last", "last")
		case i%36 == 33:
			// last and supply twice each in the name, no slat.
			name = append(name, "last", "last", "supply", "supply")
		case i%15 == 0:
			name = append(name, "slat", "slat")
		case i%3 == 0:
			name = append(name, "slat")
		}
		switch {
		case i%20 == 3 && i%3 != 0:
			name = append(name, "last")
		case i%4 == 1 && i%3 != 0:
			note = append(note, "last")
		}
		if i%9 == 0 {
			name = append(name, "supply")
		}
		return name, note
	})...)
	other := f.sharingPartition(t, s, "two-common-corrections-other", put("Part", "P-001", map[string]any{"name": "slat last supply supply slat last"}))
	other.commit("zed", "", put("Part", "P-002", map[string]any{"name": "last slat supply", "note": "slat supply last"}))

	var both int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted
		AND search @@ 'slat & last & supply'::tsquery`, f.domain, f.branch).Scan(&both))
	require.Positive(t, both, "Records holding both corrections beside supply")

	const q = "lsat supply"
	r := reads.New(s, reads.Config{SearchCandidates: 2})
	// The other Domain's P-001 and P-002 would carry their own scores, not
	// this Domain's.
	requireSearchExhaustive(t, s, f, r, q, map[string][]string{"lsat": {"slat", "last"}}, true, 1, 5, 20, 60, 100)
	got := searchCallsAt(t, f, q, 2, 100, "lb_search_pairs_of", "lb_search_word_plateaus", "lb_search_plateau_sizes",
		"lb_search_full_keys", "lb_search_postings")
	require.Equal(t, int64(2), got["lb_search_pairs_of"], "a pair per correction: %v", got)
	// slat, last and supply: supply's plateaus read and counted once for
	// both pairs.
	require.Equal(t, int64(3), got["lb_search_word_plateaus"], "%v", got)
	require.Equal(t, int64(3), got["lb_search_plateau_sizes"], "%v", got)
	require.Equal(t, int64(1), got["lb_search_full_keys"], "%v", got)
	require.Zero(t, got["lb_search_postings"], "%v", got)
}

// TestSearchKeptTerms: the terms of a query a full match is looked up by
// once every term another term implies is left out (lb_search_kept_terms):
// a term whose words include every word of another term is implied by it.
func TestSearchKeptTerms(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	cases := []struct {
		name    string
		words   []string
		masks   []int32
		counts  []int64
		terms   int
		want    []string
		others  *string
		othersN *int64
	}{
		{"a correction is the next word", []string{"set", "setel", "steel", "supply"}, []int32{1, 1, 3, 4}, []int64{15, 0, 900, 200}, 3,
			[]string{"steel", "supply"}, ptr("'set' | 'setel'"), ptr[int64](15)},
		{"the implied term last", []string{"gmbh", "set", "setel", "steel"}, []int32{1, 2, 2, 6}, []int64{300, 15, 0, 900}, 3,
			[]string{"gmbh", "steel"}, ptr("'set' | 'setel'"), ptr[int64](15)},
		{"the same word twice: the first kept", []string{"steel", "supply"}, []int32{3, 4}, []int64{900, 200}, 3,
			[]string{"steel", "supply"}, nil, ptr[int64](0)},
		{"no term implied", []string{"a", "b", "c"}, []int32{1, 2, 4}, []int64{1, 2, 3}, 3, nil, nil, nil},
		{"a kept term of two words", []string{"a", "b", "c", "d"}, []int32{1, 3, 4, 5}, []int64{1, 2, 3, 4}, 3, nil, nil, nil},
		{"three terms kept", []string{"a", "c", "d", "x"}, []int32{3, 4, 8, 2}, []int64{1, 2, 3, 4}, 4, nil, nil, nil},
		{"two terms: nothing left out", []string{"set", "steel", "supply"}, []int32{1, 1, 2}, []int64{15, 900, 200}, 2, nil, nil, nil},
		{"four terms, two implied", []string{"pump", "pupm", "steel", "stele"}, []int32{3, 2, 12, 8}, []int64{500, 0, 900, 2}, 4,
			[]string{"pump", "steel"}, ptr("'pupm' | 'stele'"), ptr[int64](2)},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var words []string
			var others *string
			var othersN *int64
			require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT words, others, others_n FROM lb_search_kept_terms($1, $2, $3, $4)`,
				tc.words, tc.masks, tc.counts, tc.terms).Scan(&words, &others, &othersN))
			require.Equal(t, tc.want, words)
			require.Equal(t, tc.others, others)
			require.Equal(t, tc.othersN, othersN)
		})
	}
}

func ptr[T any](v T) *T { return &v }

// TestSearchMisspelledCorrectionIsNextWord: a misspelled word whose
// corrections include the query's next word (gaskte gasket supply:
// gaskte | gasket | gaskets holds gasket) ranks its full matches, the
// Records holding gasket and supply, from the pair of the two words'
// plateaus and the GIN index's read of the few holding gaskets beside
// them, whose score it adds to, not from a walk of the postings: what it
// returns is the exhaustive ranking at every limit; and when fewer
// Records than the limit hold the two words, the partial matches follow
// as the exhaustive ranking has them.
func TestSearchMisspelledCorrectionIsNextWord(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := gasketWorld(t, s, "correction-next-word", func(i int) (note []string) {
		// gaskets beside gasket twice and supply twice (i%90 == 0): the
		// best full matches, above what the pair of gasket and supply
		// scores.
		if i%90 == 0 || i%45 == 4 || i%45 == 9 || i%45 == 18 {
			note = append(note, "gaskets")
		}
		if i%225 == 2 {
			note = append(note, "valve")
		}
		return note
	}, map[string]any{"name": "gasket gaskets supply supply gasket"},
		map[string]any{"name": "gaskets gasket supply", "note": "gasket supply gaskets valve"})

	var withOthers, valve int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FILTER (WHERE search @@ 'gaskets & gasket & supply'::tsquery),
		count(*) FILTER (WHERE search @@ 'gasket & valve'::tsquery)
		FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted`, f.domain, f.branch).Scan(&withOthers, &valve))
	require.Positive(t, withOthers, "full matches holding gaskets")
	require.Positive(t, valve)
	require.Less(t, valve, 5, "fewer full matches than the partial matches follow after")

	r := reads.New(s, reads.Config{SearchCandidates: 2})
	corr := map[string][]string{"gaskte": {"gasket", "gaskets"}}
	for _, q := range []string{"gaskte gasket supply", "gasket gaskte supply", "supply gaskte gasket"} {
		t.Run(q, func(t *testing.T) {
			// The other Domain's P-001 and P-002 would carry their own
			// scores, not this Domain's.
			requireSearchExhaustive(t, s, f, r, q, corr, true, 1, 3, 10, 20, 60, 100)
			got := searchCallsAt(t, f, q, 2, 100, "lb_search_kept_terms", "lb_search_pairs_of", "lb_search_full_keys",
				"lb_search_postings", "lb_search_tiers")
			require.Equal(t, int64(1), got["lb_search_kept_terms"], "%v", got)
			require.Equal(t, int64(1), got["lb_search_pairs_of"], "%v", got)
			require.Equal(t, int64(1), got["lb_search_full_keys"], "the Records holding gaskets: %v", got)
			require.Zero(t, got["lb_search_postings"], "%v", got)
			require.Zero(t, got["lb_search_tiers"], "%v", got)
		})
	}
	// Few full matches: every one read by the pair, then the partial
	// matches. The three queries of two terms are asked for the second
	// tier; one answers truncated (a walk past its budget at two
	// candidates), so the tiers walk ranks it (the words' masks
	// overlapping), exactly.
	const few = "gaskte gasket valve"
	requireSearchExhaustive(t, s, f, r, few, corr, true, 5, 20, 60)
	got := searchCallsAt(t, f, few, 2, 100, "lb_search_run", "lb_search_tiers")
	require.Equal(t, int64(4), got["lb_search_run"], "%v", got)
	require.Equal(t, int64(1), got["lb_search_tiers"], "%v", got)

	// With the branch's Record counters: fewer Records than 3,000 ×
	// candidates, not this path (with 1,000 candidates, whose budgets
	// the other paths keep within); the same answers.
	f.keepCounters()
	wide := reads.New(s, reads.Config{SearchCandidates: 1000})
	requireSearchExhaustive(t, s, f, wide, "gaskte gasket supply", corr, true, 1, 20, 100)
	got = searchCallsAt(t, f, "gaskte gasket supply", 1000, 100, "lb_search_kept_terms", "lb_search_pairs_of")
	require.Zero(t, got["lb_search_kept_terms"], "%v", got)
	require.Zero(t, got["lb_search_pairs_of"], "%v", got)
}

// TestSearchTermNoRecordHolds: a query with a term no Record holds (a
// word absent from the branch, with no correction: Ro dMotor Industries)
// has no full match; its best partial matches are the full matches of the
// query of the other terms, ranked by lb_search's score of the whole
// query. When those fill the answer they are the answer, read by that
// query's own path (no walk of the tiers); when they do not, the partial
// matches' paths follow. Either way it is the exhaustive ranking, in this
// Domain only.
func TestSearchTermNoRecordHolds(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	// The other Domain holds the absent word beside the others: its
	// Records would match every term, and its lexicon counts it.
	f := gasketWorld(t, s, "term-no-record-holds", func(i int) (note []string) {
		if i%45 == 4 || i%45 == 9 {
			note = append(note, "gaskets")
		}
		if i%225 == 2 {
			note = append(note, "valve")
		}
		return note
	}, map[string]any{"name": "qx gasket supply supply gasket"},
		map[string]any{"name": "qx gasket valve", "note": "gasket supply qx valve"})

	r := reads.New(s, reads.Config{SearchCandidates: 2})
	for _, q := range []string{"qx gasket supply", "gasket qx supply", "gaskte supply qx"} {
		t.Run(q, func(t *testing.T) {
			for _, limit := range []int{1, 5, 20, 60} {
				res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: q, Limit: limit})
				require.NoError(t, err)
				require.False(t, res.Truncated)
				require.Len(t, res.Results, limit)
				for _, x := range res.Results {
					require.Equal(t, "partial", x.Match)
				}
				requireSameRanking(t, s, f, q, rankByWords(t, s, f, q, limit), res.Results)
			}
			got := searchCallsAt(t, f, q, 2, 100, "lb_search_run", "lb_search_tiers", "lb_search_postings")
			require.Equal(t, int64(2), got["lb_search_run"], "the query, then the query of the terms held: %v", got)
			require.Zero(t, got["lb_search_tiers"], "%v", got)
			require.Zero(t, got["lb_search_postings"], "%v", got)
		})
	}
	// Fewer Records hold the other terms than the answer needs: the query
	// of the terms held is asked, then the partial matches' own path (here
	// the GIN index's tiers: few Records hold some term).
	const few = "qx gasket valve"
	for _, limit := range []int{1, 5, 20} {
		res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: few, Limit: limit})
		require.NoError(t, err)
		require.False(t, res.Truncated)
		require.Len(t, res.Results, limit)
		requireSameRanking(t, s, f, few, rankByWords(t, s, f, few, limit), res.Results)
	}
	got := searchCallsAt(t, f, few, 2, 100, "lb_search_run")
	require.Equal(t, int64(2), got["lb_search_run"], "%v", got)

	// Without partial matches (search.partial.min_results 0) nothing
	// matches, and the query of the terms held is not asked.
	none := reads.New(s, reads.Config{SearchCandidates: 2, PartialMinResults: -1})
	res, err := none.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "qx gasket supply", Limit: 20})
	require.NoError(t, err)
	require.Empty(t, res.Results)
	got = functionCalls(t, f, "all", []string{"lb_search_run"}, func(ctx context.Context, tx pgx.Tx) error {
		return drain(tx.Query(ctx, `SELECT * FROM lb_search('main', 'qx gasket supply', '', 20, NULL, 2, 0, 100)`))
	})
	require.Equal(t, int64(1), got["lb_search_run"], "%v", got)
}

// TestSearchTierFromQueriesOfTwoTerms: three terms held all three by
// fewer Records than the partial matches follow after, where the pairs of
// the terms' words cannot rank the second tier (gaskte's two corrections,
// gasket and gaskets, both common): the second tier comes from the full
// matches of the three queries of two terms, not a walk of the tiers, and
// is the exhaustive ranking at every limit, in this Domain only.
func TestSearchTierFromQueriesOfTwoTerms(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := gasketWorld(t, s, "tier-two-term-queries", func(i int) (note []string) {
		if i%3 == 1 {
			note = append(note, "gaskets")
		}
		// valve beside gasket twice and supply twice in two of the full
		// matches (i = 0, 450): the best of gasket and supply's Records,
		// which the second tier leaves out.
		if i%225 == 0 || i%225 == 7 {
			note = append(note, "valve")
		}
		return note
	}, map[string]any{"name": "gasket gaskets supply supply valve"},
		map[string]any{"name": "gaskets gasket supply", "note": "gasket supply gaskets valve"})

	const q = "gaskte supply valve"
	var full int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted
		AND search @@ '(gasket | gaskets) & supply & valve'::tsquery`, f.domain, f.branch).Scan(&full))
	require.Positive(t, full)
	require.Less(t, full, 5, "fewer than the partial matches follow after")
	r := reads.New(s, reads.Config{SearchCandidates: 2})
	requireSearchExhaustive(t, s, f, r, q, map[string][]string{"gaskte": {"gasket", "gaskets"}}, true, 5, 8, 20, 60, 100)
	got := searchCallsAt(t, f, q, 2, 100, "lb_search_run", "lb_search_tier_pairs", "lb_search_tiers", "lb_search_postings")
	require.Equal(t, int64(4), got["lb_search_run"], "the query, then its three queries of two terms: %v", got)
	require.Zero(t, got["lb_search_tier_pairs"], "%v", got)
	require.Zero(t, got["lb_search_tiers"], "%v", got)
	require.Zero(t, got["lb_search_postings"], "%v", got)

	// With the branch's Record counters: fewer Records than 3,000 ×
	// candidates, the tiers walk; the same answer.
	f.keepCounters()
	requireSearchExhaustive(t, s, f, r, q, nil, true, 5, 20, 60)
	got = searchCallsAt(t, f, q, 2, 100, "lb_search_run", "lb_search_tiers")
	require.Equal(t, int64(1), got["lb_search_run"], "%v", got)
	require.Equal(t, int64(1), got["lb_search_tiers"], "%v", got)
}
