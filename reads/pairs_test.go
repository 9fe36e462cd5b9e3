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

// pairParts writes the Parts of the two-word tests: alpha and beta each 0
// to 3 times in the name (weight A) and the note (weight B), in patterns
// that give each word several score plateaus of very different sizes (a
// few Records hold alpha three times in the name, hundreds once in the
// note); zeta is in 4 Records, 2 of them with alpha; omega in 30, none
// with alpha.
func pairParts(prefix string, n int) []change {
	var out []change
	word := func(w string, k int) []string {
		var x []string
		for range k {
			x = append(x, w)
		}
		return x
	}
	for i := range n {
		var name, note []string
		switch {
		case i%97 == 3:
			name = append(name, word("alpha", 3)...)
		case i%5 == 1:
			name = append(name, "alpha")
		case i%3 == 0:
			note = append(note, word("alpha", 1+i%2)...)
		}
		switch {
		case i%11 == 2:
			name = append(name, word("beta", 2)...)
			note = append(note, "beta")
		case i%4 == 1:
			note = append(note, "beta")
		case i%7 == 0:
			name = append(name, "beta")
		}
		if i%300 == 3 || i%300 == 10 || i == 7 || i == 8 {
			note = append(note, "zeta")
		}
		if i%40 == 2 {
			name = append(name, "omega")
		}
		name = append(name, fmt.Sprintf("p%d", i))
		out = append(out, put("Part", fmt.Sprintf("%s-%04d", prefix, i), map[string]any{
			"name": strings.Join(name, " "), "note": strings.Join(append(note, "plain"), " ")}))
	}
	return out
}

// TestSearchPairs: a two-word query ranks its full matches from the pairs
// of the words' score plateaus, best sum first (lb_search_pairs): what it
// returns is the exhaustive ranking (ties interchangeable), it reads only
// what the answer needs, the partial matches follow when fewer than five
// Records hold both words, and another Domain's Records in the same
// partition stay out.
func TestSearchPairs(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "pairs")
	f.commit("alice", "", pairParts("P", 1200)...)

	// Another Domain whose rows share the partition of this one's, under
	// the same keys, holds both words as this Domain's best Records do
	// (alpha three times in the name, beta twice in the name and once in
	// the note: the same plateaus): read, they would rank first.
	other := f.sharingPartition(t, s, "pairs-other", put("Part", "P-0000", map[string]any{"name": "alpha beta"}))
	var hostile []change
	for i := range 1200 {
		if i%3 == 0 {
			hostile = append(hostile, put("Part", fmt.Sprintf("P-%04d", i), map[string]any{
				"name": "alpha alpha alpha beta beta", "note": "beta zeta omega"}))
		}
	}
	other.commit("zed", "", hostile...)

	full := func(q string) int {
		var n int
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
			AND NOT deleted AND search @@ plainto_tsquery('simple', $3)`, f.domain, f.branch, q).Scan(&n))
		return n
	}
	for _, tc := range []struct {
		q     string
		limit int
	}{{"alpha beta", 1}, {"alpha beta", 5}, {"alpha beta", 20}, {"beta alpha", 20}, {"alpha beta", 100},
		{"alpha beta", 99}, {"alpha zeta", 20}, {"zeta alpha", 3}, {"alpha omega", 20}, {"beta omega", 10}} {
		t.Run(fmt.Sprintf("%s/%d", tc.q, tc.limit), func(t *testing.T) {
			res, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: tc.limit})
			require.NoError(t, err)
			require.False(t, res.Truncated)
			want := rankByWords(t, s, f, tc.q, tc.limit)
			require.NotEmpty(t, want)
			requireSameRanking(t, s, f, tc.q, want, res.Results)
			if n := full(tc.q); n > tc.limit {
				// Only the pairs the answer needs were read: those of the
				// Records tied with the last one returned too.
				next := rankByWords(t, s, f, tc.q, tc.limit+1)
				if next[tc.limit].Score < next[tc.limit-1].Score {
					require.Less(t, res.Ranked, n, "every full match read")
				}
			}
		})
	}

	// lb_search_pairs itself, as lb_search calls it (the owner, every
	// statement filtered by Domain and branch).
	type pairsOut struct {
		keys     []string
		scores   []float64
		complete bool
		pairs    int
	}
	pairs := func(w1, w2 string, limit, small, count, maxPlateaus, maxPairs int) pairsOut {
		var o pairsOut
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT keys, scores, complete, pairs FROM lb_search_pairs($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
			f.domain, f.branch, w1, w2, limit, small, count, maxPlateaus, maxPairs).Scan(&o.keys, &o.scores, &o.complete, &o.pairs))
		return o
	}
	// The exhaustive sums of both words' postings of every Record holding
	// both, best first.
	var sums []float64
	rows, err := s.Pool.Query(f.ctx, `SELECT a.score::float8 + b.score FROM mat_search_words a
		JOIN mat_search_words b ON b.domain_id = a.domain_id AND b.branch_id = a.branch_id AND b.key = a.key AND b.word = 'beta'
		WHERE a.domain_id = $1 AND a.branch_id = $2 AND a.word = 'alpha' ORDER BY 1 DESC`, f.domain, f.branch)
	require.NoError(t, err)
	sums, err = pgx.CollectRows(rows, pgx.RowTo[float64])
	require.NoError(t, err)
	require.Greater(t, len(sums), 100)
	// Best plateaus read whole up to 0, 64 and every posting (small);
	// plateaus probed or merged by their sizes counted up to 1, 16 or
	// 4096 (count).
	for _, small := range []int{0, 64, 100000} {
		for _, count := range []int{1, 16, 4096} {
			for _, limit := range []int{1, 7, 20, 150, len(sums), len(sums) + 5} {
				o := pairs("alpha", "beta", limit, small, count, 256, 1000)
				require.NotNil(t, o.keys)
				requireTopWithTies(t, o.scores, min(limit, len(sums)), "small %d count %d limit %d", small, count, limit)
				if limit != len(sums) {
					// (With exactly limit Records, whether the last pair
					// read had more is not known.)
					require.Equal(t, limit > len(sums), o.complete, "small %d count %d limit %d", small, count, limit)
				}
				require.Len(t, slices.Compact(slices.Sorted(slices.Values(o.keys))), len(o.keys), "a Record read twice")
				for i, k := range o.keys {
					require.InDelta(t, sums[i], o.scores[i], 1e-6, "small %d count %d limit %d: %d-th best", small, count, limit, i)
					got := f.strings(`SELECT (sum(score::float8))::text FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2
						AND key = $3 AND word IN ('alpha', 'beta') HAVING count(*) = 2`, f.domain, f.branch, k)
					require.Len(t, got, 1, "%s holds both words", k)
					require.InDelta(t, o.scores[i], parseFloat(t, got[0]), 1e-12, "%s's own sum", k)
				}
			}
		}
	}
	// lorebase_app may call lb_search_pairs itself: scoped to the other
	// Domain, row-level security leaves it none of this Domain's postings.
	require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, other.domain); err != nil {
			return err
		}
		var keys []string
		var complete bool
		if err := tx.QueryRow(f.ctx, `SELECT keys, complete FROM lb_search_pairs($1, $2, 'alpha', 'beta', 20)`,
			f.domain, f.branch).Scan(&keys, &complete); err != nil {
			return err
		}
		require.Empty(t, keys)
		require.True(t, complete)
		return nil
	}))

	// lb_search_pairs_of hands each word's plateaus back with the sizes the
	// pairs counted (none counted past the best one here, p_small 0): each
	// the plateau's size up to p_count; given them again, it counts none
	// and answers the same.
	type plateausOut struct {
		scores []float32
		sizes  []*int32
		top    int32
	}
	memo := func(tx pgx.Tx, w1, w2 string, limit int) (pairsOut, [2]plateausOut) {
		var o pairsOut
		var x [2]plateausOut
		require.NoError(t, tx.QueryRow(f.ctx, `WITH p AS (SELECT * FROM lb_search_pairs_of($1, $2,
				lb_search_word_plateaus($1, $2, $3, 256, 0, 4096), lb_search_word_plateaus($1, $2, $4, 256, 0, 4096), $5))
			SELECT keys, scores, complete, pairs, (p_x1).scores, (p_x1).sizes, (p_x1).top, (p_x2).scores, (p_x2).sizes, (p_x2).top FROM p`,
			f.domain, f.branch, w1, w2, limit).Scan(&o.keys, &o.scores, &o.complete, &o.pairs,
			&x[0].scores, &x[0].sizes, &x[0].top, &x[1].scores, &x[1].sizes, &x[1].top))
		return o, x
	}
	const count = "lb_search_plateau_count(integer,integer,text,real,integer)"
	var fresh pairsOut
	var back [2]plateausOut
	got := functionCalls(t, f, "pl", []string{count}, func(ctx context.Context, tx pgx.Tx) error {
		fresh, back = memo(tx, "alpha", "beta", 150)
		return nil
	})
	require.Equal(t, pairs("alpha", "beta", 150, 0, 4096, 256, 64), fresh)
	counted := 0
	for i, w := range []string{"alpha", "beta"} {
		require.Zero(t, back[i].top, "p_small 0: no plateau read whole")
		require.Len(t, back[i].sizes, len(back[i].scores))
		for j, n := range back[i].sizes {
			if n == nil {
				continue
			}
			counted++
			var want int32
			require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT least(count(*), 4096) FROM mat_search_words
				WHERE domain_id = $1 AND branch_id = $2 AND word = $3 AND score = $4`, f.domain, f.branch, w, back[i].scores[j]).Scan(&want))
			require.Equal(t, want, *n, "%s's plateau %d", w, j)
		}
	}
	require.Greater(t, counted, 2, "the pairs counted plateaus past the first of each word")
	require.Equal(t, int64(counted), got[count], "each plateau counted once")
	got = functionCalls(t, f, "pl", []string{count, "lb_search_plateaus"}, func(ctx context.Context, tx pgx.Tx) error {
		var again pairsOut
		err := tx.QueryRow(ctx, `SELECT keys, scores, complete, pairs FROM lb_search_pairs_of($1, $2,
				ROW('alpha', $3::real[], $4::int[], $5)::lb_search_word_plateaus, ROW('beta', $6::real[], $7::int[], $8)::lb_search_word_plateaus, 150)`,
			f.domain, f.branch, back[0].scores, back[0].sizes, back[0].top, back[1].scores, back[1].sizes, back[1].top).
			Scan(&again.keys, &again.scores, &again.complete, &again.pairs)
		require.Equal(t, fresh, again)
		return err
	})
	require.Zero(t, got[count], "the sizes handed back counted again: %v", got)
	require.Zero(t, got["lb_search_plateaus"], "%v", got)

	// Too many plateaus or pairs: NULL, the caller takes another path.
	require.Nil(t, pairs("alpha", "beta", 20, 0, 4096, 2, 64).keys)
	require.Nil(t, pairs("alpha", "beta", len(sums), 0, 4096, 256, 1).keys)
	require.Equal(t, 1, pairs("alpha", "beta", 1, 0, 4096, 256, 1).pairs, "the best pair holds the best Record")
	require.Zero(t, pairs("alpha", "beta", 1, 100000, 4096, 256, 1).pairs, "every plateau read whole")
}

func parseFloat(t *testing.T, s string) float64 {
	t.Helper()
	x, err := strconv.ParseFloat(s, 64)
	require.NoError(t, err)
	return x
}

// TestSearchPairStatements: the meeting of two plateaus read as a merge
// join of two ranges of the rank index (no sort, no other index) or as a
// nested loop probing one posting per Record, each the first Records in
// key order that hold both, in this Domain only.
func TestSearchPairStatements(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "pair-plans")
	f.commit("alice", "", pairParts("P", 3000)...)
	_, err := s.Pool.Exec(f.ctx, `ANALYZE mat_search_words`)
	require.NoError(t, err)

	plateaus := func(w string) []float32 {
		var got []float32
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_plateaus($1, $2, $3, 256)`, f.domain, f.branch, w).Scan(&got))
		var want []float32
		rows, err := s.Pool.Query(f.ctx, `SELECT DISTINCT score FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2 AND word = $3
			ORDER BY 1 DESC`, f.domain, f.branch, w)
		require.NoError(t, err)
		want, err = pgx.CollectRows(rows, pgx.RowTo[float32])
		require.NoError(t, err)
		require.Equal(t, want, got, w)
		return got
	}
	pa, pb := plateaus("alpha"), plateaus("beta")
	require.Greater(t, len(pa), 2)
	require.Greater(t, len(pb), 2)
	var capped []float32
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_plateaus($1, $2, 'alpha', 2)`, f.domain, f.branch).Scan(&capped))
	require.Equal(t, pa[:2], capped)

	for _, x := range pa {
		for _, y := range pb {
			var want []string
			rows, err := s.Pool.Query(f.ctx, `SELECT a.key FROM mat_search_words a, mat_search_words b
				WHERE a.domain_id = $1 AND a.branch_id = $2 AND a.word = 'alpha' AND a.score = $3
				  AND b.domain_id = $1 AND b.branch_id = $2 AND b.word = 'beta' AND b.score = $4 AND b.key = a.key
				ORDER BY a.key COLLATE "C"`, f.domain, f.branch, x, y)
			require.NoError(t, err)
			want, err = pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			for _, fn := range []string{"lb_search_pair_merge", "lb_search_pair_probe"} {
				for _, limit := range []int{1, 3, 1000} {
					var got []string
					require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT `+fn+`($1, $2, 'alpha', $3, 'beta', $4, $5)`,
						f.domain, f.branch, x, y, limit).Scan(&got))
					require.Equal(t, want[:min(limit, len(want))], got, "%s %v %v %d", fn, x, y, limit)
				}
			}
		}
	}

	// The plans: the statement lb_search_pair_sql writes for the two
	// largest plateaus, with lb_search's settings and each function's own.
	plan := func(fn string, settings ...string) string {
		var lines []string
		require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
			for _, st := range append([]string{"enable_seqscan = off"}, settings...) {
				if _, err := tx.Exec(f.ctx, `SET LOCAL `+st); err != nil {
					return err
				}
			}
			var stmt string
			if err := tx.QueryRow(f.ctx, `SELECT `+fn+`($1, $2, 'alpha', $3, 'beta', $4, 20)`,
				f.domain, f.branch, pa[len(pa)-1], pb[len(pb)-1]).Scan(&stmt); err != nil {
				return err
			}
			rows, err := tx.Query(f.ctx, `EXPLAIN `+stmt)
			if err != nil {
				return err
			}
			lines, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		}))
		return strings.Join(lines, "\n")
	}
	merge := plan("lb_search_pair_sql", "enable_nestloop = off", "enable_hashjoin = off")
	require.Contains(t, merge, "Merge Join", merge)
	require.Equal(t, 2, rankScans(merge), merge)
	require.NotContains(t, merge, "Sort", merge)
	probe := plan("lb_search_pair_probe_sql", "enable_mergejoin = off", "enable_hashjoin = off")
	require.Contains(t, probe, "Nested Loop", probe)
	require.Contains(t, probe, "(key = s.key)", "each Record probed by its key: %s", probe)
	require.NotContains(t, probe, "Join Filter", probe)
	require.NotContains(t, probe, "Sort", probe)
	require.NotContains(t, probe, "Bitmap", probe)
}

// requireTopWithTies: scores (best first) hold the best n and those tied
// with the n-th (within a millionth), no other.
func requireTopWithTies(t *testing.T, scores []float64, n int, msgAndArgs ...any) {
	t.Helper()
	require.GreaterOrEqual(t, len(scores), n, msgAndArgs...)
	for _, x := range scores[n:] {
		require.GreaterOrEqual(t, x*(1+1e-6), scores[n-1], msgAndArgs...)
	}
}
