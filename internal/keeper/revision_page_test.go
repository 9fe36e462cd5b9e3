package keeper_test

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestRevisionChangesPaged: GET /v1/domains/{d}/revisions/{id} answers a
// keyset page of the Revision's changes with their total and the cursor of
// the next page; the pages put together are every change once, in commit
// order; bad cursors and limits are 400 naming the parameter; another
// Domain's token gets 404.
func TestRevisionChangesPaged(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("paged")
	other := e.withSupply("other")
	var changes []map[string]any
	for i := range 7 {
		changes = append(changes, put("Supplier", fmt.Sprintf("S-%d", i), map[string]any{"name": fmt.Sprintf("Acme %d", i), "country": "DE", "vat": fmt.Sprintf("V%d", i)}))
	}
	rev := e.commit("paged", "main", admin, commitBody("seven", changes...))
	path := "/v1/domains/paged/revisions/" + rev

	type page struct {
		Changes      []json.RawMessage `json:"changes"`
		ChangesTotal int               `json:"changes_total"`
		Next         string            `json:"next"`
	}
	var all page
	e.must(http.StatusOK, "GET", path, admin, nil).Decode(t, &all)
	require.Len(t, all.Changes, 7, "the default page holds a small Revision whole")
	require.Equal(t, 7, all.ChangesTotal)
	require.Empty(t, all.Next)

	var got []json.RawMessage
	var cursors []string
	after := ""
	for {
		var p page
		q := path + "?limit=3"
		if after != "" {
			q += "&after=" + after
		}
		e.must(http.StatusOK, "GET", q, admin, nil).Decode(t, &p)
		require.Equal(t, 7, p.ChangesTotal)
		require.LessOrEqual(t, len(p.Changes), 3)
		got = append(got, p.Changes...)
		if p.Next == "" {
			break
		}
		cursors = append(cursors, p.Next)
		after = p.Next
	}
	require.Equal(t, []string{"3", "6"}, cursors)
	require.Equal(t, all.Changes, got, "the pages are every change once, in commit order")
	var keys []string
	for _, c := range got {
		var x struct {
			Key string `json:"key"`
		}
		require.NoError(t, json.Unmarshal(c, &x))
		keys = append(keys, x.Key)
	}
	require.Equal(t, []string{"S-0", "S-1", "S-2", "S-3", "S-4", "S-5", "S-6"}, keys)

	// Past the end: an empty page, no next.
	var end page
	e.must(http.StatusOK, "GET", path+"?after=7", admin, nil).Decode(t, &end)
	require.Empty(t, end.Changes)
	require.Empty(t, end.Next)
	require.Equal(t, 7, end.ChangesTotal)

	for _, c := range []struct{ query, param string }{
		{"?limit=0", "limit"},
		{"?limit=abc", "limit"},
		{"?limit=100000", "limit"},
		{"?after=-1", "after"},
		{"?after=x", "after"},
		{"?after=99999999999", "after"},
		{"?from=3", "from"},
	} {
		r := e.must(http.StatusBadRequest, "GET", path+c.query, admin, nil)
		require.Contains(t, r.String(), c.param, c.query)
	}
	// Another Domain's token: 404, as for an id that does not exist.
	e.must(http.StatusNotFound, "GET", path+"?limit=3", other, nil)
	e.must(http.StatusNotFound, "GET", "/v1/domains/other/revisions/"+rev+"?limit=3", other, nil)
}

// TestRecordsCount: ?count=true adds the number of Records of the listing
// (per Kind, at the head or as of a Revision); bad values are 400 naming
// count.
func TestRecordsCount(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("counted")
	first := e.commit("counted", "main", admin, commitBody("two",
		put("Supplier", "S-1", map[string]any{"name": "Acme", "country": "DE", "vat": "V1"}),
		put("Supplier", "S-2", map[string]any{"name": "Bolt", "country": "DE", "vat": "V2"})))
	e.commit("counted", "main", admin, commitBody("third",
		put("Supplier", "S-3", map[string]any{"name": "Cog", "country": "DE", "vat": "V3"}),
		put("Part", "P-1", map[string]any{"name": "Hex bolt", "maker": "S-1"})))
	records := branchPath("counted", "main") + "/records"
	for _, c := range []struct {
		query string
		want  any
	}{
		{"?kind=Supplier&limit=1&count=true", map[string]any{"records": 3.0, "exact": true}},
		{"?kind=Supplier&count=true&at=" + first, map[string]any{"records": 2.0, "exact": true}},
		{"?kind=Part&count=true", map[string]any{"records": 1.0, "exact": true}},
		{"?count=true", map[string]any{"records": 4.0, "exact": true}},
		{"?kind=Supplier&count=false", nil},
	} {
		got := e.must(http.StatusOK, "GET", records+c.query, admin, nil).JSON(t)
		if c.want == nil {
			require.NotContains(t, got, "count", c.query)
			continue
		}
		require.Equal(t, c.want, got["count"], c.query)
	}
	for _, q := range []string{"?count=yes", "?count=1", "?kind=Supplier&attribute=country&value=DE&count=true"} {
		r := e.must(http.StatusBadRequest, "GET", records+q, admin, nil)
		require.Contains(t, r.JSON(t)["detail"], "count", q)
	}
}
