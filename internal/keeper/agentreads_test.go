package keeper_test

import (
	"net/http"
	"net/url"
	"testing"

	"github.com/stretchr/testify/require"
)

// The agent reads over HTTP: links, neighborhood, history, lineage, search
// and resolve answer what the commits wrote, refuse bad parameters with a
// 400 naming them, and never cross into another Domain.
func TestAgentReadsOverHTTP(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	main := branchPath("supply", "main")
	first := e.commit("supply", "main", admin, commitBody("add",
		put("Supplier", "S-1", map[string]any{"name": "Acme supplier", "country": "DE"}),
		put("Supplier", "S-2", map[string]any{"name": "Bolt works", "country": "FR"}),
		put("Part", "P-1", map[string]any{"name": "Hex bolt", "maker": "S-1"}),
		map[string]any{"op": "link", "relation": "supplied_by", "from": "P-1", "to": "S-2"},
	))
	second := e.commit("supply", "main", admin, map[string]any{"message": "rename", "author": "agent:scout-7",
		"provenance": map[string]any{"source": "https://example.com/acme"},
		"changes":    []any{map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "NL"}}}})

	var links struct {
		Links []struct{ Relation, From, To, Origin string } `json:"links"`
	}
	e.must(http.StatusOK, "GET", main+"/records/P-1/links?direction=out", admin, nil).Decode(t, &links)
	require.Len(t, links.Links, 2, "the stored Link and the ref's foreign-key Link")
	e.must(http.StatusOK, "GET", main+"/records/S-1/links?direction=in", admin, nil).Decode(t, &links)
	require.Len(t, links.Links, 1)
	require.Equal(t, "maker", links.Links[0].Relation)
	require.Equal(t, "P-1", links.Links[0].From)

	var hood struct {
		Records []struct {
			Key   string
			Depth int
		} `json:"records"`
	}
	e.must(http.StatusOK, "GET", main+"/records/S-1/neighborhood?depth=2", admin, nil).Decode(t, &hood)
	depth := map[string]int{}
	for _, r := range hood.Records {
		depth[r.Key] = r.Depth
	}
	require.Equal(t, map[string]int{"S-1": 0, "P-1": 1, "S-2": 2}, depth)

	var hist struct {
		Entries []struct {
			Revision, Op, Author string
		} `json:"entries"`
	}
	e.must(http.StatusOK, "GET", main+"/records/S-1/history", admin, nil).Decode(t, &hist)
	require.Len(t, hist.Entries, 2)
	require.Equal(t, second, hist.Entries[0].Revision, "newest first")
	require.Equal(t, "agent:scout-7", hist.Entries[0].Author)
	require.Equal(t, first, hist.Entries[1].Revision)

	lin := e.must(http.StatusOK, "GET", main+"/records/S-1/lineage", admin, nil).JSON(t)
	vals := lin["values"].(map[string]any)
	require.Equal(t, second, vals["country"].(map[string]any)["revision"])
	require.Equal(t, first, vals["name"].(map[string]any)["revision"])

	var found struct {
		Results     []struct{ Key, Match string } `json:"results"`
		Corrections map[string][]string           `json:"corrections"`
	}
	e.must(http.StatusOK, "GET", main+"/search?q=suppleir", admin, nil).Decode(t, &found)
	require.NotEmpty(t, found.Results)
	require.Equal(t, "S-1", found.Results[0].Key)
	require.Contains(t, found.Corrections["suppleir"], "supplier")
	e.must(http.StatusOK, "GET", main+"/search?q=acme&at="+first, admin, nil)

	var cands struct {
		Candidates []struct{ Key, Reason string } `json:"candidates"`
	}
	e.must(http.StatusOK, "GET", main+"/resolve?mention="+url.QueryEscape("P-1"), admin, nil).Decode(t, &cands)
	require.Equal(t, "P-1", cands.Candidates[0].Key)
	require.Equal(t, "key", cands.Candidates[0].Reason)

	// Bad parameters name themselves.
	for _, path := range []string{
		main + "/records/P-1/links?direction=sideways",
		main + "/records/P-1/links?relation=" + url.QueryEscape("x'; drop"),
		main + "/records/P-1/neighborhood?depth=9",
		main + "/records/P-1/neighborhood?limit=0",
		main + "/records/P-1/history?limit=-1",
		main + "/records/P-1/lineage?extra=1",
		main + "/search",
		main + "/search?q=a&limit=abc",
		main + "/resolve",
		main + "/search?q=" + url.QueryEscape("bad\x00byte"),
	} {
		e.must(http.StatusBadRequest, "GET", path, admin, nil)
	}
	e.must(http.StatusNotFound, "GET", main+"/records/P-404/lineage", admin, nil)
	e.must(http.StatusNotFound, "GET", main+"/records/P-404/history", admin, nil)

	// Another Domain with the same keys and words sees only its own.
	other := e.withSupply("other")
	e.commit("other", "main", other, commitBody("add", put("Supplier", "S-1", map[string]any{"name": "Other supplier"})))
	e.must(http.StatusNotFound, "GET", main+"/records/S-1/lineage", other, nil)
	e.must(http.StatusNotFound, "GET", main+"/search?q=acme", other, nil)
	e.must(http.StatusOK, "GET", branchPath("other", "main")+"/search?q=acme", other, nil).Decode(t, &found)
	require.Empty(t, found.Results, "Acme lives in the other Domain")
	e.must(http.StatusNotFound, "GET", branchPath("other", "main")+"/search?q=acme&at="+first, other, nil)
}
