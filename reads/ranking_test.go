package reads_test

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
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

	// The postings are the words of the present Records' search vectors.
	words := `SELECT key || ':' || w FROM mat_records, unnest(tsvector_to_array(search)) w
		WHERE domain_id = $1 AND NOT deleted ORDER BY 1`
	require.Equal(t, f.strings(words, f.domain), f.strings(`SELECT key || ':' || word FROM mat_search_words WHERE domain_id = $1 ORDER BY 1`, f.domain))

	small := reads.New(s, reads.Config{SearchCandidates: 3, PartialCandidates: 3})
	for _, tc := range []struct {
		q     string
		limit int
	}{{"steel", 5}, {"steel", 20}, {"part", 7}, {"steel bolt", 5}, {"part steel", 4}} {
		t.Run(tc.q, func(t *testing.T) {
			// Three candidates at most: a one-word query still returns
			// the best of every match from its postings, never truncated.
			res, err := small.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: tc.q, Limit: tc.limit})
			require.NoError(t, err)
			want := exhaustive(f.branch, tc.q, tc.limit)
			require.NotEmpty(t, want)
			got := keys(res)
			if tc.q == "steel" || tc.q == "part" {
				require.Equal(t, count(f.branch, tc.q), res.Ranked, "a one-word search ranks every match")
				require.Equal(t, want, got)
				require.False(t, res.Truncated)
			} else {
				// More words rank the first three matches the GIN index
				// finds and say the ranking was truncated; partial
				// matches follow (fewer than five full ones).
				require.GreaterOrEqual(t, res.Ranked, 3)
				require.True(t, res.Truncated)
				all := exhaustive(f.branch, tc.q, 1000)
				for i, x := range res.Results {
					if x.Match == "full" {
						require.Contains(t, all, x.Key)
					}
					if i > 0 && x.Match == res.Results[i-1].Match {
						require.LessOrEqual(t, x.Score, res.Results[i-1].Score)
					}
				}
			}
		})
	}

	// An overlay reads its levels from the GIN index: its first three
	// matches, a truncated ranking that says so.
	ov := f.fork("ov", "overlay", revInfo{})
	ov.commit("carol", "", patch("P-03", map[string]any{"note": "brass"}))
	res, err := small.Search(f.ctx, f.domain, "ov", reads.SearchQuery{Q: "steel"})
	require.NoError(t, err)
	require.True(t, res.Truncated)
	require.Equal(t, 3, res.Ranked)
	require.Len(t, res.Results, 3)
	res, err = f.r.Search(f.ctx, f.domain, "ov", reads.SearchQuery{Q: "steel"})
	require.NoError(t, err)
	require.False(t, res.Truncated, "fewer matches than the default cap")
	require.Equal(t, count(f.branch, "steel")-1, res.Ranked)

	// Another Domain's postings stay out.
	g := newFixture(t, s, "ranking-other")
	g.commit("zed", "", put("Part", "P-99", map[string]any{"name": "steel steel steel steel steel steel"}))
	res, err = f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "steel"})
	require.NoError(t, err)
	require.NotContains(t, keys(res), "P-99")
	require.Equal(t, exhaustive(f.branch, "steel", 20), keys(res))
}
