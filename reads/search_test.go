package reads_test

import (
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
)

func searchKeys(rs []reads.SearchResult, match string) []string {
	var out []string
	for _, r := range rs {
		if r.Match == match {
			out = append(out, r.Key)
		}
	}
	sort.Strings(out)
	return out
}

func TestSearchTypoPartialResolve(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "search")
	r1 := f.commit("alice", "",
		put("Supplier", "S-1", map[string]any{"name": "Acme supplier"}),
		put("Supplier", "S-2", map[string]any{"name": "Bolt supplier"}),
		put("Supplier", "acme", map[string]any{"name": "Acme Holdings"}),
		put("Part", "P-1", map[string]any{"name": "Hex bolt", "note": "steel", "maker": "S-2"}),
		put("Part", "P-2", map[string]any{"name": "Hex nut", "note": "brass"}),
		put("Part", "P-3", map[string]any{"name": "Washer", "note": "steel flat"}))
	f.commit("bob", "", patch("P-3", map[string]any{"note": "copper"}), del("S-1"))

	// Independent: the lexicon equals the words of the Records written.
	lex := f.strings(`SELECT word || ':' || records FROM mat_lexicon WHERE domain_id = $1`, f.domain)
	require.Equal(t, []string{"acme:1", "bolt:2", "brass:1", "copper:1", "hex:2", "holdings:1", "nut:1", "steel:1", "supplier:1", "washer:1"}, lex)

	res, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "hex steel"})
	require.NoError(t, err)
	require.Equal(t, []string{"P-1"}, searchKeys(res.Results, "full"))
	require.Equal(t, []string{"P-2"}, searchKeys(res.Results, "partial"), "fewer than 5 full matches: partial follow")
	require.Equal(t, "full", res.Results[0].Match)
	require.Empty(t, res.Corrections)

	res, err = f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "suppleir"})
	require.NoError(t, err)
	require.Equal(t, []string{"S-2"}, searchKeys(res.Results, "full"))
	require.Equal(t, map[string][]string{"suppleir": {"supplier"}}, res.Corrections)

	res, err = f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "hex", Kind: "Supplier"})
	require.NoError(t, err)
	require.Empty(t, res.Results)

	// At r1: the old note and the deleted Supplier.
	res, err = f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "steel", At: r1.ID})
	require.NoError(t, err)
	require.Equal(t, []string{"P-1", "P-3"}, searchKeys(res.Results, "full"))
	res, err = f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: "acme supplier", At: r1.ID})
	require.NoError(t, err)
	require.Equal(t, []string{"S-1"}, searchKeys(res.Results, "full"))

	// Resolve: the key first, then the exact title, typo, partial.
	c, err := f.r.Resolve(f.ctx, f.domain, "main", "acme", "", 10)
	require.NoError(t, err)
	require.NotEmpty(t, c.Candidates)
	require.Equal(t, "acme", c.Candidates[0].Key)
	require.Equal(t, "key", c.Candidates[0].Reason)
	c, err = f.r.Resolve(f.ctx, f.domain, "main", "bolt suppleir", "", 10)
	require.NoError(t, err)
	require.Equal(t, "S-2", c.Candidates[0].Key)
	require.Equal(t, "typo", c.Candidates[0].Reason)
	c, err = f.r.Resolve(f.ctx, f.domain, "main", "Hex Bolt", "Part", 10)
	require.NoError(t, err)
	require.Equal(t, "P-1", c.Candidates[0].Key)
	require.Equal(t, "title", c.Candidates[0].Reason)
	require.Equal(t, "partial", c.Candidates[1].Reason)
	for _, x := range c.Candidates {
		require.Equal(t, "Part", x.Kind)
	}

	// Isolation: another Domain with the same words sees only its own.
	g := newFixture(t, s, "search-other")
	g.commit("zed", "", put("Supplier", "S-2", map[string]any{"name": "Supplyr only here"}))
	res, err = g.r.Search(g.ctx, g.domain, "main", reads.SearchQuery{Q: "suppleir"})
	require.NoError(t, err)
	require.Equal(t, map[string][]string{"suppleir": {"supplyr"}}, res.Corrections)
	require.Equal(t, []string{"S-2"}, searchKeys(res.Results, "full"))
	res, err = g.r.Search(g.ctx, g.domain, "main", reads.SearchQuery{Q: "bolt"})
	require.NoError(t, err)
	require.Empty(t, res.Results)
	require.Equal(t, []string{"here:1", "only:1", "supplyr:1"}, g.strings(`SELECT word || ':' || records FROM mat_lexicon WHERE domain_id = $1`, g.domain))
	c, err = g.r.Resolve(g.ctx, g.domain, "main", "acme", "", 10)
	require.NoError(t, err)
	require.Empty(t, c.Candidates)
}

func TestHostileInput(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "hostile")
	f.commit("alice", "", put("Supplier", "S-1", map[string]any{"name": "Acme", "country": "DE"}))
	hostile := []string{"'", `'; DROP TABLE refs; --`, `\`, "%s%L", "a\x00b", "\xff\xfe", "x\ny", "a:* & !b", "(((", "$1", `"`,
		string(make([]byte, 5000))}
	for _, h := range hostile {
		h := h
		check := func(name string, err error) {
			if err != nil {
				require.NotContains(t, err.Error(), "SQLSTATE 42", "%s %q", name, h)
				require.NotContains(t, err.Error(), "syntax error", "%s %q", name, h)
			}
		}
		_, err := f.r.Get(f.ctx, f.domain, h, "S-1", "")
		check("get branch", err)
		_, err = f.r.Get(f.ctx, f.domain, "main", h, "")
		check("get key", err)
		_, err = f.r.Get(f.ctx, f.domain, "main", "S-1", h)
		check("get at", err)
		_, err = f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: h, After: h})
		check("page", err)
		_, err = f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: h})
		check("query value", err)
		_, err = f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Supplier", Attribute: h, Value: "x"})
		check("query attribute", err)
		_, err = f.r.Links(f.ctx, f.domain, "main", "S-1", reads.LinksQuery{Direction: h, Relation: h})
		check("links", err)
		_, err = f.r.Links(f.ctx, f.domain, "main", h, reads.LinksQuery{})
		check("links key", err)
		_, err = f.r.Neighborhood(f.ctx, f.domain, "main", h, 2, 10)
		check("neighborhood", err)
		_, err = f.r.History(f.ctx, f.domain, "main", h, 10, h)
		check("history", err)
		_, err = f.r.Lineage(f.ctx, f.domain, "main", h)
		check("lineage", err)
		_, err = f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: h, Kind: h})
		check("search", err)
		_, err = f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: h})
		check("search q", err)
		_, err = f.r.Resolve(f.ctx, f.domain, "main", h, "", 5)
		check("resolve", err)
		_, err = f.r.Revisions(f.ctx, f.domain, "main", 5, h)
		check("revisions", err)
		_, err = f.r.Revision(f.ctx, f.domain, h, 0, "")
		check("revision", err)
	}
	for _, q := range []string{"it's", `back\slash`, "100%", "a & b | !c", "'quoted' <-> x:*"} {
		_, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: q})
		require.NoError(t, err, q)
		_, err = f.r.Resolve(f.ctx, f.domain, "main", q, "", 5)
		require.NoError(t, err, q)
	}
	for _, tc := range []struct {
		name string
		err  error
	}{
		{"limit", func() error { _, err := f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Limit: -1}); return err }()},
		{"limit", func() error { _, err := f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Limit: 1 << 20}); return err }()},
		{"depth", func() error { _, err := f.r.Neighborhood(f.ctx, f.domain, "main", "S-1", 9, 10); return err }()},
		{"direction", func() error {
			_, err := f.r.Links(f.ctx, f.domain, "main", "S-1", reads.LinksQuery{Direction: "up"})
			return err
		}()},
		{"q", func() error {
			_, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: string(make([]rune, 501))})
			return err
		}()},
	} {
		require.Error(t, tc.err)
		require.Contains(t, fmt.Sprint(tc.err), tc.name)
	}
	var n int
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM refs`).Scan(&n))
	require.Equal(t, 1, n)
}
