package reads_test

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// edge is a Link as the test wrote it.
type edge struct{ rel, from, to, origin string }

func TestLinksAndNeighborhood(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "graph")
	var edges []edge
	cs := []change{put("Supplier", "S-0", map[string]any{"name": "Hub"})}
	for i := 1; i <= 6; i++ {
		cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i), map[string]any{"name": fmt.Sprintf("Sup %d", i)}))
	}
	for i := 1; i <= 12; i++ {
		maker := fmt.Sprintf("S-%d", (i%6)+1)
		p := fmt.Sprintf("P-%02d", i)
		cs = append(cs, put("Part", p, map[string]any{"name": fmt.Sprintf("Part %d", i), "maker": maker}))
		edges = append(edges, edge{"maker", p, maker, "ref"})
	}
	for i := 1; i <= 3; i++ {
		to := fmt.Sprintf("S-%d", i)
		cs = append(cs, link("supplied_by", "S-0", to))
		edges = append(edges, edge{"supplied_by", "S-0", to, "link"})
	}
	r1 := f.commit("alice", "", cs...)
	f.commit("bob", "", unlink("supplied_by", "S-0", "S-3"))
	edges = edges[:len(edges)-1]

	expectLinks := func(key, dir string) []reads.Link {
		out := []reads.Link{}
		for _, e := range edges {
			if (dir != "in" && e.from == key) || (dir != "out" && e.to == key) {
				out = append(out, reads.Link{Relation: e.rel, From: e.from, To: e.to, Origin: e.origin})
			}
		}
		sort.Slice(out, func(i, j int) bool {
			a, b := out[i], out[j]
			if a.Relation != b.Relation {
				return a.Relation < b.Relation
			}
			if a.From != b.From {
				return a.From < b.From
			}
			return a.To < b.To
		})
		return out
	}
	for _, key := range []string{"S-0", "S-1", "S-3", "P-01"} {
		for _, dir := range []string{"out", "in", "both"} {
			got, err := f.r.Links(f.ctx, f.domain, "main", key, reads.LinksQuery{Direction: dir})
			require.NoError(t, err)
			require.Equal(t, expectLinks(key, dir), got.Links, "%s %s", key, dir)
		}
	}
	got, err := f.r.Links(f.ctx, f.domain, "main", "S-2", reads.LinksQuery{Relation: "supplied_by"})
	require.NoError(t, err)
	require.Equal(t, []reads.Link{{Relation: "supplied_by", From: "S-0", To: "S-2", Origin: "link"}}, got.Links)
	// At r1 the unlinked Link is there.
	got, err = f.r.Links(f.ctx, f.domain, "main", "S-0", reads.LinksQuery{Direction: "out", At: r1.ID})
	require.NoError(t, err)
	require.Len(t, got.Links, 3)
	got, err = f.r.Links(f.ctx, f.domain, "main", "S-3", reads.LinksQuery{Direction: "in", Relation: "supplied_by", At: r1.ID})
	require.NoError(t, err)
	require.Len(t, got.Links, 1)
	_, err = f.r.Links(f.ctx, f.domain, "main", "NOPE", reads.LinksQuery{})
	require.ErrorIs(t, err, store.ErrNotFound)

	// Neighborhood against a breadth-first walk over the edges.
	for _, tc := range []struct {
		key          string
		depth, limit int
	}{{"S-0", 1, 100}, {"S-0", 2, 100}, {"S-0", 3, 100}, {"P-01", 2, 100}, {"S-0", 2, 5}} {
		nb, err := f.r.Neighborhood(f.ctx, f.domain, "main", tc.key, tc.depth, tc.limit)
		require.NoError(t, err)
		want := bfs(edges, tc.key, tc.depth)
		seen := map[string]bool{}
		for _, n := range nb.Records {
			require.False(t, seen[n.Key], "duplicate %s", n.Key)
			seen[n.Key] = true
			require.Equal(t, want[n.Key], n.Depth, "depth of %s", n.Key)
		}
		if tc.limit >= len(want) {
			require.Len(t, nb.Records, len(want), "%+v", tc)
		} else {
			require.Len(t, nb.Records, tc.limit)
			for i := 1; i < len(nb.Records); i++ {
				require.LessOrEqual(t, nb.Records[i-1].Depth, nb.Records[i].Depth)
			}
		}
		nl := 0
		for _, e := range edges {
			if seen[e.from] && seen[e.to] {
				nl++
			}
		}
		require.Len(t, nb.Links, nl, "links between the returned Records, each once")
	}
	_, err = f.r.Neighborhood(f.ctx, f.domain, "main", "S-0", 4, 10)
	require.Error(t, err)
}

func bfs(edges []edge, start string, depth int) map[string]int {
	dist := map[string]int{start: 0}
	frontier := []string{start}
	for d := 1; d <= depth; d++ {
		var next []string
		for _, k := range frontier {
			for _, e := range edges {
				var o string
				switch k {
				case e.from:
					o = e.to
				case e.to:
					o = e.from
				default:
					continue
				}
				if _, ok := dist[o]; !ok {
					dist[o] = d
					next = append(next, o)
				}
			}
		}
		frontier = next
	}
	return dist
}

func TestHistoryAndLineage(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "hist")
	r1 := f.commit("alice", `{"source":"one"}`, put("Supplier", "S-1", map[string]any{"name": "Acme", "country": "DE", "vat": "V1"}))
	r2 := f.commit("bob", `{"source":"two"}`, patch("S-1", map[string]any{"country": "AT"}))
	c3 := patch("S-1", map[string]any{"vat": "V2"})
	c3.Provenance = `{"source":"change"}`
	r3 := f.commit("carol", `{"source":"three"}`, c3)
	r4 := f.commit("dave", "", patch("S-1", map[string]any{"country": "CH", "vat": nil}))

	h, err := f.r.History(f.ctx, f.domain, "main", "S-1", 3, "")
	require.NoError(t, err)
	require.Len(t, h.Entries, 3)
	require.Equal(t, []string{r4.ID, r3.ID, r2.ID}, []string{h.Entries[0].Revision, h.Entries[1].Revision, h.Entries[2].Revision})
	require.Equal(t, "dave", h.Entries[0].Author)
	require.JSONEq(t, `{"name":"Acme","country":"CH"}`, string(h.Entries[0].Values))
	require.JSONEq(t, `{"source":"change"}`, string(h.Entries[1].Provenance))
	require.Equal(t, r2.ID, h.Next)
	h, err = f.r.History(f.ctx, f.domain, "main", "S-1", 3, h.Next)
	require.NoError(t, err)
	require.Len(t, h.Entries, 1)
	require.Equal(t, r1.ID, h.Entries[0].Revision)
	require.Equal(t, "put", h.Entries[0].Op)
	require.Empty(t, h.Next)
	_, err = f.r.History(f.ctx, f.domain, "main", "NOPE", 3, "")
	require.ErrorIs(t, err, store.ErrNotFound)

	l, err := f.r.Lineage(f.ctx, f.domain, "main", "S-1")
	require.NoError(t, err)
	require.Equal(t, 4, l.Changes)
	require.Equal(t, r1.ID, l.Created.Revision)
	require.Equal(t, "alice", l.Created.Author)
	require.JSONEq(t, `{"source":"one"}`, string(l.Created.Provenance))
	require.Equal(t, r1.ID, l.Values["name"].Revision)
	require.JSONEq(t, `"Acme"`, string(l.Values["name"].Value))
	require.Equal(t, r4.ID, l.Values["country"].Revision)
	require.Equal(t, "dave", l.Values["country"].Author)
	require.Equal(t, r4.ID, l.Values["vat"].Revision, "removed by r4")
	require.JSONEq(t, `null`, string(l.Values["vat"].Value))

	f.commit("erin", "", del("S-1"))
	_, err = f.r.Lineage(f.ctx, f.domain, "main", "S-1")
	require.ErrorIs(t, err, store.ErrNotFound)
	h, err = f.r.History(f.ctx, f.domain, "main", "S-1", 10, "")
	require.NoError(t, err)
	require.Len(t, h.Entries, 5)
	require.Equal(t, "delete", h.Entries[0].Op)
	require.JSONEq(t, `null`, string(h.Entries[0].Values))
}

// TestLineageReadsRevisionsByKey: the lineage read finds the Revisions its
// values name by the primary key of revisions, one probe each, not by
// reading the Domain's Revisions: with 3,000 more Revisions in the Domain,
// the generic plan of its statement, run as lorebase_app, probes
// revisions_pkey and scans no revisions; and the numbers it answers are
// those Revisions'.
func TestLineageReadsRevisionsByKey(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "lineage-plan")
	r1 := f.commit("alice", "", put("Supplier", "S-1", map[string]any{"name": "Acme", "country": "DE"}))
	r2 := f.commit("bob", "", patch("S-1", map[string]any{"country": "AT"}))
	_, err := s.Pool.Exec(f.ctx, `INSERT INTO revisions (domain_id, id, seq, number, branch_id, parents, author, message, hash, provenance, changes)
		SELECT domain_id, id || '-' || g, seq + 1000000 + g, number + 1000000 + g, branch_id, parents, author, message, hash, provenance, changes
		  FROM revisions, generate_series(1, 3000) g WHERE domain_id = $1 AND id = $2`, f.domain, r2.ID)
	require.NoError(t, err)
	_, err = s.Pool.Exec(f.ctx, `ANALYZE revisions`)
	require.NoError(t, err)

	number := func(id string) int64 {
		var n int64
		require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT number FROM revisions WHERE domain_id = $1 AND id = $2`, f.domain, id).Scan(&n))
		return n
	}
	l, err := f.r.Lineage(f.ctx, f.domain, "main", "S-1")
	require.NoError(t, err)
	require.Equal(t, r1.ID, l.Values["name"].Revision)
	require.Equal(t, number(r1.ID), l.Values["name"].Seq)
	require.Equal(t, r2.ID, l.Values["country"].Revision)
	require.Equal(t, number(r2.ID), l.Values["country"].Seq)

	conn, err := s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	c := conn.Hijack()                          // session settings and a prepared statement: never back to the pool
	defer c.Close(context.WithoutCancel(f.ctx)) //nolint:errcheck // test connection
	_, err = c.Exec(f.ctx, `SET plan_cache_mode = force_generic_plan`)
	require.NoError(t, err)
	_, err = c.Exec(f.ctx, `PREPARE lineage(text, text) AS `+reads.LineageSQLForTest)
	require.NoError(t, err)
	var plan string
	require.NoError(t, pgx.BeginFunc(f.ctx, c, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		rows, err := tx.Query(f.ctx, `EXPLAIN EXECUTE lineage('main', 'S-1')`)
		if err != nil {
			return err
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		plan = strings.Join(lines, "\n")
		return err
	}))
	require.Contains(t, plan, "Index Scan using revisions_pkey on revisions", plan)
	require.NotContains(t, plan, "Seq Scan on revisions", plan)
}
