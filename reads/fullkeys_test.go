package reads_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/reads"
)

// TestFullKeysIndexTheRarerTerms: three terms, one of them in nearly every
// Record (steel) beside two rare ones (rail, ltd): the GIN index reads the
// rare terms' AND and each of its Records is checked for the common one,
// with the same answer as the index's AND of all three, at any limit, past
// the cap of Records checked (the AND of all three then), and with another
// Domain's Records holding the three words in the same partition; a search
// reads them so first (its statement's index condition names no steel;
// here rail and ltd meet in more Records than its cap, so the AND of all
// three follows) and ranks as the exhaustive ranking does.
func TestFullKeysIndexTheRarerTerms(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "fullkeys")
	var parts []change
	for i := range 3000 {
		var name []string
		if i%10 != 1 {
			name = append(name, "steel")
		}
		if i%40 < 2 {
			name = append(name, "rail")
		}
		if i%60 < 2 {
			name = append(name, "ltd")
		}
		name = append(name, fmt.Sprintf("p%d", i))
		parts = append(parts, put("Part", fmt.Sprintf("P-%04d", i), map[string]any{"name": strings.Join(name, " ")}))
	}
	f.commit("alice", "", parts...)
	f.keepCounters()
	other := f.sharingPartition(t, s, "fullkeys-other", put("Part", "P-0000", map[string]any{"name": "rail steel ltd"}))
	var hostile []change
	for i := range 50 {
		hostile = append(hostile, put("Part", fmt.Sprintf("P-%04d", i*7), map[string]any{"name": "rail rail steel ltd ltd"}))
	}
	other.commit("zed", "", hostile...)
	_, err := s.Pool.Exec(f.ctx, `ANALYZE mat_records`)
	require.NoError(t, err)

	type answer struct {
		keys   []string
		scores []float32
	}
	fullKeys := func(limit int, index string, limit2 int) answer {
		var a answer
		sql := `SELECT keys, scores FROM lb_search_full_keys($1, $2, 'rail & steel & ltd', 'rail | steel | ltd', $3)`
		args := []any{f.domain, f.branch, limit}
		if index != "" {
			sql = `SELECT keys, scores FROM lb_search_full_keys($1, $2, 'rail & steel & ltd', 'rail | steel | ltd', $3, $4, $5)`
			args = append(args, index, limit2)
		}
		require.NoError(t, s.Pool.QueryRow(f.ctx, sql, args...).Scan(&a.keys, &a.scores))
		return a
	}
	// The Records holding the three words, and those holding rail and ltd.
	all := fullKeys(100000, "", 0)
	require.Len(t, all.keys, 25, "rail and ltd meet in 50 Records, steel in 25 of them")
	var rareOnly int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
		AND search @@ 'rail & ltd'::tsquery`, f.domain, f.branch).Scan(&rareOnly))
	require.Equal(t, 50, rareOnly)
	for _, limit := range []int{1, 3, 25, 26, 100000} {
		want := fullKeys(limit, "", 0)
		for _, cap := range []int{1, 49, 50, 51, 1000} {
			got := fullKeys(limit, "rail & ltd", cap)
			require.Equal(t, want, got, "limit %d, cap %d", limit, cap)
		}
	}
	for _, k := range all.keys {
		require.True(t, strings.HasPrefix(k, "P-"))
	}

	// Through lb_search: its full matches read by the rare terms' AND.
	conn, plans := pgtest.AutoExplain(t, s.Pool, false)
	_, err = conn.Exec(f.ctx, `SELECT set_config('lorebase.domain_id', $1::text, false)`, fmt.Sprint(f.domain))
	require.NoError(t, err)
	rows, err := conn.Query(f.ctx, `SELECT key FROM lb_search('main', 'rail steel ltd', '', 20)`)
	require.NoError(t, err)
	for rows.Next() {
	}
	require.NoError(t, rows.Err())
	var found bool
	ps := plans()
	for _, p := range ps {
		if !strings.Contains(p, "mat_records m") || !strings.Contains(p, "AS ok FROM mat_records") {
			continue
		}
		found = true
		for _, l := range strings.Split(p, "\n") {
			if strings.Contains(l, "Index Cond") {
				require.Contains(t, l, "rail", p)
				require.NotContains(t, l, "steel", p)
			}
		}
	}
	require.True(t, found, "no full matches read by the rarer terms")

	for _, limit := range []int{1, 5, 20} {
		res, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "rail steel ltd", Limit: limit})
		require.NoError(t, err)
		require.False(t, res.Truncated)
		want := rankByWords(t, s, f, "rail steel ltd", limit)
		require.NotEmpty(t, want)
		requireSameRanking(t, s, f, "rail steel ltd", want, res.Results)
	}
}
