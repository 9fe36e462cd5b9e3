package reads_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// spanParts writes the Parts of the key-span tests: alpha in Records of
// every key range (A-, M- and Z- keys), 0 to 3 times in the name or the
// note so it has several score plateaus; sigma only in the M- keys (a
// narrow span inside alpha's, as a word of Supplier names beside a word
// of every Kind), tau in the M- and Z- keys.
func spanParts() []change {
	var out []change
	rep := func(w string, k int) []string {
		var x []string
		for range k {
			x = append(x, w)
		}
		return x
	}
	for _, r := range []struct {
		prefix string
		n      int
	}{{"A", 900}, {"M", 120}, {"Z", 900}} {
		for i := range r.n {
			var name, note []string
			switch {
			case i%89 == 5:
				name = append(name, rep("alpha", 3)...)
			case i%4 == 1:
				name = append(name, "alpha")
			case i%3 == 0:
				note = append(note, rep("alpha", 1+i%2)...)
			}
			if r.prefix == "M" {
				switch {
				case i%13 == 2:
					name = append(name, rep("sigma", 2)...)
				case i%2 == 0:
					note = append(note, "sigma")
				}
			}
			if r.prefix != "A" && i%3 != 1 {
				if i%7 == 0 {
					name = append(name, "tau")
				} else {
					note = append(note, "tau")
				}
			}
			name = append(name, fmt.Sprintf("%s%d", strings.ToLower(r.prefix), i))
			out = append(out, put("Part", fmt.Sprintf("%s-%04d", r.prefix, i), map[string]any{
				"name": strings.Join(name, " "), "note": strings.Join(append(note, "plain"), " ")}))
		}
	}
	return out
}

// TestSearchPlateauSpans: the meeting of two (or three) score plateaus is
// read only between the largest of their first keys and the smallest of
// their last (no Record outside holds them all): two words whose plateaus
// span different keys rank exactly as the exhaustive ranking, every
// meeting of plateaus read by merge or probe is the SQL join's, the counts
// lb_search_pairs chooses by are the postings within that span, the merge
// plans carry the span as index bounds, and another Domain's Records in
// the same partition, under the same keys and holding both words at their
// best, stay out.
func TestSearchPlateauSpans(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "spans")
	f.commit("alice", "", spanParts()...)
	other := f.sharingPartition(t, s, "spans-other", put("Part", "A-0000", map[string]any{"name": "alpha sigma tau"}))
	var hostile []change
	for _, p := range []string{"A", "M", "Z"} {
		for i := range 60 {
			hostile = append(hostile, put("Part", fmt.Sprintf("%s-%04d", p, i*7), map[string]any{
				"name": "alpha alpha alpha sigma sigma tau tau", "note": "sigma tau"}))
		}
	}
	other.commit("zed", "", hostile...)

	for _, tc := range []struct {
		q     string
		limit int
	}{{"alpha sigma", 1}, {"alpha sigma", 5}, {"alpha sigma", 20}, {"sigma alpha", 20}, {"alpha sigma", 100},
		{"sigma tau", 20}, {"tau alpha", 20}} {
		t.Run(fmt.Sprintf("%s/%d", tc.q, tc.limit), func(t *testing.T) {
			res, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: tc.limit})
			require.NoError(t, err)
			require.False(t, res.Truncated)
			want := rankByWords(t, s, f, tc.q, tc.limit)
			require.NotEmpty(t, want)
			requireSameRanking(t, s, f, tc.q, want, res.Results)
		})
	}

	plateaus := func(w string) []float32 {
		var got []float32
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_plateaus($1, $2, $3, 256)`, f.domain, f.branch, w).Scan(&got))
		require.Greater(t, len(got), 1, w)
		return got
	}
	ps := map[string][]float32{"alpha": plateaus("alpha"), "sigma": plateaus("sigma"), "tau": plateaus("tau")}
	strs := func(sql string, args ...any) []string {
		rows, err := s.Pool.Query(f.ctx, sql, args...)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	// The Records holding each word at the score given, in key order: the
	// SQL join the merges and probes must equal.
	meet := func(ws []string, sc []float32) []string {
		q := `SELECT a.key FROM mat_search_words a WHERE a.domain_id = $1 AND a.branch_id = $2 AND a.word = $3 AND a.score = $4`
		args := []any{f.domain, f.branch, ws[0], sc[0]}
		for i := 1; i < len(ws); i++ {
			q += fmt.Sprintf(` AND EXISTS (SELECT 1 FROM mat_search_words b WHERE b.domain_id = $1 AND b.branch_id = $2
				AND b.key = a.key AND b.word = $%d AND b.score = $%d)`, len(args)+1, len(args)+2)
			args = append(args, ws[i], sc[i])
		}
		return strs(q+` ORDER BY a.key COLLATE "C"`, args...)
	}
	// The span two plateaus cover, as the SQL reads it: the larger first
	// key and the smaller last, none when they do not overlap.
	wantBounds := func(w1 string, s1 float32, w2 string, s2 float32) []string {
		return strs(`SELECT concat_ws(' ', lo, hi) FROM (SELECT max(f) AS lo, min(l) AS hi, count(*) AS n
			FROM (SELECT min(key) AS f, max(key) AS l FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2
			        AND ((word = $3 AND score = $4) OR (word = $5 AND score = $6)) GROUP BY word) z) y
			WHERE n = 2 AND lo <= hi`, f.domain, f.branch, w1, s1, w2, s2)
	}
	bounds := func(w1 string, s1 float32, w2 string, s2 float32) []string {
		return strs(`SELECT concat_ws(' ', lo, hi) FROM lb_search_pair_bounds($1, $2, $3, $4, $5, $6) WHERE lo IS NOT NULL OR hi IS NOT NULL`,
			f.domain, f.branch, w1, s1, w2, s2)
	}
	met := 0
	for _, x := range ps["alpha"] {
		for _, y := range ps["sigma"] {
			require.Equal(t, wantBounds("alpha", x, "sigma", y), bounds("alpha", x, "sigma", y), "alpha at %v, sigma at %v", x, y)
			require.Equal(t, wantBounds("alpha", x, "sigma", y), bounds("sigma", y, "alpha", x), "sigma at %v, alpha at %v", y, x)
			require.Len(t, bounds("alpha", x, "sigma", y), 1)
			want := meet([]string{"alpha", "sigma"}, []float32{x, y})
			met += len(want)
			for _, c := range []struct{ fn, w1, w2 string }{{"lb_search_pair_merge", "alpha", "sigma"},
				{"lb_search_pair_merge", "sigma", "alpha"}, {"lb_search_pair_probe", "alpha", "sigma"},
				{"lb_search_pair_probe", "sigma", "alpha"}} {
				s1, s2 := x, y
				if c.w1 == "sigma" {
					s1, s2 = y, x
				}
				for _, limit := range []int{1, 3, 1000} {
					var got []string
					require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT `+c.fn+`($1, $2, $3, $4, $5, $6, $7)`,
						f.domain, f.branch, c.w1, s1, c.w2, s2, limit).Scan(&got))
					require.Equal(t, want[:min(limit, len(want))], got, "%s %s %v %s %v %d", c.fn, c.w1, s1, c.w2, s2, limit)
				}
			}
			// The postings within the span both plateaus cover, as counted.
			span := `SELECT count(*)::text FROM mat_search_words m WHERE m.domain_id = $1 AND m.branch_id = $2 AND m.word = $3
				AND m.score = $4 AND m.key >= (SELECT max(k) FROM (SELECT min(key) k FROM mat_search_words WHERE domain_id = $1
				AND branch_id = $2 AND ((word = 'alpha' AND score = $5) OR (word = 'sigma' AND score = $6)) GROUP BY word) z)
				AND m.key <= (SELECT min(k) FROM (SELECT max(key) k FROM mat_search_words WHERE domain_id = $1
				AND branch_id = $2 AND ((word = 'alpha' AND score = $5) OR (word = 'sigma' AND score = $6)) GROUP BY word) z)`
			nx := strs(span, f.domain, f.branch, "alpha", x, x, y)[0]
			ny := strs(span, f.domain, f.branch, "sigma", y, x, y)[0]
			for _, limit := range []int{1, 5, 16, 100000} {
				var gx, gy int
				require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT nx, ny FROM lb_search_pair_span($1, $2, 'alpha', $3, 'sigma', $4, $5)`,
					f.domain, f.branch, x, y, limit).Scan(&gx, &gy))
				// Each counted up to the cap, the one that reached it up to
				// 8 times the other's count (and one) when that decides.
				ex, ey := min(limit, atoi(t, nx)), min(limit, atoi(t, ny))
				if ex >= limit && ey < limit && ey*8 >= limit {
					ex = min(atoi(t, nx), ey*8+1)
				} else if ey >= limit && ex < limit && ex*8 >= limit {
					ey = min(atoi(t, ny), ex*8+1)
				}
				require.Equal(t, ex, gx, "alpha at %v within sigma at %v, cap %d", x, y, limit)
				require.Equal(t, ey, gy, "sigma at %v within alpha at %v, cap %d", y, x, limit)
			}
		}
	}
	require.Positive(t, met, "no plateaus meet")
	// alpha's largest plateau spans far more postings than lie within
	// sigma's keys: the span counts are what the data exercises.
	lastA, lastS := ps["alpha"][len(ps["alpha"])-1], ps["sigma"][len(ps["sigma"])-1]
	var whole, within int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_plateau_count($1, $2, 'alpha', $3, 100000)`, f.domain, f.branch, lastA).Scan(&whole))
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT nx FROM lb_search_pair_span($1, $2, 'alpha', $3, 'sigma', $4, 100000)`,
		f.domain, f.branch, lastA, lastS).Scan(&within))
	require.Greater(t, whole, 8*within)
	// Three plateaus: the triples' meeting from the tokens' GIN index, as
	// the SQL join.
	for _, x := range ps["alpha"] {
		for _, y := range ps["sigma"] {
			for _, z := range ps["tau"] {
				want := meet([]string{"alpha", "sigma", "tau"}, []float32{x, y, z})
				for _, limit := range []int{1, 1000} {
					var got []string
					require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_triple_meet($1, $2, 'alpha', $3, 'tau', $4, 'sigma', $5, $6)`,
						f.domain, f.branch, x, z, y, limit).Scan(&got))
					require.Equal(t, want[:min(limit, len(want))], got, "alpha %v tau %v sigma %v limit %d", x, z, y, limit)
				}
			}
		}
	}

	// The plans: both merged ranges of the rank index bounded by the span
	// (the bounds read once, one descent of the index each).
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
	pair := plan(`SELECT lb_search_pair_sql($1, $2, 'alpha', $3, 'sigma', $4, 20)`, []any{f.domain, f.branch, lastA, lastS},
		"enable_nestloop = off", "enable_hashjoin = off")
	require.Contains(t, pair, "Merge Join", pair)
	requireBoundedScans(t, pair, "s", "t")
	// lb_search_pair_merge's statement: the bounds as literals, read
	// before by lb_search_pair_bounds, no descent of its own.
	withBounds := plan(`SELECT lb_search_pair_sql($1, $2, 'alpha', $3, 'sigma', $4, 20, quote_literal(z.lo), quote_literal(z.hi))
		FROM lb_search_pair_bounds($1, $2, 'alpha', $3, 'sigma', $4) z`, []any{f.domain, f.branch, lastA, lastS},
		"enable_nestloop = off", "enable_hashjoin = off")
	require.Contains(t, withBounds, "Merge Join", withBounds)
	require.Equal(t, 2, rankScans(withBounds), withBounds)
	require.NotRegexp(t, `mat_search_words\S* e(_\d+)?\b`, withBounds)
	require.NotContains(t, withBounds, "Sort", withBounds)
	require.Equal(t, 2, strings.Count(withBounds, "(key >= '"), withBounds)
	require.Equal(t, 2, strings.Count(withBounds, "(key <= '"), withBounds)

	// Plateaus whose keys do not overlap (omega only in an A- key, psi
	// only in a Z- key) meet nowhere: no bounds, and the merge and probe
	// read nothing.
	f.commit("alice", "", put("Part", "A-9990", map[string]any{"name": "omega"}), put("Part", "Z-9990", map[string]any{"name": "psi"}))
	om, psi := bestPlateau(t, s, f, "omega"), bestPlateau(t, s, f, "psi")
	require.Empty(t, bounds("omega", om, "psi", psi))
	require.Empty(t, bounds("psi", psi, "omega", om))
	require.Equal(t, []string{"A-9990 A-9990"}, bounds("omega", om, "omega", om))
	require.Empty(t, bounds("omega", om, "nosuchword", om))
	for _, fn := range []string{"lb_search_pair_merge", "lb_search_pair_probe"} {
		var got []string
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT `+fn+`($1, $2, 'omega', $3, 'psi', $4, 20)`, f.domain, f.branch, om, psi).Scan(&got))
		require.Empty(t, got, fn)
	}

	// As lorebase_app scoped to this Domain, the other Domain's best
	// plateaus of alpha and sigma (same partition, same keys) have no
	// span; its owner's view has one.
	otherAlpha, otherSigma := bestPlateau(t, s, other, "alpha"), bestPlateau(t, s, other, "sigma")
	const otherSpan = `SELECT concat_ws(' ', lo, hi) FROM lb_search_pair_bounds($1, $2, 'alpha', $3, 'sigma', $4) WHERE lo IS NOT NULL`
	require.Len(t, strs(otherSpan, other.domain, other.branch, otherAlpha, otherSigma), 1)
	var seen []string
	require.NoError(t, s.Read(f.ctx, f.domain, otherSpan, []any{other.domain, other.branch, otherAlpha, otherSigma}, func(rows pgx.Rows) error {
		var err error
		seen, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	require.Empty(t, seen)
}

// bestPlateau is the best score plateau of word w on the fixture's main.
func bestPlateau(t *testing.T, s *store.Store, f *fixture, w string) float32 {
	t.Helper()
	var got []float32
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT lb_search_plateaus($1, $2, $3, 1)`, f.domain, f.branch, w).Scan(&got))
	require.Len(t, got, 1, w)
	return got[0]
}

// requireBoundedScans: each alias's scan of the rank index carries both
// bounds of the span on key in its index condition, and the bounds are
// read by descents of the same index (alias e), no Sort.
func requireBoundedScans(t *testing.T, plan string, aliases ...string) {
	t.Helper()
	lines := strings.Split(plan, "\n")
	for _, a := range aliases {
		re := regexp.MustCompile(`(rank_idx|_word_score_key_idx) on mat_search_words\S* ` + a + `\b`)
		found := false
		for i, l := range lines {
			if !re.MatchString(l) || i+1 >= len(lines) {
				continue
			}
			found = true
			require.Contains(t, lines[i+1], "Index Cond", plan)
			require.Contains(t, lines[i+1], "(key >= ", "%s: %s", a, plan)
			require.Contains(t, lines[i+1], "(key <= ", "%s: %s", a, plan)
		}
		require.True(t, found, "no scan of the rank index as %s: %s", a, plan)
	}
	require.Regexp(t, `(rank_idx|_word_score_key_idx) on mat_search_words\S* e(_\d+)?\b`, plan)
	require.NotContains(t, plan, "Sort", plan)
}

func atoi(t *testing.T, s string) int {
	t.Helper()
	var n int
	_, err := fmt.Sscan(s, &n)
	require.NoError(t, err)
	return n
}

// rankScans counts the scans of the rank index in a plan other than the
// span's bounds (alias e, e_1, ...: lb_search_plateaus_from_sql).
func rankScans(plan string) int {
	n := 0
	re := regexp.MustCompile(`(rank_idx|_word_score_key_idx) on mat_search_words\S* (\w+)`)
	for _, m := range re.FindAllStringSubmatch(plan, -1) {
		if !regexp.MustCompile(`^e(_\d+)?$`).MatchString(m[2]) {
			n++
		}
	}
	return n
}

// TestSearchSerialPlans: the searches and entity resolution plan no
// parallel workers (at 10M a worker attaching to the shared buffers cost
// more than the probes it shared: a Gather of 180 probes took 306 ms),
// for every statement they run, nested ones included.
func TestSearchSerialPlans(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	for _, fn := range []string{"lb_search", "lb_resolve"} {
		var conf []string
		require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT coalesce(proconfig, '{}') FROM pg_proc WHERE proname = $1`, fn).Scan(&conf))
		require.Contains(t, conf, "max_parallel_workers_per_gather=0", fn)
	}
}
