package reads_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// TestSearchRanksEveryMatch: a search returns the best Records of every
// match, not the best of the first ones found, and says how many it ranked
// and whether the ranking was truncated.
func TestSearchRanksEveryMatch(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "ranking")
	// 40 Parts: the word steel once, twice or three times, in the name
	// (weight A) or the note (weight B), so ranks differ and tie.
	var changes []change
	for i := range 40 {
		name := fmt.Sprintf("part %d", i)
		note := "plain"
		switch i % 4 {
		case 0:
			name += " steel"
		case 1:
			note = "steel"
		case 2:
			name += " steel steel steel"
		case 3:
			note = "steel bolt steel"
		}
		changes = append(changes, put("Part", fmt.Sprintf("P-%02d", i), map[string]any{"name": name, "note": note}))
	}
	f.commit("alice", "", changes...)
	// Later commits move Records up and down, and delete some: the
	// postings follow mat_records.
	f.commit("bob", "", patch("P-01", map[string]any{"name": "steel steel steel steel steel"}),
		patch("P-02", map[string]any{"name": "part two"}), del("P-06"), del("P-10"))

	exhaustive := func(branch int32, q string, limit int) []string {
		rows, err := s.Pool.Query(f.ctx, `SELECT key FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted
			AND search @@ plainto_tsquery('simple', $3)
			ORDER BY ts_rank(search, plainto_tsquery('simple', $3)) DESC, key LIMIT $4`, f.domain, branch, q, limit)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	count := func(branch int32, q string) int {
		var n int
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
			AND NOT deleted AND search @@ plainto_tsquery('simple', $3)`, f.domain, branch, q).Scan(&n))
		return n
	}
	keys := func(res *reads.SearchResults) []string {
		var out []string
		for _, x := range res.Results {
			out = append(out, x.Key)
		}
		return out
	}

	// The postings are the words of the present Records' search vectors,
	// each with the Record's rank for that word alone.
	words := `SELECT key || ':' || w || ':' || ts_rank(search, quote_literal(w)::tsquery) FROM mat_records, unnest(tsvector_to_array(search)) w
		WHERE domain_id = $1 AND NOT deleted ORDER BY 1`
	postings := `SELECT key || ':' || word || ':' || score FROM mat_search_words WHERE domain_id = $1 ORDER BY 1`
	require.Equal(t, f.strings(words, f.domain), f.strings(postings, f.domain))

	small := reads.New(s, reads.Config{SearchCandidates: 3, PartialCandidates: 3})
	for _, tc := range []struct {
		q     string
		limit int
	}{{"steel", 5}, {"steel", 20}, {"part", 7}, {"steel bolt", 5}, {"part steel", 4}, {"part steel", 40},
		{"bolt plain", 20}, {"steel stele", 10}, {"plain steel bolt", 8}, {"bolt nosuchword", 5}} {
		t.Run(tc.q, func(t *testing.T) {
			// Three candidates at most: a search still returns the best of
			// every match from the words' postings, never truncated.
			res, err := small.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: tc.limit})
			require.NoError(t, err)
			require.False(t, res.Truncated)
			if tc.q == "steel" || tc.q == "part" {
				want := exhaustive(f.branch, tc.q, tc.limit)
				require.NotEmpty(t, want)
				require.Equal(t, count(f.branch, tc.q), res.Ranked, "a one-word search ranks every match")
				require.Equal(t, want, keys(res))
				return
			}
			// Several words: the postings walk ranks exactly what ranking
			// every match ranks, full matches first.
			requireSameRanking(t, s, f, tc.q, rankByWords(t, s, f, tc.q, tc.limit), res.Results)
			require.Positive(t, res.Ranked)
		})
	}

	// A Kind reads the GIN index's first three matches and says the
	// ranking was truncated.
	res, err := small.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "part steel", Kind: "Part", Limit: 5})
	require.NoError(t, err)
	require.True(t, res.Truncated)
	require.GreaterOrEqual(t, res.Ranked, 3)

	// An overlay searches its base's postings corrected by its own rows:
	// every match ranked exactly, however small the cap (P-03 holds no
	// steel on the overlay). ranked counts the base's matches and the
	// overlay's own (none).
	ov := f.fork("ov", "overlay", revInfo{})
	ov.commit("carol", "", patch("P-03", map[string]any{"note": "brass"}))
	var want []string
	for _, k := range exhaustive(f.branch, "steel", 40) {
		if k != "P-03" {
			want = append(want, k)
		}
	}
	require.Len(t, want, count(f.branch, "steel")-1)
	for _, r := range []*reads.Reader{small, f.r} {
		res, err = r.Search(f.ctx, f.domain, "ov", reads.SearchQuery{Q: "steel", Limit: 40})
		require.NoError(t, err)
		require.False(t, res.Truncated)
		require.Equal(t, want, keys(res))
		require.Equal(t, count(f.branch, "steel"), res.Ranked)
	}
	// With own matches, ranked counts them beside the base's.
	ov.commit("carol", "", put("Part", "P-90", map[string]any{"name": "Part steel steel new"}))
	for _, limit := range []int{3, 40} {
		res, err = f.r.Search(f.ctx, f.domain, "ov", reads.SearchQuery{Q: "steel", Limit: limit})
		require.NoError(t, err)
		if limit == 40 {
			require.Contains(t, keys(res), "P-90")
		}
		require.Equal(t, 1, count(ov.branch, "steel"))
		require.Equal(t, count(f.branch, "steel")+1, res.Ranked, "limit %d", limit)
	}

	// Another Domain's postings stay out.
	g := newFixture(t, s, "ranking-other")
	g.commit("zed", "", put("Part", "P-99", map[string]any{"name": "steel steel steel steel steel steel"}))
	res, err = f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "steel"})
	require.NoError(t, err)
	require.NotContains(t, keys(res), "P-99")
	require.Equal(t, exhaustive(f.branch, "steel", 20), keys(res))
	require.Equal(t, f.strings(words, f.domain), f.strings(postings, f.domain))

	// One statement changing the rows of two branches (main's P-03 and
	// the overlay's) keeps the postings of both.
	tag, err := s.Pool.Exec(f.ctx, `UPDATE mat_records SET search = search || to_tsvector('simple', 'zinc zinc')
		WHERE domain_id = $1 AND key IN ('P-03', 'P-05')`, f.domain)
	require.NoError(t, err)
	require.EqualValues(t, 3, tag.RowsAffected())
	require.Equal(t, f.strings(words, f.domain), f.strings(postings, f.domain))
	require.Contains(t, f.strings(postings, f.domain), "P-05:zinc:"+f.strings(`SELECT ts_rank(search, 'zinc'::tsquery)::text FROM mat_records
		WHERE domain_id = $1 AND branch_id = $2 AND key = 'P-05'`, f.domain, f.branch)[0])
}

// rankByWords is lb_search's ranking of a several-word query on main with
// every match ranked: the most terms matched first, then ts_rank of the OR
// of the terms; partial matches only when fewer than five match every
// term.
func rankByWords(t *testing.T, s *store.Store, f *fixture, q string, limit int) []reads.SearchResult {
	t.Helper()
	// The terms as lb_search computes them (a word absent from the
	// lexicon ORed with its corrections), in the Domain's scope.
	tx, err := s.Pool.Begin(f.ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(f.ctx) }()
	_, err = tx.Exec(f.ctx, `SELECT set_config('lorebase.domain_id', $1, true)`, fmt.Sprint(f.domain))
	require.NoError(t, err)
	rows, err := tx.Query(f.ctx, `WITH w AS (SELECT array_agg(t.term) AS ts,
			string_agg('(' || t.term::text || ')', ' | ')::tsquery AS o
			FROM lb_search_terms($2, $3) t)
		SELECT key, kind, ((SELECT count(*) FROM unnest(w.ts) t WHERE search @@ t) = cardinality(w.ts)),
		       (ts_rank(search, w.o) * (SELECT count(*) FROM unnest(w.ts) t WHERE search @@ t) / cardinality(w.ts))::real AS r
		  FROM mat_records, w
		 WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted AND search @@ w.o
		 ORDER BY 3 DESC, 4 DESC, key`, f.domain, f.branch, q)
	require.NoError(t, err)
	var all []reads.SearchResult
	full := 0
	for rows.Next() {
		var x reads.SearchResult
		var isFull bool
		require.NoError(t, rows.Scan(&x.Key, &x.Kind, &isFull, &x.Score))
		x.Match = "partial"
		if isFull {
			x.Match = "full"
			full++
		}
		all = append(all, x)
	}
	require.NoError(t, rows.Err())
	if full >= 5 {
		all = all[:full]
	}
	return all[:min(limit, len(all))]
}

// requireSameRanking: got holds the scores and matches of want in order,
// each Record with its own exhaustive score (Records tied at a score are
// interchangeable).
func requireSameRanking(t *testing.T, s *store.Store, f *fixture, q string, want, got []reads.SearchResult) {
	t.Helper()
	score := map[string]float32{}
	for _, x := range rankByWords(t, s, f, q, 100000) {
		score[x.Key] = x.Score
	}
	require.Len(t, got, len(want))
	for i := range want {
		require.Equal(t, want[i].Match, got[i].Match, "result %d", i)
		require.InDelta(t, want[i].Score, got[i].Score, 1e-6, "result %d", i)
		require.Contains(t, score, got[i].Key)
		require.InDelta(t, score[got[i].Key], got[i].Score, 1e-6, "result %d: %s", i, got[i].Key)
	}
}

// requireSearchExhaustive: at each limit r's search for q on main is not
// truncated, corrects each misspelled word to the words corrections gives
// it, and returns the exhaustive ranking (rankByWords: limit results when
// filled, some otherwise), each Record with this Domain's own score.
func requireSearchExhaustive(t *testing.T, s *store.Store, f *fixture, r *reads.Reader, q string, corrections map[string][]string, filled bool, limits ...int) {
	t.Helper()
	for _, limit := range limits {
		res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: q, Limit: limit})
		require.NoError(t, err)
		for w, c := range corrections {
			require.ElementsMatch(t, c, res.Corrections[w])
		}
		require.False(t, res.Truncated)
		want := rankByWords(t, s, f, q, limit)
		if filled {
			require.Len(t, want, limit)
		} else {
			require.NotEmpty(t, want)
		}
		requireSameRanking(t, s, f, q, want, res.Results)
	}
}

// TestSearchPostingsWalk: a several-word search walks its words' postings
// in rounds and stops when no Record left unread can enter the results;
// what it returns is the exhaustive ranking, and when its budget runs out
// first it says truncated.
func TestSearchPostingsWalk(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "postings")
	// 600 Parts holding alpha, beta and gamma 0 to 3 times each in the
	// name or the note, so the words' lists are long, ranks spread and
	// tie; delta is in 7 of them.
	var changes []change
	for i := range 600 {
		var name, note []string
		for j, w := range []string{"alpha", "beta", "gamma"} {
			n := (i*(j+3) + i/(j+2)) % 4
			for k := range n {
				if (i+k+j)%3 == 0 {
					name = append(name, w)
				} else {
					note = append(note, w)
				}
			}
		}
		if i%89 == 5 {
			note = append(note, "delta")
		}
		name = append(name, fmt.Sprintf("p%d", i))
		changes = append(changes, put("Part", fmt.Sprintf("P-%03d", i), map[string]any{
			"name": strings.Join(name, " "), "note": strings.Join(note, " ")}))
	}
	f.commit("alice", "", changes...)

	// 10 candidates: a budget of 320 Records scored, postings read 80 at
	// a time, lists of 320 or more walked in rounds.
	r := reads.New(s, reads.Config{SearchCandidates: 10})
	for _, tc := range []struct {
		q     string
		limit int
	}{{"alpha beta", 5}, {"alpha beta", 20}, {"beta gamma", 1}, {"alpha beta gamma", 10},
		{"alpha delta", 20}, {"delta gamma p5", 10}, {"alpha alpah", 3}} {
		t.Run(fmt.Sprintf("%s/%d", tc.q, tc.limit), func(t *testing.T) {
			res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: tc.limit})
			require.NoError(t, err)
			require.False(t, res.Truncated)
			requireSameRanking(t, s, f, tc.q, rankByWords(t, s, f, tc.q, tc.limit), res.Results)
		})
	}
	// The walk stopped before scoring every Record holding a word.
	res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alpha beta", Limit: 5})
	require.NoError(t, err)
	var holding int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
		AND NOT deleted AND search @@ 'alpha | beta'::tsquery`, f.domain, f.branch).Scan(&holding))
	require.Positive(t, res.Ranked)
	require.Less(t, res.Ranked, holding)

	// One candidate: a budget of 32 Records scored runs out before the
	// bound closes; the answer says so and holds real matches with their
	// own scores, best first. (A misspelled word: three words alone take
	// the triples of their plateaus, exactly, below.)
	tiny := reads.New(s, reads.Config{SearchCandidates: 1})
	res, err = tiny.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alpah beta gamma", Limit: 20})
	require.NoError(t, err)
	require.True(t, res.Truncated)
	require.GreaterOrEqual(t, res.Ranked, 32)
	exact, err := tiny.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alpha beta gamma", Limit: 20})
	require.NoError(t, err)
	require.False(t, exact.Truncated)
	requireSameRanking(t, s, f, "alpha beta gamma", rankByWords(t, s, f, "alpha beta gamma", 20), exact.Results)
	all := map[string]float32{}
	for _, x := range rankByWords(t, s, f, "alpah beta gamma", 100000) {
		all[x.Key] = x.Score
	}
	for i, x := range res.Results {
		require.Contains(t, all, x.Key)
		require.InDelta(t, all[x.Key], x.Score, 1e-6)
		if i > 0 && x.Match == res.Results[i-1].Match {
			require.LessOrEqual(t, x.Score, res.Results[i-1].Score)
		}
	}

	// Partial matches have a budget of their own (10 × search.partial.
	// candidates or 8 × search_candidates Records, the larger, once every
	// full match is read): p5 is in one Record, so the GIN index reads the
	// full matches; hundreds hold two of the three words. (Three words
	// read their second tier from the pairs of their plateaus, exactly,
	// with no budget: four words walk it.)
	narrow := reads.New(s, reads.Config{SearchCandidates: 1, PartialCandidates: 1})
	res, err = narrow.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "p5 alpha beta gamma", Limit: 20})
	require.NoError(t, err)
	require.True(t, res.Truncated)
	require.NotEmpty(t, res.Results)
	res, err = narrow.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "p5 alpha beta", Limit: 20})
	require.NoError(t, err)
	require.False(t, res.Truncated)
	requireSameRanking(t, s, f, "p5 alpha beta", rankByWords(t, s, f, "p5 alpha beta", 20), res.Results)
	res, err = r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "p5 alpha beta", Limit: 20})
	require.NoError(t, err)
	require.False(t, res.Truncated, "the default partial budget ranks the partial matches exactly")
	requireSameRanking(t, s, f, "p5 alpha beta", rankByWords(t, s, f, "p5 alpha beta", 20), res.Results)

	// When the terms' Records (the lexicon's counts, about 800 here) are
	// under 8 × search_candidates, the GIN index's partial tiers rank every
	// partial match, whatever search.partial.candidates says: exact, not
	// truncated, where the walk with one partial candidate is truncated.
	wide := reads.New(s, reads.Config{SearchCandidates: 1000, PartialCandidates: 1})
	res, err = wide.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "p5 alpha beta gamma", Limit: 20})
	require.NoError(t, err)
	require.False(t, res.Truncated)
	require.Greater(t, res.Ranked, 100, "every partial match ranked")
	requireSameRanking(t, s, f, "p5 alpha beta gamma", rankByWords(t, s, f, "p5 alpha beta gamma", 20), res.Results)
}

// TestSearchOneWordWithCorrections: a misspelled word is searched as the
// OR of its corrections, from each correction's best postings and the
// Records holding two corrections; what it returns is the exhaustive
// ranking, with every match counted.
func TestSearchOneWordWithCorrections(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "corrections")
	// 300 Parts: aluminium in most (once to three times, name or note),
	// aluminum in 40, aluminiums in 25, some holding two or three of them;
	// and 1,500 Parts holding none.
	var changes []change
	for i := range 1500 {
		changes = append(changes, put("Part", fmt.Sprintf("F-%04d", i), map[string]any{"name": fmt.Sprintf("filler f%d", i)}))
	}
	for i := range 300 {
		var name, note []string
		if i%6 != 0 {
			for k := range 1 + i%3 {
				if (i+k)%2 == 0 {
					name = append(name, "aluminium")
				} else {
					note = append(note, "aluminium")
				}
			}
		}
		if i%15 == 0 || i%15 == 7 || i == 1 {
			name = append(name, "aluminum")
		}
		if i%12 == 0 || i == 1 {
			note = append(note, "aluminiums", "aluminiums")
		}
		name = append(name, fmt.Sprintf("p%d", i))
		changes = append(changes, put("Part", fmt.Sprintf("P-%03d", i), map[string]any{
			"name": strings.Join(name, " "), "note": strings.Join(note, " ")}))
	}
	f.commit("alice", "", changes...)
	f.commit("bob", "", del("P-001"), patch("P-002", map[string]any{"name": "aluminum aluminum aluminum aluminum"}))
	// Main's Record counters (the fixture's commits keep none), which the
	// choice of path reads.
	f.keepCounters()

	// Another Domain whose rows share the partition of this one's holds
	// the best Records for the corrections: the GIN index, scanned for the
	// words alone, finds them, and they must stay out.
	other := f.sharingPartition(t, s, "corrections-other", put("Part", "X-0", map[string]any{"name": "aluminium aluminum aluminiums aluminium aluminum"}))
	for i := range 30 {
		other.commit("zed", "", put("Part", fmt.Sprintf("Y-%02d", i), map[string]any{"name": "aluminum aluminium aluminiums", "note": "aluminum aluminiums"}))
	}
	matching := func(q string) int {
		var n int
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
			AND NOT deleted AND search @@ 'aluminium | aluminum | aluminiums'::tsquery`, f.domain, f.branch).Scan(&n))
		return n
	}
	for _, tc := range []struct {
		name       string
		candidates int
		limit      int
		postings   bool
	}{
		// 8 × 10 candidates: aluminum and aluminiums are under it, so of
		// every two corrections one is rare.
		{"rare pairs", 10, 5, true},
		{"rare pairs", 10, 20, true},
		{"rare pairs", 10, 100, true},
		// 8 × 2: aluminium and aluminum are both above it, but were the
		// words independent, about 10 of the 1,799 Records would hold two
		// of them.
		{"independent pairs", 2, 20, true},
		// 8 × 1: neither; the postings walk answers.
		{"common pairs", 1, 20, false},
	} {
		t.Run(fmt.Sprintf("%s/%d", tc.name, tc.limit), func(t *testing.T) {
			r := reads.New(s, reads.Config{SearchCandidates: tc.candidates})
			res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alumniium", Limit: tc.limit})
			require.NoError(t, err)
			require.ElementsMatch(t, []string{"aluminium", "aluminiums", "aluminum"}, res.Corrections["alumniium"])
			for _, x := range res.Results {
				require.Regexp(t, `^P-`, x.Key, "a Record of another Domain")
			}
			if !res.Truncated {
				requireSameRanking(t, s, f, "alumniium", rankByWords(t, s, f, "alumniium", tc.limit), res.Results)
			}
			stmt := searchStatements(t, s, f, "alumniium", tc.limit, tc.candidates)
			require.Len(t, stmt, 1)
			if tc.postings {
				require.False(t, res.Truncated)
				require.Equal(t, matching("alumniium"), res.Ranked, "every match counted once")
				require.Contains(t, stmt[0], "mat_search_words")
			} else {
				require.NotContains(t, stmt[0], "mat_search_words")
			}
		})
	}
}

// searchStatements answers the statements lb_search_sql says a search of
// q on main runs, in the fixture's Domain.
func searchStatements(t *testing.T, s *store.Store, f *fixture, q string, limit, candidates int) []string {
	t.Helper()
	tx, err := s.Pool.Begin(f.ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(f.ctx) }()
	_, err = tx.Exec(f.ctx, `SELECT set_config('lorebase.domain_id', $1, true)`, fmt.Sprint(f.domain))
	require.NoError(t, err)
	rows, err := tx.Query(f.ctx, `SELECT statement FROM lb_search_sql('main', $1, '', $2, NULL, $3)`, q, limit, candidates)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}
