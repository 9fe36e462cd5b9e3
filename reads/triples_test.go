package reads_test

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// tripleParts writes the Parts of the three-word tests: alpha and beta as
// in pairParts, gamma 0 to 2 times in the name or once in the note, so each
// word has several score plateaus of very different sizes; eta and iota
// are in a third of the Records each and never together.
func tripleParts(prefix string, n int) []change {
	out := pairParts(prefix, n)
	for i := range out {
		var name, note []string
		switch {
		case i%13 == 4:
			name = append(name, "gamma", "gamma")
		case i%3 == 2:
			note = append(note, "gamma")
		case i%5 == 0:
			name = append(name, "gamma")
		}
		switch i % 3 {
		case 1:
			note = append(note, "eta")
		case 2:
			note = append(note, "iota")
		}
		v := out[i].Values
		v["name"] = strings.TrimSpace(v["name"].(string) + " " + strings.Join(name, " "))
		v["note"] = strings.TrimSpace(v["note"].(string) + " " + strings.Join(note, " "))
	}
	return out
}

// tripleSums: the exhaustive sums of the three words' postings of every
// Record holding all three, best first, added in word order.
func tripleSums(t *testing.T, s *store.Store, f *fixture, w [3]string) []float64 {
	t.Helper()
	rows, err := s.Pool.Query(f.ctx, `SELECT a.score::float8 + b.score + c.score FROM mat_search_words a
		JOIN mat_search_words b ON b.domain_id = a.domain_id AND b.branch_id = a.branch_id AND b.key = a.key AND b.word = $4
		JOIN mat_search_words c ON c.domain_id = a.domain_id AND c.branch_id = a.branch_id AND c.key = a.key AND c.word = $5
		WHERE a.domain_id = $1 AND a.branch_id = $2 AND a.word = $3 ORDER BY 1 DESC`, f.domain, f.branch, w[0], w[1], w[2])
	require.NoError(t, err)
	sums, err := pgx.CollectRows(rows, pgx.RowTo[float64])
	require.NoError(t, err)
	return sums
}

// TestSearchTriples: a query of three common words ranks its full matches
// from the triples of the words' score plateaus, best sum first
// (lb_search_triples): what it returns is the exhaustive ranking (ties
// interchangeable), the partial matches follow when fewer than five
// Records hold the three words, and another Domain's Records in the same
// partition stay out.
func TestSearchTriples(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "triples")
	f.commit("alice", "", tripleParts("P", 1200)...)

	// Another Domain whose rows share the partition of this one's, under
	// the same keys, holds the three words as this Domain's best Records
	// do: read, they would rank first.
	other := f.sharingPartition(t, s, "triples-other", put("Part", "P-0000", map[string]any{"name": "alpha beta gamma"}))
	var hostile []change
	for i := range 1200 {
		if i%3 == 0 {
			hostile = append(hostile, put("Part", fmt.Sprintf("P-%04d", i), map[string]any{
				"name": "alpha alpha alpha beta beta gamma gamma", "note": "beta eta iota"}))
		}
	}
	other.commit("zed", "", hostile...)

	// One candidate: three words in 8 Records or more each, expected to
	// meet in 32 or more, take the triples of plateaus.
	r := reads.New(s, reads.Config{SearchCandidates: 1})
	full := func(q string) int {
		var n int
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
			AND NOT deleted AND search @@ plainto_tsquery('simple', $3)`, f.domain, f.branch, q).Scan(&n))
		return n
	}
	require.Greater(t, full("alpha beta gamma"), 20)
	require.Zero(t, full("alpha eta iota"))
	for _, tc := range []struct {
		q     string
		limit int
	}{{"alpha beta gamma", 1}, {"alpha beta gamma", 5}, {"alpha beta gamma", 20}, {"gamma alpha beta", 20},
		{"beta gamma alpha", 7}, {"alpha beta gamma", 100}, {"alpha eta iota", 20}, {"eta gamma iota", 5}} {
		t.Run(fmt.Sprintf("%s/%d", tc.q, tc.limit), func(t *testing.T) {
			res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: tc.limit})
			require.NoError(t, err)
			require.False(t, res.Truncated)
			want := rankByWords(t, s, f, tc.q, tc.limit)
			require.NotEmpty(t, want)
			requireSameRanking(t, s, f, tc.q, want, res.Results)
			if n := full(tc.q); n > tc.limit {
				// Only the triples the answer needs were read.
				require.Less(t, res.Ranked, n, "every full match read")
			}
		})
	}

	// lb_search_triples itself, as lb_search calls it (the owner, every
	// statement filtered by Domain and branch).
	type triplesOut struct {
		keys     []string
		scores   []float64
		complete bool
		reads    int
	}
	// rows: 0 reads every plateau read whole from its rows
	// (lb_search_triple_rows), 1<<30 none (lb_search_triple_top); pair: the
	// most rows of the meeting of two plateaus read before a triple is met
	// whole (0: never).
	triplesRows := func(w [3]string, limit, small, count, maxPlateaus, budget, rows, pair int) triplesOut {
		var o triplesOut
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT keys, scores, complete, reads FROM lb_search_triples($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`,
			f.domain, f.branch, w[:], limit, small, count, maxPlateaus, budget, rows, pair).Scan(&o.keys, &o.scores, &o.complete, &o.reads))
		return o
	}
	triples := func(w [3]string, limit, small, count, maxPlateaus, budget int) triplesOut {
		return triplesRows(w, limit, small, count, maxPlateaus, budget, 1000, 1000)
	}
	for _, w := range [][3]string{{"alpha", "beta", "gamma"}, {"gamma", "alpha", "beta"}, {"beta", "gamma", "alpha"}} {
		sums := tripleSums(t, s, f, w)
		require.Greater(t, len(sums), 50)
		// Plateaus read whole up to 0, 64 and every posting (small); the
		// others merged or read whole by their sizes counted up to 1, 16
		// or 4096 (count); a plateau read whole from its rows or from the
		// AND with the other words' tokens (rows); the meeting of two
		// plateaus read from its rows when at most 0 (never), 3 (the
		// larger fall back to the meeting of three) or 1<<30 Records hold
		// both (pair).
		for _, small := range []int{0, 64, 100000} {
			for _, count := range []int{1, 16, 4096} {
				for _, limit := range []int{1, 7, 20, 150, len(sums), len(sums) + 5} {
					for _, rp := range [][2]int{{0, 0}, {1 << 30, 3}, {0, 1 << 30}} {
						rows, pair := rp[0], rp[1]
						o := triplesRows(w, limit, small, count, 256, 1<<30, rows, pair)
						at := fmt.Sprintf("%v small %d count %d limit %d rows %d pair %d", w, small, count, limit, rows, pair)
						require.NotNil(t, o.keys, at)
						require.Len(t, o.keys, min(limit, len(sums)), at)
						if limit != len(sums) {
							require.Equal(t, limit > len(sums), o.complete, at)
						}
						require.Len(t, slices.Compact(slices.Sorted(slices.Values(o.keys))), len(o.keys), "a Record read twice: %s", at)
						for i, k := range o.keys {
							require.InDelta(t, sums[i], o.scores[i], 1e-6, "%s: %d-th best", at, i)
							got := f.strings(`SELECT (sum(score::float8))::text FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2
							AND key = $3 AND word IN ('alpha', 'beta', 'gamma') HAVING count(*) = 3`, f.domain, f.branch, k)
							require.Len(t, got, 1, "%s holds the three words", k)
							require.InDelta(t, o.scores[i], parseFloat(t, got[0]), 1e-12, "%s's own sum", k)
						}
					}
				}
			}
		}
	}
	// Which means read a plateau whole: its rows with rows 0, the AND with
	// the other words' tokens with rows 1<<30 (every plateau read whole).
	for _, tc := range []struct {
		rows    int
		fromRow bool
	}{{0, true}, {1 << 30, false}} {
		calls := functionCalls(t, f, "pl", []string{"lb_search_triple_rows", "lb_search_triple_top"}, func(ctx context.Context, tx pgx.Tx) error {
			return drain(tx.Query(ctx, `SELECT * FROM lb_search_triples($1, $2, ARRAY['alpha', 'beta', 'gamma'], 20, 100000, 4096, 256, $3, $4, 0)`,
				f.domain, f.branch, 1<<30, tc.rows))
		})
		if tc.fromRow {
			require.Positive(t, calls["lb_search_triple_rows"], "%v", calls)
			require.Zero(t, calls["lb_search_triple_top"], "%v", calls)
		} else {
			require.Zero(t, calls["lb_search_triple_rows"], "%v", calls)
			require.Positive(t, calls["lb_search_triple_top"], "%v", calls)
		}
	}
	// Triples met rather than read whole (no plateau read whole, sizes
	// counted to 1): with pair 0 each is the meeting of its three
	// plateaus; with pair 1<<30 the meeting of two plateaus read from its
	// rows settles every triple of the two, and no meeting of three is
	// left; with pair 3 the meetings of more than 3 Records fall back to
	// the meeting of three.
	met := func(pair, limit int) map[string]int64 {
		return functionCalls(t, f, "pl", []string{"lb_search_triple_rows", "lb_search_triple_meet"}, func(ctx context.Context, tx pgx.Tx) error {
			return drain(tx.Query(ctx, `SELECT * FROM lb_search_triples($1, $2, ARRAY['alpha', 'beta', 'gamma'], $5, 0, 1, 256, $3, 1 << 30, $4)`,
				f.domain, f.branch, 1<<30, pair, limit))
		})
	}
	never, always, few := met(0, 1000), met(1<<30, 1000), met(3, 1000)
	require.Zero(t, never["lb_search_triple_rows"], "%v", never)
	require.Positive(t, never["lb_search_triple_meet"], "%v", never)
	require.Zero(t, always["lb_search_triple_meet"], "%v", always)
	require.Positive(t, always["lb_search_triple_rows"], "%v", always)
	require.Less(t, always["lb_search_triple_rows"], never["lb_search_triple_meet"], "pairs read %v, triples met %v", always, never)
	require.Positive(t, few["lb_search_triple_meet"], "%v", few)
	require.Positive(t, few["lb_search_triple_rows"], "%v", few)
	// Three Records wanted, a meeting of two read past 3 rows: once, its
	// rows read past the cap make, with the Records read before, three
	// scoring at least its triple's sum, and reading stops there without
	// the meeting of three (two meetings of three in all; three were every
	// meeting of two read past the cap followed by the meeting of three).
	three := met(3, 3)
	require.Equal(t, int64(6), three["lb_search_triple_rows"], "%v", three)
	require.Equal(t, int64(2), three["lb_search_triple_meet"], "%v", three)

	// No Record holds the three: complete, none.
	o := triples([3]string{"alpha", "eta", "iota"}, 20, 64, 16, 256, 1<<30)
	require.NotNil(t, o.keys)
	require.Empty(t, o.keys)
	require.True(t, o.complete)

	// lorebase_app may call lb_search_triples itself: scoped to the other
	// Domain, row-level security leaves it none of this Domain's postings.
	require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, other.domain); err != nil {
			return err
		}
		var keys []string
		var complete bool
		if err := tx.QueryRow(f.ctx, `SELECT keys, complete FROM lb_search_triples($1, $2, ARRAY['alpha', 'beta', 'gamma'], 20)`,
			f.domain, f.branch).Scan(&keys, &complete); err != nil {
			return err
		}
		require.Empty(t, keys)
		require.True(t, complete)
		return nil
	}))

	// Too many plateaus or a budget passed: NULL, the caller takes another
	// path; bad arguments are refused.
	abc := [3]string{"alpha", "beta", "gamma"}
	require.Nil(t, triples(abc, 20, 0, 4096, 2, 1<<30).keys)
	require.Nil(t, triples(abc, 20, 0, 4096, 256, 10).keys)
	require.NotNil(t, triples(abc, 1, 100000, 4096, 256, 1<<30).keys)
	_, err := s.Pool.Exec(f.ctx, `SELECT lb_search_triples($1, $2, ARRAY['alpha', 'beta'], 20)`, f.domain, f.branch)
	require.ErrorContains(t, err, "2 words")
	_, err = s.Pool.Exec(f.ctx, `SELECT lb_search_triples($1, $2, ARRAY['alpha', 'beta', 'gamma'], 20, p_rows => -1)`, f.domain, f.branch)
	require.ErrorContains(t, err, "rows -1")
	_, err = s.Pool.Exec(f.ctx, `SELECT lb_search_triples($1, $2, ARRAY['alpha', 'beta', 'gamma'], 20, p_pair => -1)`, f.domain, f.branch)
	require.ErrorContains(t, err, "pair -1")
}

// TestSearchTripleStatements: the meeting of three plateaus and a plateau
// read whole with the Records holding the other two words, each what SQL
// over the postings says, in this Domain only, both read from the GIN index
// of the plateaus' tokens and no other index.
func TestSearchTripleStatements(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "triple-plans")
	f.commit("alice", "", tripleParts("P", 3000)...)
	_, err := s.Pool.Exec(f.ctx, `ANALYZE mat_search_words`)
	require.NoError(t, err)

	plateaus := func(w string) []float32 {
		var got []float32
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_plateaus($1, $2, $3, 256)`, f.domain, f.branch, w).Scan(&got))
		require.Greater(t, len(got), 1, w)
		return got
	}
	words := []string{"alpha", "beta", "gamma"}
	ps := [][]float32{plateaus("alpha"), plateaus("beta"), plateaus("gamma")}
	for _, x := range ps[0] {
		for _, y := range ps[1] {
			for _, z := range ps[2] {
				rows, err := s.Pool.Query(f.ctx, `SELECT a.key FROM mat_search_words a, mat_search_words b, mat_search_words c
					WHERE a.domain_id = $1 AND a.branch_id = $2 AND a.word = 'alpha' AND a.score = $3
					  AND b.domain_id = $1 AND b.branch_id = $2 AND b.word = 'beta' AND b.score = $4 AND b.key = a.key
					  AND c.domain_id = $1 AND c.branch_id = $2 AND c.word = 'gamma' AND c.score = $5 AND c.key = a.key
					ORDER BY a.key COLLATE "C"`, f.domain, f.branch, x, y, z)
				require.NoError(t, err)
				want, err := pgx.CollectRows(rows, pgx.RowTo[string])
				require.NoError(t, err)
				for _, limit := range []int{1, 3, 1000} {
					for _, order := range [][3]int{{0, 1, 2}, {2, 0, 1}} {
						sc := []float32{x, y, z}
						var got []string
						require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_triple_meet($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
							f.domain, f.branch, words[order[0]], sc[order[0]], words[order[1]], sc[order[1]],
							words[order[2]], sc[order[2]], limit).Scan(&got))
						require.Equal(t, want[:min(limit, len(want))], got, "%v %v %v %d %v", x, y, z, limit, order)
					}
				}
			}
		}
	}
	// Each plateau of each word read whole: its Records holding the other
	// two words, with their sums in word order.
	for i, w := range words {
		for _, x := range ps[i] {
			rows, err := s.Pool.Query(f.ctx, `SELECT a.key, a.score::float8 + b.score + c.score FROM mat_search_words a
				JOIN mat_search_words b ON b.domain_id = a.domain_id AND b.branch_id = a.branch_id AND b.key = a.key AND b.word = 'beta'
				JOIN mat_search_words c ON c.domain_id = a.domain_id AND c.branch_id = a.branch_id AND c.key = a.key AND c.word = 'gamma'
				JOIN mat_search_words s ON s.domain_id = a.domain_id AND s.branch_id = a.branch_id AND s.key = a.key AND s.word = $3
				WHERE a.domain_id = $1 AND a.branch_id = $2 AND a.word = 'alpha' AND s.score = $4`, f.domain, f.branch, w, x)
			require.NoError(t, err)
			want := map[string]float64{}
			for rows.Next() {
				var k string
				var v float64
				require.NoError(t, rows.Scan(&k, &v))
				want[k] = v
			}
			require.NoError(t, rows.Err())
			var keys []string
			var sums []float64
			others := slices.Delete(slices.Clone(ps), i, i+1)
			require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT keys, sums FROM lb_search_triple_top($1, $2, ARRAY['alpha', 'beta', 'gamma'], $3, $4, $5, $6)`,
				f.domain, f.branch, i+1, x, others[0], others[1]).Scan(&keys, &sums))
			got := map[string]float64{}
			for j, k := range keys {
				got[k] = sums[j]
			}
			require.Equal(t, want, got, "%s at %v", w, x)
			// The same plateau from its rows, checked for the other two
			// words: the same Records and sums.
			var seen int
			require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT keys, sums, seen FROM lb_search_triple_rows($1, $2, ARRAY['alpha', 'beta', 'gamma'], ARRAY[$3::int], ARRAY[$4::real])`,
				f.domain, f.branch, i+1, x).Scan(&keys, &sums, &seen))
			got = map[string]float64{}
			for j, k := range keys {
				got[k] = sums[j]
			}
			require.Len(t, keys, len(got), "%s at %v: a Record twice", w, x)
			require.Equal(t, want, got, "%s at %v, from its rows", w, x)
			require.Equal(t, f.strings(`SELECT count(*)::text FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2 AND word = $3 AND score = $4`,
				f.domain, f.branch, w, x), []string{fmt.Sprint(seen)}, "%s at %v: the plateau's rows", w, x)
		}
	}
	// The meeting of two plateaus of two words read from its rows, each
	// checked for the third word: the Records holding the third word at
	// any score, with their sums; seen counts the meeting's rows, at most
	// cap + 1 of them read.
	for i := range words {
		for j := range words {
			if i == j {
				continue
			}
			for _, x := range ps[i] {
				for _, y := range ps[j] {
					rows, err := s.Pool.Query(f.ctx, `SELECT a.key, a.score::float8 + b.score + c.score, x.score IS NOT NULL FROM mat_search_words a
						JOIN mat_search_words b ON b.domain_id = a.domain_id AND b.branch_id = a.branch_id AND b.key = a.key AND b.word = 'beta'
						JOIN mat_search_words c ON c.domain_id = a.domain_id AND c.branch_id = a.branch_id AND c.key = a.key AND c.word = 'gamma'
						LEFT JOIN mat_search_words x ON x.domain_id = a.domain_id AND x.branch_id = a.branch_id AND x.key = a.key AND x.word = $3 AND x.score = $4
						WHERE a.domain_id = $1 AND a.branch_id = $2 AND a.word = 'alpha'
						  AND EXISTS (SELECT 1 FROM mat_search_words y WHERE y.domain_id = a.domain_id AND y.branch_id = a.branch_id
						                 AND y.key = a.key AND y.word = $5 AND y.score = $6)`, f.domain, f.branch, words[i], x, words[j], y)
					require.NoError(t, err)
					want := map[string]float64{}
					for rows.Next() {
						var k string
						var v float64
						var in bool
						require.NoError(t, rows.Scan(&k, &v, &in))
						if in {
							want[k] = v
						}
					}
					require.NoError(t, rows.Err())
					both, err := strconv.Atoi(f.strings(`SELECT count(*)::text FROM mat_search_words a JOIN mat_search_words b
						ON b.domain_id = a.domain_id AND b.branch_id = a.branch_id AND b.key = a.key AND b.word = $5 AND b.score = $6
						WHERE a.domain_id = $1 AND a.branch_id = $2 AND a.word = $3 AND a.score = $4`, f.domain, f.branch, words[i], x, words[j], y)[0])
					require.NoError(t, err)
					capOf := func(n int) *int { return &n }
					for _, cp := range []*int{nil, capOf(both), capOf(max(both-1, 0)), capOf(0)} {
						var keys []string
						var sums []float64
						var seen int
						require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT keys, sums, seen FROM lb_search_triple_rows($1, $2, ARRAY['alpha', 'beta', 'gamma'], ARRAY[$3::int, $4::int], ARRAY[$5::real, $6::real], $7)`,
							f.domain, f.branch, i+1, j+1, x, y, cp).Scan(&keys, &sums, &seen))
						at := fmt.Sprintf("%s at %v, %s at %v, cap %v", words[i], x, words[j], y, cp)
						if cp == nil || *cp >= both {
							require.Equal(t, both, seen, at)
							got := map[string]float64{}
							for n, k := range keys {
								got[k] = sums[n]
							}
							require.Len(t, keys, len(got), "%s: a Record twice", at)
							require.Equal(t, want, got, at)
						} else {
							require.Equal(t, *cp+1, seen, at)
							require.LessOrEqual(t, len(keys), seen, at)
							for n, k := range keys {
								require.Contains(t, want, k, at)
								require.InDelta(t, want[k], sums[n], 1e-12, at)
							}
						}
					}
				}
			}
		}
	}
	// Bad plateaus or caps are refused.
	for _, bad := range []string{`ARRAY[1, 1], ARRAY[1, 1]::real[]`, `ARRAY[4], ARRAY[1]::real[]`, `'{}'::int[], '{}'::real[]`,
		`ARRAY[1, 2, 3], ARRAY[1, 1, 1]::real[]`, `ARRAY[1, 2], ARRAY[1]::real[]`, `ARRAY[1, 2], ARRAY[1, 1]::real[], -1`} {
		_, err := s.Pool.Exec(f.ctx, `SELECT lb_search_triple_rows($1, $2, ARRAY['alpha', 'beta', 'gamma'], `+bad+`)`, f.domain, f.branch)
		require.ErrorContains(t, err, "lb_search_triple_rows:", bad)
	}
	// It plans serially whoever calls it, not only under lb_search.
	var conf []string
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT proconfig FROM pg_proc WHERE proname = 'lb_search_triple_rows'`).Scan(&conf))
	require.Contains(t, conf, "max_parallel_workers_per_gather=0")

	// The plans, with lb_search's settings and each function's own.
	plan := func(stmt string, args []any, settings ...string) string {
		var lines []string
		require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
			for _, st := range append([]string{"enable_seqscan = off"}, settings...) {
				if _, err := tx.Exec(f.ctx, `SET LOCAL `+st); err != nil {
					return err
				}
			}
			var sql string
			if err := tx.QueryRow(f.ctx, stmt, args...).Scan(&sql); err != nil {
				return err
			}
			rows, err := tx.Query(f.ctx, `EXPLAIN `+sql)
			if err != nil {
				return err
			}
			lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		}))
		return strings.Join(lines, "\n")
	}
	last := func(p []float32) float32 { return p[len(p)-1] }
	// Both read the plateaus' tokens from their GIN index alone: no other
	// index, no scan of the Domain's Records.
	tokensOnly := func(p string) {
		t.Helper()
		require.Contains(t, p, "Bitmap Index Scan on mat_records_", p)
		require.Contains(t, p, "lb_search_tokens_idx", p)
		for _, line := range strings.Split(p, "\n") {
			if strings.Contains(line, "Index Scan") || strings.Contains(line, "Seq Scan") || strings.Contains(line, "Index Only Scan") {
				require.Contains(t, line, "lb_search_tokens_idx", p)
			}
		}
	}
	meet := plan(`SELECT lb_search_triple_sql($1, $2, 'alpha', $3, 'gamma', $4, 'beta', $5, 20)`,
		[]any{f.domain, f.branch, last(ps[0]), last(ps[2]), last(ps[1])}, "enable_indexscan = off")
	tokensOnly(meet)
	top := plan(`SELECT lb_search_triple_top_sql($1, $2, ARRAY['alpha', 'beta', 'gamma'], 3, $3, $4, $5)`,
		[]any{f.domain, f.branch, ps[2][0], ps[0], ps[1]}, "enable_indexscan = off")
	tokensOnly(top)
	// The plateau's rows: its token alone, the other words checked on the
	// rows it finds (in the aggregates' filters, never a read of the
	// search vectors' GIN index, whose AND with the token would decode the
	// other words' posting lists).
	rowsPlan := plan(`SELECT lb_search_triple_rows_sql($1, $2, ARRAY['alpha', 'beta', 'gamma'], ARRAY[3], ARRAY[$3::real])`,
		[]any{f.domain, f.branch, ps[2][0]}, "enable_indexscan = off")
	tokensOnly(rowsPlan)
	// The meeting of two plateaus' rows: the two tokens alone, at most the
	// cap and one rows read.
	pairPlan := plan(`SELECT lb_search_triple_rows_sql($1, $2, ARRAY['alpha', 'beta', 'gamma'], ARRAY[1, 3], ARRAY[$3::real, $4::real], 50)`,
		[]any{f.domain, f.branch, last(ps[0]), last(ps[2])}, "enable_indexscan = off")
	tokensOnly(pairPlan)
	require.Contains(t, pairPlan, "Limit", pairPlan)
}

// cappedParts writes n Parts for TestSearchTriplesOrderCappedPlateaus:
// three words, each once in the names of a few Records (a small top
// plateau, never all three in one Record) and once in the notes of many:
// ua in two thirds of the Records, ub in a sixth, uc in a twenty-fourth,
// the Records holding uc in their notes holding the other two there too.
func cappedParts(n int) []change {
	var out []change
	for i := range n {
		var name, note []string
		switch {
		case i%40 == 0:
			name = append(name, "ua")
		case i%50 == 7:
			name = append(name, "ub")
		case i%30 == 11:
			name = append(name, "uc")
		}
		if i%3 != 0 {
			note = append(note, "ua")
		}
		if i%6 == 1 {
			note = append(note, "ub")
		}
		if i%24 == 1 {
			note = append(note, "uc")
		}
		out = append(out, put("Part", fmt.Sprintf("C-%05d", i), map[string]any{
			"name": strings.Join(append(name, "part"), " "), "note": strings.Join(append(note, "plain"), " ")}))
	}
	return out
}

// TestSearchTriplesOrderCappedPlateaus: plateaus counted only up to the cap
// rank by how far their counted keys reach, so the postings a call reads
// do not depend on the order of the query's words (ranked by word order,
// the meeting of the notes' plateaus merged the first word's, however much
// larger than the others'), and the answer stays the exhaustive ranking.
func TestSearchTriplesOrderCappedPlateaus(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "triples-capped")
	f.commit("alice", "", cappedParts(4800)...)
	_, err := s.Pool.Exec(f.ctx, `VACUUM ANALYZE mat_search_words`)
	require.NoError(t, err)

	// The postings one call reads from the rank index (this transaction's
	// index tuples), its keys and scores, with sizes counted up to count.
	call := func(w [3]string, count int) (read int64, keys []string, scores []float64) {
		// The counters of the backend's statistics not yet reported,
		// read before and after the call in one transaction.
		const returned = `SELECT coalesce(sum(pg_stat_get_xact_tuples_returned(i.indexrelid)), 0)::bigint
			FROM pg_index i JOIN pg_class c ON c.oid = i.indrelid WHERE c.relname LIKE 'mat_search_words%'`
		var before, after int64
		require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
			if err := tx.QueryRow(f.ctx, returned).Scan(&before); err != nil {
				return err
			}
			if err := tx.QueryRow(f.ctx, `SELECT keys, scores FROM lb_search_triples($1, $2, $3, 20, 0, $4, 256, 1 << 30)`,
				f.domain, f.branch, w[:], count).Scan(&keys, &scores); err != nil {
				return err
			}
			return tx.QueryRow(f.ctx, returned).Scan(&after)
		}))
		return after - before, keys, scores
	}
	perms := [][3]string{{"ua", "ub", "uc"}, {"ua", "uc", "ub"}, {"ub", "ua", "uc"},
		{"ub", "uc", "ua"}, {"uc", "ua", "ub"}, {"uc", "ub", "ua"}}
	for _, count := range []int{16, 64} {
		var least, most int64
		for _, w := range perms {
			// The session's plans settled first (PL/pgSQL plans its
			// statements for the first calls' values, then keeps one).
			for range 6 {
				call(w, count)
			}
			read, keys, scores := call(w, count)
			sums := tripleSums(t, s, f, w)
			require.Greater(t, len(sums), 100)
			require.Len(t, keys, 20)
			for i := range keys {
				require.InDelta(t, sums[i], scores[i], 1e-6, "%v count %d: %d-th best", w, count, i)
			}
			if least == 0 || read < least {
				least = read
			}
			most = max(most, read)
			t.Logf("%v count %d: %d postings read", w, count, read)
		}
		require.LessOrEqual(t, float64(most), 1.1*float64(least), "count %d: postings read by word order", count)
	}
}

// TestSearchTriplesOnLargeBranch: on a branch of 3,000 × candidates
// Records or more, three words each in 150 × candidates Records or more
// and expected to meet in 4 × candidates or more take the triples of their
// plateaus though fewer than 32 × candidates were expected (the GIN
// index's AND would check every Record of the rarest word), and so do
// three words each in 50 × candidates or more and of two score plateaus
// or more, expected to meet in 2 × candidates or more; a word of one
// plateau, or words expected in fewer, keep the GIN index's AND. Both
// answer the exhaustive ranking.
func TestSearchTriplesOnLargeBranch(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "triples-large")
	// ka in 600 Records, kb in 429, kc in 1,000, kd in 131, ke in 231:
	// ka kb kc expected in 3,000 × 0.2 × 0.143 × 0.333 = 29 (and meet in
	// 29, every 105th), ka kc ke in 15 (16), ka kb ke in 6.6 (7), ka kc kd
	// in 9 (9; kd of one plateau, in the notes only). kf in 82 Records,
	// half of them in the name (two plateaus): ka kc kf expected in 5.5
	// (meet in 6); kg in 60, half in the name: kb kf kg expected in 0.2.
	var cs []change
	for i := range 3000 {
		var name, note []string
		// in puts the words in the name when inName, else in the note.
		in := func(inName bool, words ...string) {
			if inName {
				name = append(name, words...)
			} else {
				note = append(note, words...)
			}
		}
		if i%5 == 0 {
			in(i%3 == 0, "ka")
		}
		if i%7 == 0 {
			if i%2 == 0 {
				in(true, "kb", "kb")
			} else {
				in(false, "kb")
			}
		}
		if i%3 == 0 {
			in(false, "kc")
			if i%9 == 0 {
				in(true, "kc")
			}
		}
		if i%23 == 0 {
			in(false, "kd")
		}
		if i%13 == 0 {
			in(false, "ke")
		}
		if i%37 == 0 {
			in(i%2 == 0, "kf")
		}
		if i%50 == 3 {
			in(i%100 == 3, "kg")
		}
		cs = append(cs, put("Part", fmt.Sprintf("L-%04d", i), map[string]any{
			"name": strings.Join(append(name, "part"), " "), "note": strings.Join(append(note, "plain"), " ")}))
	}
	f.commit("alice", "", cs...)
	f.keepCounters()

	r := reads.New(s, reads.Config{SearchCandidates: 1})
	for _, tc := range []struct {
		q       string
		triples bool
	}{{"ka kb kc", true}, {"kc ka kb", true}, {"ka kc ke", true}, {"ka kb ke", true}, {"ka kc kd", false},
		{"ka kc kf", true}, {"kf kc ka", true}, {"kb kf kg", false}} {
		calls := searchCallsAt(t, f, tc.q, 1, 100, "lb_search_triples", "lb_search_full_keys")
		if tc.triples {
			require.Positive(t, calls["lb_search_triples"], "%s: %v", tc.q, calls)
			require.Zero(t, calls["lb_search_full_keys"], "%s: %v", tc.q, calls)
		} else {
			require.Zero(t, calls["lb_search_triples"], "%s: %v", tc.q, calls)
			require.Positive(t, calls["lb_search_full_keys"], "%s: %v", tc.q, calls)
		}
		for _, limit := range []int{5, 20} {
			res, err := r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: limit})
			require.NoError(t, err)
			require.False(t, res.Truncated, tc.q)
			want := rankByWords(t, s, f, tc.q, limit)
			require.NotEmpty(t, want, tc.q)
			requireSameRanking(t, s, f, tc.q, want, res.Results)
		}
	}
}
