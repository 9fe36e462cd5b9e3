package reads_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// TestOverlayMisspelledWordSortsItsOwnMatches: the overlay's own matches of
// a misspelled word (lb_search_overlay_own_keys) are grouped by sorting,
// not by hash aggregates, under the generic plan a pooled session keeps.
// That plan estimates the overlay's postings as a whole branch's, and a
// hash aggregate sizes its table by the estimate before it reads a row (12
// MB and 6 MB a call at 10M for about a hundred rows). Main holds 3,000
// Parts here and the overlay 40 of its own; the answer is the copy's.
func TestOverlayMisspelledWordSortsItsOwnMatches(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := overlayPartsWorld(t, s, "overlay-own-keys", 3000, []string{"Part gasket", "Part gaskets seal", "Part gasket gaskets", "Part casket"},
		[]string{"Part gasket", "Part gaskets", "Part gasket gaskets casket", "Part other"})
	_, err := s.Pool.Exec(f.ctx, `ANALYZE mat_search_words`)
	require.NoError(t, err)

	conn, plans := pgtest.AutoExplainGeneric(t, s.Requests)
	want := searchOverlayAsCopy(t, f, conn, plans, reads.SearchQuery{Q: "gaskte", Limit: 20})
	require.NotEmpty(t, want.Corrections, "gaskte is corrected")

	seen := 0
	for _, p := range plans() {
		e, err := pgtest.ParseExplained(p)
		require.NoError(t, err)
		if !strings.Contains(e.Query, "HAVING count(*) > 1") {
			continue
		}
		seen++
		sorts := 0
		var walk func(n pgtest.PlanNode)
		walk = func(n pgtest.PlanNode) {
			require.NotEqual(t, "Hashed", n.Strategy, "a hash aggregate: %s", p)
			require.NotEqual(t, "Hash", n.Type, "a hash: %s", p)
			if n.Type == "Sort" {
				sorts++
			}
			for _, c := range n.Plans {
				walk(c)
			}
		}
		walk(e.Plan)
		require.Positive(t, sorts, "the own matches sorted: %s", p)
	}
	require.Positive(t, seen, "the overlay's own matches of a misspelled word were not read by lb_search_overlay_own_keys")
}

// searchOverlayAsCopy searches the overlay "ov" by lb_search on conn, scoped
// to f's Domain as lorebase_app is, once the plans reported so far are
// forgotten, and requires the keys its ready copy "ref" answers, in order.
// It returns the copy's answer.
func searchOverlayAsCopy(t *testing.T, f *fixture, conn *pgx.Conn, plans func() []string, sq reads.SearchQuery) *reads.SearchResults {
	t.Helper()
	want, err := f.r.Search(f.ctx, f.domain, "ref", sq)
	require.NoError(t, err)
	var keys []string
	require.NoError(t, pgx.BeginFunc(f.ctx, conn, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		plans()
		rows, err := tx.Query(f.ctx, `SELECT key FROM lb_search('ov', $1, '', $2) WHERE match <> 'corrections'`, sq.Q, sq.Limit)
		if err != nil {
			return err
		}
		keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	wantKeys := make([]string, len(want.Results))
	for i, r := range want.Results {
		wantKeys[i] = r.Key
	}
	require.Equal(t, wantKeys, keys, "the overlay's answer is the copy's")
	return want
}

// overlayPartsWorld writes, in a new Domain's main, n Parts B-0000... named
// in turn by mainNames; an overlay "ov" of main with 40 Parts of its own,
// O-00 to O-39, named in turn by ownNames, and the changes extra; and "ref",
// a ready copy of "ov".
func overlayPartsWorld(t *testing.T, s *store.Store, name string, n int, mainNames, ownNames []string, extra ...change) *fixture {
	t.Helper()
	f := newFixture(t, s, name)
	var cs []change
	for i := 0; i < n; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("B-%04d", i), map[string]any{"name": mainNames[i%len(mainNames)]}))
	}
	f.commit("alice", "", cs...)
	ov := f.fork("ov", "overlay", revInfo{})
	cs = nil
	for i := 0; i < 40; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("O-%02d", i), map[string]any{"name": ownNames[i%len(ownNames)]}))
	}
	ov.commit("agent", "", append(cs, extra...)...)
	readyCopy(ov, "ref")
	return f
}
