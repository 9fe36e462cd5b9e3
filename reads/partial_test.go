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

// partialParts writes the Parts of the partial-match tests: three words
// (alpha, beta, gamma) whose best postings are Records holding one of them
// alone or with another term, so that the Records holding two terms rank
// far down every list; two Records hold all three. delta meets gamma in
// three Records. Groups of Records share their text, so scores tie.
func partialParts(prefix string) []change {
	var out []change
	add := func(n int, key string, name, note func(i int) string) {
		for i := range n {
			out = append(out, put("Part", fmt.Sprintf("%s-%s-%03d", prefix, key, i), map[string]any{
				"name": name(i) + fmt.Sprintf(" %s%s%d", prefix, key, i), "note": note(i)}))
		}
	}
	word := func(w string, n int) string { return strings.TrimSpace(strings.Repeat(w+" ", n)) }
	// One term alone, best first in its list: 1 to 3 times in the name.
	add(150, "a", func(i int) string { return word("alpha", 1+i%3) }, func(int) string { return "plain" })
	add(140, "b", func(i int) string { return word("beta", 1+i%3) }, func(int) string { return "plain" })
	// gamma's best postings hold alpha too (tier two); gamma alone ranks
	// below them.
	add(40, "ga", func(i int) string { return word("gamma", 3) }, func(i int) string { return word("alpha", 1+i%2) })
	add(90, "g", func(int) string { return "gamma" }, func(int) string { return "plain" })
	// Two terms in the note only: low in both lists, many tied.
	add(60, "ab", func(int) string { return "pair" }, func(i int) string { return word("alpha", 1+i%4) + " " + word("beta", 1+i%3) })
	add(12, "bg", func(int) string { return "beta" }, func(i int) string { return "gamma" })
	// Every term.
	add(2, "abg", func(int) string { return "all" }, func(int) string { return "alpha beta gamma" })
	// delta alone, and with gamma in three.
	add(85, "d", func(int) string { return "delta" }, func(int) string { return "plain" })
	add(3, "dg", func(int) string { return "delta" }, func(int) string { return "gamma gamma" })
	add(200, "f", func(int) string { return "filler" }, func(int) string { return "plain" })
	return out
}

// partialRanking is the exhaustive ranking of the partial matches on main
// of q, whose terms are its words, or words joined by | (a word and its
// corrections): every Record holding some term but not all, the most
// terms matched first, then ts_rank of the OR of the terms times the
// share of terms matched, as lb_search ranks them.
func partialRanking(t *testing.T, s *store.Store, f *fixture, q string, limit int) []reads.SearchResult {
	t.Helper()
	var terms []string
	for _, term := range strings.Fields(q) {
		terms = append(terms, strings.ReplaceAll(term, "|", " | "))
	}
	rows, err := s.Pool.Query(f.ctx, `WITH w AS (SELECT $3::tsquery[] AS ts,
			(SELECT string_agg('(' || x::text || ')', ' | ') FROM unnest($3::tsquery[]) x)::tsquery AS o),
		m AS (SELECT key, kind, search, (SELECT count(*) FROM unnest(w.ts) t WHERE search @@ t) AS n, w.o, cardinality(w.ts) AS k
		        FROM mat_records, w WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted AND search @@ w.o)
		SELECT key, kind, (ts_rank(search, o) * n / k)::real FROM m WHERE n < k
		 ORDER BY n DESC, 3 DESC, key LIMIT $4`, f.domain, f.branch, terms, limit)
	require.NoError(t, err)
	var out []reads.SearchResult
	for rows.Next() {
		x := reads.SearchResult{Match: "partial"}
		require.NoError(t, rows.Scan(&x.Key, &x.Kind, &x.Score))
		out = append(out, x)
	}
	require.NoError(t, rows.Err())
	return out
}

// requireSamePartial: got holds the scores of want in order, each Record
// with its own exhaustive score (tied Records are interchangeable).
func requireSamePartial(t *testing.T, s *store.Store, f *fixture, q string, want, got []reads.SearchResult) {
	t.Helper()
	score := map[string]float32{}
	for _, x := range partialRanking(t, s, f, q, 100000) {
		score[x.Key] = x.Score
	}
	require.Len(t, got, len(want))
	for i := range want {
		require.InDelta(t, want[i].Score, got[i].Score, 1e-6, "result %d", i)
		require.Contains(t, score, got[i].Key)
		require.InDelta(t, score[got[i].Key], got[i].Score, 1e-6, "result %d: %s", i, got[i].Key)
	}
}

// TestSearchPartialTiers: with no rare term and fewer than five full
// matches, the partial matches are ranked tier by tier from the words'
// postings (lb_search_tiers), exactly: the same Records as ranking every
// match, whether a pair of terms is read by the threshold algorithm or
// whole from the GIN index, and truncated only when the budget runs out.
func TestSearchPartialTiers(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "tiers")
	r1 := f.commit("alice", "", partialParts("P")...)
	// A later commit moves Records between tiers and deletes some.
	f.commit("bob", "", patch("P-ab-000", map[string]any{"name": "beta beta beta", "note": "alpha alpha alpha"}),
		patch("P-a-001", map[string]any{"note": "gamma"}), del("P-ab-001"), del("P-g-000"))
	// Another Domain in the same partition of mat_records holds the best
	// matches of every query (every term, many times, in the name) under
	// the keys of our fillers: none of it may be read, and its full
	// matches must not count as ours.
	var hostile []change
	for i := range 40 {
		hostile = append(hostile, put("Part", fmt.Sprintf("P-f-%03d", i), map[string]any{
			"name": strings.Repeat("alpha beta gamma delta pair ", 1+i%4), "note": "alpha beta"}))
		hostile = append(hostile, put("Part", fmt.Sprintf("P-f-%03d", 40+i), map[string]any{
			"name": strings.Repeat("alpha beta pair ", 1+i%4), "note": "gamma"}))
	}
	partition := func(d int32) string {
		return f.strings(`SELECT DISTINCT tableoid::regclass::text FROM mat_records WHERE domain_id = $1`, d)[0]
	}
	shared := false
	for i := 0; i < 16 && !shared; i++ {
		g := newFixture(t, s, fmt.Sprintf("tiers-other-%d", i))
		g.commit("mallory", "", hostile...)
		shared = partition(g.domain) == partition(f.domain)
	}
	require.True(t, shared, "no Domain of 16 shares the partition")

	// 10 candidates: no term is rare (80 Records or more), so full
	// matches are found by the GIN index's AND and partial matches by
	// lb_search_tiers.
	r := reads.New(s, reads.Config{SearchCandidates: 10, PartialCandidates: 1000, SearchMaxLimit: 1000})
	for _, tc := range []struct {
		q     string
		limit int
	}{{"alpha beta gamma", 5}, {"alpha beta gamma", 20}, {"alpha beta gamma", 90}, {"alpha beta gamma", 300},
		{"gamma delta", 20}, {"gamma delta", 200}, {"alpah beta gamma", 20}, {"beta gamma alpha", 140},
		{"pair delta", 20}, {"pair delta", 150}} {
		t.Run(fmt.Sprintf("%s/%d", tc.q, tc.limit), func(t *testing.T) {
			res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: tc.limit})
			require.NoError(t, err)
			require.False(t, res.Truncated)
			want := rankByWords(t, s, f, tc.q, tc.limit)
			require.Less(t, len(searchKeys(want, "full")), 5, "the query must fall back to partial matches")
			require.NotEmpty(t, searchKeys(want, "partial"))
			requireSameRanking(t, s, f, tc.q, want, res.Results)
		})
	}

	// lb_search_tiers itself, every pair of terms read by the threshold
	// algorithm (no GIN index) or whole from the GIN index, and with a
	// budget too small: exact in the first two cases, truncated in the
	// third with real matches best first.
	tiers := func(q string, limit, budget int, ginMax int64) ([]reads.SearchResult, bool, int) {
		var words []string
		var masks []int32
		// A term is a word or several (a|b): a word and its corrections.
		terms := strings.Fields(q)
		for i, term := range terms {
			for _, w := range strings.Split(term, "|") {
				words = append(words, w)
				masks = append(masks, 1<<i)
			}
		}
		var out []reads.SearchResult
		var truncated bool
		var ranked int
		require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(f.ctx, `SELECT p.key, p.matched, p.score, p.ranked, p.truncated
				FROM lb_search_tiers($1, $2, $3, $4, $5, $6, $7, $8,
				     (SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted)) p`,
				f.domain, f.branch, words, masks, len(terms), limit, budget, ginMax)
			if err != nil {
				return err
			}
			for rows.Next() {
				var key *string
				var matched *int
				var sum *float64
				if err := rows.Scan(&key, &matched, &sum, &ranked, &truncated); err != nil {
					return err
				}
				if key == nil {
					continue
				}
				// The postings' sum is ts_rank of the OR of the words times
				// their number.
				out = append(out, reads.SearchResult{Key: *key, Match: "partial",
					Score: float32(*sum / float64(len(words)) * float64(*matched) / float64(len(terms)))})
			}
			return rows.Err()
		}))
		return out, truncated, ranked
	}
	var holding int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
		AND NOT deleted AND search @@ 'gamma | delta'::tsquery`, f.domain, f.branch).Scan(&holding))
	for _, tc := range []struct {
		q      string
		limit  int
		ginMax int64
	}{{"alpha beta gamma", 20, 0}, {"alpha beta gamma", 20, 1 << 40}, {"alpha beta gamma", 120, 0},
		{"alpha beta gamma", 120, 1 << 40}, {"gamma delta", 30, 0}, {"gamma delta", 30, 1 << 40},
		{"alpha|delta beta gamma", 20, 0}, {"alpha|delta beta gamma", 20, 1 << 40}, {"alpha|delta beta gamma", 150, 1 << 40},
		{"alpha|pair beta|delta gamma", 100, 0}, {"alpha|pair beta|delta gamma", 100, 1 << 40}} {
		t.Run(fmt.Sprintf("tiers %s/%d/%d", tc.q, tc.limit, tc.ginMax), func(t *testing.T) {
			got, truncated, ranked := tiers(tc.q, tc.limit, 100000, tc.ginMax)
			require.False(t, truncated)
			requireSamePartial(t, s, f, tc.q, partialRanking(t, s, f, tc.q, tc.limit), got)
			if tc.q == "gamma delta" && tc.ginMax == 0 {
				require.Less(t, ranked, holding, "the walk stops before scoring every Record holding a term")
			}
		})
	}
	got, truncated, ranked := tiers("alpha beta gamma", 20, 40, 0)
	require.True(t, truncated)
	require.GreaterOrEqual(t, ranked, 40)
	all := map[string]float32{}
	for _, x := range rankByWords(t, s, f, "alpha beta gamma", 100000) {
		all[x.Key] = x.Score
	}
	for i, x := range got {
		require.Contains(t, all, x.Key)
		require.InDelta(t, all[x.Key], x.Score, 1e-6)
		if i > 0 {
			require.LessOrEqual(t, x.Score, got[i-1].Score)
		}
	}
	// Through lb_search, the partial walk scores at most 10 ×
	// search.partial.candidates or 8 × search_candidates Records (the
	// larger: 80 here) and the answer says when that was not enough (four
	// words: three read their second tier from the pairs of their
	// plateaus, TestSearchTierPairs, exactly).
	narrow := reads.New(s, reads.Config{SearchCandidates: 10, PartialCandidates: 2})
	res, err := narrow.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alpha beta gamma delta", Limit: 20})
	require.NoError(t, err)
	require.True(t, res.Truncated)
	res, err = narrow.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alpha beta gamma", Limit: 20})
	require.NoError(t, err)
	require.False(t, res.Truncated)
	requireSameRanking(t, s, f, "alpha beta gamma", rankByWords(t, s, f, "alpha beta gamma", 20), res.Results)

	// A Kind reads the GIN index's partial tiers with their candidate
	// cap: exact here (more candidates than matches), Parts only.
	wide := reads.New(s, reads.Config{SearchCandidates: 10, PartialCandidates: 10000})
	res, err = wide.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alpha beta gamma", Kind: "Part", Limit: 20})
	require.NoError(t, err)
	require.False(t, res.Truncated)
	requireSameRanking(t, s, f, "alpha beta gamma", rankByWords(t, s, f, "alpha beta gamma", 20), res.Results)
	res, err = wide.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alpha beta gamma", Kind: "Supplier", Limit: 20})
	require.NoError(t, err)
	require.Empty(t, res.Results)

	// An overlay reads its levels from the GIN index: a Record changed on
	// the overlay ranks first among the partial matches there, not on
	// main; at main's first Revision the moved Records are where they
	// were.
	ov := f.fork("ov", "overlay", revInfo{})
	ov.commit("carol", "", patch("P-f-000", map[string]any{"name": "alpha alpha alpha beta beta beta"}))
	res, err = wide.Search(f.ctx, f.domain, "ov", reads.SearchQuery{Q: "alpha beta gamma", Limit: 20})
	require.NoError(t, err)
	require.False(t, res.Truncated)
	require.Equal(t, "P-f-000", res.Results[len(searchKeys(res.Results, "full"))].Key, "%+v", res.Results)
	res, err = wide.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "alpha beta gamma", Limit: 20})
	require.NoError(t, err)
	require.NotContains(t, searchKeys(res.Results, "partial"), "P-f-000")

	// At the first Revision the deleted and moved Records are there again:
	// "pair" and "delta" alone tie, ranked by key.
	res, err = wide.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "pair delta", At: r1.ID, Limit: 5})
	require.NoError(t, err)
	require.False(t, res.Truncated)
	require.Equal(t, []string{"P-ab-000", "P-ab-001", "P-ab-002", "P-ab-003", "P-ab-004"}, resultKeys(res.Results))
	res, err = wide.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "pair delta", Limit: 5})
	require.NoError(t, err)
	require.Equal(t, []string{"P-ab-002", "P-ab-003", "P-ab-004", "P-ab-005", "P-ab-006"}, resultKeys(res.Results))
}

// resultKeys is the keys of the results in their order.
func resultKeys(rs []reads.SearchResult) []string {
	var out []string
	for _, r := range rs {
		out = append(out, r.Key)
	}
	return out
}

// TestSearchFullKeysPlan: whether at most the limit Records match every
// term is asked of the GIN index for the words alone (the Domain and
// branch compared as bigint, so the index does not list every Record of
// the branch), as a bitmap, with index scans off as lb_search_full_keys
// runs it; lb_search_sql names the statement.
func TestSearchFullKeysPlan(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "full-keys-plan")
	generate(t, f, 20000)
	var stmts []string
	require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		rows, err := tx.Query(f.ctx, `SELECT * FROM lb_search_sql('main', 'part w7 w91', '', 20)`)
		if err != nil {
			return err
		}
		stmts, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	var probe string
	for _, st := range stmts {
		if strings.Contains(st, "::bigint") && strings.Contains(st, "LIMIT 21") {
			probe = st
		}
	}
	require.NotEmpty(t, probe, "lb_search_sql: %v", stmts)
	var src string
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT prosrc FROM pg_proc WHERE proname = 'lb_search_run'`).Scan(&src))
	require.Contains(t, src, "lb_search_full_keys(c.d, c.b, full_q, or_q, probe + 1, idx_q::tsquery, idx_cap)")
	var plan []string
	require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
		for _, set := range []string{`SET LOCAL enable_seqscan = off`, `SET LOCAL enable_indexscan = off`} {
			if _, err := tx.Exec(f.ctx, set); err != nil {
				return err
			}
		}
		rows, err := tx.Query(f.ctx, `EXPLAIN `+probe)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	p := strings.Join(plan, "\n")
	require.Contains(t, p, "Bitmap Index Scan on mat_records_p", p)
	require.Regexp(t, `Index Cond: \(search @@ `, p, p)
	require.NotContains(t, p, "Index Cond: ((domain_id", p)
	require.NotContains(t, p, "Seq Scan", p)
}
