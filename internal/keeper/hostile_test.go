package keeper_test

import (
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestHostileInput: quotes, backslashes, %, escaped slashes, NUL, huge
// strings, invalid UTF-8, invalid and deeply nested JSON are each a 4xx,
// never a 500, and never a write (a read may answer 200: a hostile string
// is just a string that matches nothing).
func TestHostileInput(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	e.commit("supply", "main", admin, commitBody("seed", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	head := e.head("supply", "main", admin)
	before := e.rowCounts()
	bp := branchPath("supply", "main")
	huge := strings.Repeat("x", 10<<10)
	deep := strings.Repeat("[", 10000) + strings.Repeat("]", 10000)
	deepObj := strings.Repeat(`{"a":`, 10000) + "1" + strings.Repeat("}", 10000)

	type req struct {
		method, path string
		body         any
		headers      []string
	}
	var cases []req
	for _, s := range []string{`'`, `"`, `\`, `%25`, `%2F`, `%00`, `%0A`, `%FF%FE`, "%C3%28", esc(huge), `'%3B%20DROP%20TABLE%20domains%3B--`} {
		cases = append(cases,
			req{"GET", "/v1/domains/" + s, nil, nil},
			req{"GET", "/v1/domains/supply/branches/" + s, nil, nil},
			req{"GET", bp + "/records/" + s, nil, nil},
			req{"GET", bp + "/records?kind=Supplier&after=" + s, nil, nil},
			req{"GET", bp + "/records?kind=Supplier&attribute=country&value=" + s, nil, nil},
			req{"GET", bp + "/records?kind=" + s, nil, nil},
			req{"GET", bp + "/records/S-1?at=" + s, nil, nil},
			req{"GET", bp + "/revisions?before=" + s, nil, nil},
			req{"GET", "/v1/domains/supply/revisions/" + s, nil, nil},
			req{"POST", "/v1/domains/supply/branches/" + s + "/commits", commitBody("x", put("Supplier", "S-2", map[string]any{"name": "x"})), nil},
			req{"GET", bp + "/records/" + s + "/links", nil, nil},
			req{"GET", bp + "/records/S-1/links?relation=" + s, nil, nil},
			req{"GET", bp + "/records/S-1/links?direction=" + s + "&at=" + s, nil, nil},
			req{"GET", bp + "/records/" + s + "/neighborhood?depth=" + s, nil, nil},
			req{"GET", bp + "/records/" + s + "/history?before=" + s, nil, nil},
			req{"GET", bp + "/records/" + s + "/lineage", nil, nil},
			req{"GET", bp + "/search?q=" + s, nil, nil},
			req{"GET", bp + "/search?q=acme&kind=" + s + "&at=" + s, nil, nil},
			req{"GET", bp + "/resolve?mention=" + s + "&kind=" + s, nil, nil},
			req{"POST", "/v1/domains/supply/branches", map[string]any{"name": s, "from": "main"}, nil},
			req{"POST", "/v1/domains/supply/branches", map[string]any{"name": "agent/x", "from": s, "at": s}, nil},
			req{"DELETE", "/v1/domains/supply/branches/" + s, nil, nil},
		)
	}
	// Query syntax of tsquery, LIKE and regular expressions is just text.
	for _, q := range []string{"a & b", "!a", "a:*", "(a | b", "a <-> b", "%", "_", ".*", "\\", "'", "''"} {
		cases = append(cases, req{"GET", bp + "/search?q=" + esc(q), nil, nil}, req{"GET", bp + "/resolve?mention=" + esc(q), nil, nil})
	}
	// Hostile names in every position that names something: none is valid.
	for _, v := range []string{`'`, `"`, `\`, "%", "\x00", "a\x00b", huge, "\u202e", "new\nline"} {
		cases = append(cases,
			req{"POST", bp + "/commits", commitBody("x", put(v, "S-2", map[string]any{"name": "x"})), nil},
			req{"POST", bp + "/commits", commitBody("x", put("Supplier", "S-2", map[string]any{v: "x", "name": "x"})), nil},
			req{"POST", bp + "/commits", commitBody("x", map[string]any{"op": "link", "relation": v, "from": "S-1", "to": "S-1"}), nil},
			req{"POST", bp + "/commits", commitBody("x", map[string]any{"op": v, "key": "S-1"}), nil},
			req{"POST", "/v1/tokens", map[string]any{"name": "t", "domain": "supply", "role": "reader", "branches": []string{v}}, nil},
			req{"POST", "/v1/tokens", map[string]any{"name": "t", "domain": "supply", "role": v}, nil},
			req{"POST", "/v1/domains", map[string]any{"name": v}, nil},
		)
	}
	// Keys that are not keys (quotes, backslashes and % are valid keys:
	// TestEscapedBranchNames reads them back).
	for _, k := range []string{"", "\x00", "a\x00b", huge, "tab\tkey", "\x7f"} {
		cases = append(cases, req{"POST", bp + "/commits", commitBody("x", put("Supplier", k, map[string]any{"name": "x"})), nil})
	}
	cases = append(cases,
		req{"POST", bp + "/commits", "{\"changes\": [{\"op\": \"put\", \"kind\": \"Supplier\", \"key\": \"\xff\", \"values\": {\"name\": \"x\"}}]}", nil},
		req{"POST", bp + "/commits", "{\"changes\": [{\"op\": \"put\", \"kind\": \"Supplier\", \"key\": \"S-2\", \"values\": {\"name\": \"\xc3\x28\"}}]}", nil},
	)
	// Values that cannot be stored: NUL inside a value, huge values.
	for _, v := range []string{"nul\x00inside", strings.Repeat("y", 3<<20)} {
		cases = append(cases, req{"POST", bp + "/commits", commitBody("x", put("Supplier", "S-2", map[string]any{"name": v})), nil})
	}
	for _, body := range []string{
		"", "{", "[]", "null", `{"message": "x"} trailing`, `{"message": "x"}{"message": "y"}`,
		`{"changes": "nope"}`, `{"unknown": 1, "changes": []}`, "{\"message\": \"\xff\"}", `{"message": "\u0000"}`,
		`{"changes": [` + deep + `]}`, `{"changes": [{"op": "put", "kind": "Supplier", "key": "S-2", "values": ` + deepObj + `}]}`,
		`{"changes": [{"op": "put", "kind": "Supplier", "key": "S-2", "values": {"name": "x", "tier": ` + deep + `}}]}`,
		`{"changes": [{"op": "put", "kind": "Supplier", "key": "S-2", "values": {"name": 1e999999}}]}`,
	} {
		cases = append(cases, req{"POST", bp + "/commits", body, nil}, req{"PUT", bp + "/schema", body, nil})
	}
	for _, h := range [][]string{{"Idempotency-Key", ""}, {"Idempotency-Key", "a\tb"}, {"Idempotency-Key", huge}, {"Idempotency-Key", "caf\u00e9"}} {
		cases = append(cases, req{"POST", bp + "/commits", commitBody("x", put("Supplier", "S-2", map[string]any{"name": "x"})), h})
	}
	for _, h := range [][]string{{"Lorebase-Author", "a\tb"}, {"Lorebase-Message", huge}, {"If-Match", `""`}, {"If-Match", huge}, {"If-Match", "caf\u00e9"}} {
		cases = append(cases, req{"PUT", bp + "/schema", supplySchema, h})
	}
	for _, q := range []string{"author=%00", "message=" + esc(huge), "author=a%0Ab", "unknown=1"} {
		cases = append(cases, req{"PUT", bp + "/schema?" + q, supplySchema, nil})
	}

	var wg sync.WaitGroup
	sem := make(chan struct{}, 8)
	results := make([]*response, len(cases))
	for i, c := range cases {
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer wg.Done()
			defer func() { <-sem }()
			results[i] = e.doNoFail(c.method, c.path, admin, c.body, c.headers...)
		}()
	}
	wg.Wait()
	for i, c := range cases {
		r := results[i]
		desc := fmt.Sprintf("%s %.120s %.80v %.60v", c.method, c.path, c.body, c.headers)
		require.NotNil(t, r, desc)
		require.Less(t, r.Status, 500, "%s: %.300s", desc, r.Body)
		if c.method == http.MethodGet && r.Status == http.StatusOK {
			continue // a harmless read: hostile strings are just strings
		}
		require.GreaterOrEqual(t, r.Status, 400, "%s: %.300s", desc, r.Body)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), desc)
	}
	require.Equal(t, head, e.head("supply", "main", admin))
	require.Equal(t, before, e.rowCounts())
}
