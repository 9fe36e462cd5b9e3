package keeper_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
)

// bearer adds a token to every request.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

// mcpSession connects the SDK's client to the test server's /mcp.
func (e *env) mcpSession(token string) (*mcp.ClientSession, error) {
	e.t.Helper()
	client := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil)
	cs, err := client.Connect(e.t.Context(), &mcp.StreamableClientTransport{
		Endpoint:             e.URL + "/mcp",
		HTTPClient:           &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
		DisableStandaloneSSE: true,
		MaxRetries:           -1,
	}, nil)
	if err == nil {
		e.t.Cleanup(func() { _ = cs.Close() })
	}
	return cs, err
}

// callTool calls a tool and returns its text and whether it is an error.
func callTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) (string, bool) {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err, name)
	require.Len(t, res.Content, 1, name)
	text := res.Content[0].(*mcp.TextContent).Text
	return text, res.IsError
}

// refused calls a tool that must fail, as a protocol error or a tool
// error, and returns what the client was told.
func refused(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) string {
	t.Helper()
	res, err := cs.CallTool(t.Context(), &mcp.CallToolParams{Name: name, Arguments: args})
	if err != nil {
		return err.Error()
	}
	require.True(t, res.IsError, "%s %v succeeded", name, args)
	require.Len(t, res.Content, 1)
	return res.Content[0].(*mcp.TextContent).Text
}

// okTool calls a tool that must succeed and decodes its JSON answer.
func okTool(t *testing.T, cs *mcp.ClientSession, name string, args map[string]any) map[string]any {
	t.Helper()
	text, isErr := callTool(t, cs, name, args)
	require.False(t, isErr, "%s: %s", name, text)
	var m map[string]any
	require.NoError(t, json.Unmarshal([]byte(text), &m), text)
	return m
}

func TestMCPTools(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	e.commit("acme", "main", admin, commitBody("seed",
		put("Supplier", "S-1", map[string]any{"name": "Acme Fasteners", "country": "DE"}),
		put("Part", "P-1", map[string]any{"name": "Hex bolt", "maker": "S-1"}),
		map[string]any{"op": "link", "relation": "supplied_by", "from": "P-1", "to": "S-1"}))
	writer := e.token("acme", "scout-7", "writer", "agent/scout-7/*")
	cs, err := e.mcpSession(writer)
	require.NoError(t, err)

	tools, err := cs.ListTools(t.Context(), nil)
	require.NoError(t, err)
	byName := map[string]*mcp.Tool{}
	for _, tool := range tools.Tools {
		byName[tool.Name] = tool
	}
	reads := []string{"search", "get_record", "neighborhood", "lineage", "resolve", "describe_schema", "list_branches", "diff", "list_conflicts"}
	writes := []string{"create_branch", "commit", "propose", "resolve_conflict", "merge_proposal"}
	require.Len(t, byName, len(reads)+len(writes))
	for _, n := range reads {
		require.Contains(t, byName, n)
		require.True(t, byName[n].Annotations.ReadOnlyHint, n)
		require.NotNil(t, byName[n].InputSchema, n)
	}
	for _, n := range writes {
		require.Contains(t, byName, n)
		require.False(t, byName[n].Annotations.ReadOnlyHint, n)
	}
	schema, err := json.Marshal(byName["search"].InputSchema)
	require.NoError(t, err)
	require.Contains(t, string(schema), `"required":["q"]`)
	require.NotContains(t, string(schema), "domain", "the Domain comes from the token")

	res := okTool(t, cs, "search", map[string]any{"q": "acme fastners"})
	require.Equal(t, "S-1", res["results"].([]any)[0].(map[string]any)["key"])
	res = okTool(t, cs, "get_record", map[string]any{"key": "P-1"})
	require.Equal(t, "Hex bolt", res["title"])
	res = okTool(t, cs, "neighborhood", map[string]any{"key": "P-1", "depth": 1})
	require.Len(t, res["records"], 2)
	res = okTool(t, cs, "resolve", map[string]any{"mention": "Acme", "kind": "Supplier"})
	require.Equal(t, "S-1", res["candidates"].([]any)[0].(map[string]any)["key"])
	res = okTool(t, cs, "describe_schema", nil)
	require.Contains(t, res, "document")
	require.NotContains(t, res, "compiled", "compact output")
	res = okTool(t, cs, "list_branches", map[string]any{"limit": 1})
	require.Len(t, res["branches"], 1)

	res = okTool(t, cs, "create_branch", map[string]any{"name": "agent/scout-7/t1", "trace": "mcp-task"})
	require.Equal(t, "overlay", res["mode"])
	res = okTool(t, cs, "commit", map[string]any{
		"branch": "agent/scout-7/t1", "message": "Acme moved", "trace": "mcp-task",
		"provenance": map[string]any{"source": "https://example.com/acme", "confidence": 0.8},
		"changes":    []any{map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "FR"}}},
	})
	rev := res["revision"].(string)
	res = okTool(t, cs, "lineage", map[string]any{"branch": "agent/scout-7/t1", "key": "S-1"})
	country := res["values"].(map[string]any)["country"].(map[string]any)
	require.Equal(t, rev, country["revision"])
	require.Equal(t, "mcp-task", country["provenance"].(map[string]any)["trace"])
	steps := e.traceSteps("acme", writer, "mcp-task", 2)
	require.Equal(t, "/v1/domains/{domain}/branches", steps[0].Route)
	require.Equal(t, rev, steps[1].Revision)

	// Grants are the API's: this writer may not write main; errors are
	// tool errors naming the problem.
	text, isErr := callTool(t, cs, "commit", map[string]any{"branch": "main", "message": "x",
		"changes": []any{map[string]any{"op": "delete", "key": "P-1"}}})
	require.True(t, isErr)
	require.Contains(t, text, "HTTP 403")
	text, isErr = callTool(t, cs, "commit", map[string]any{"branch": "agent/scout-7/t1", "message": "x",
		"changes": []any{map[string]any{"op": "put", "kind": "Supplier", "key": "S-2", "values": map[string]any{"tier": "bronze"}}}})
	require.True(t, isErr)
	require.Contains(t, text, "changes[0]", "violations name their change")
	text, isErr = callTool(t, cs, "get_record", map[string]any{"key": "nope"})
	require.True(t, isErr)
	require.Contains(t, text, "HTTP 404")
}

func TestMCPProposalTools(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	e.commit("acme", "main", admin, commitBody("seed", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	cs, err := e.mcpSession(admin)
	require.NoError(t, err)
	okTool(t, cs, "create_branch", map[string]any{"name": "agent/a"})
	okTool(t, cs, "commit", map[string]any{"branch": "agent/a", "message": "a",
		"changes": []any{map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "DE"}}}})
	e.commit("acme", "main", admin, commitBody("main", map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "FR"}}))
	text, isErr := callTool(t, cs, "diff", map[string]any{"branch": "agent/a"})
	require.False(t, isErr, text)
	d := map[string]any{}
	require.NoError(t, json.Unmarshal([]byte(text), &d))
	require.Len(t, d["changes"], 1)

	p := okTool(t, cs, "propose", map[string]any{"title": "Acme is in DE", "source": "agent/a"})
	id := p["id"].(string)
	c := okTool(t, cs, "list_conflicts", map[string]any{"proposal": id})
	conflicts := c["conflicts"].([]any)
	require.Len(t, conflicts, 1)
	conflict := conflicts[0].(map[string]any)
	require.Equal(t, "attribute", conflict["code"])
	text, isErr = callTool(t, cs, "merge_proposal", map[string]any{"proposal": id})
	require.True(t, isErr, "unresolved conflicts refuse the merge")
	require.Contains(t, text, "HTTP 409")
	okTool(t, cs, "resolve_conflict", map[string]any{"proposal": id, "conflict": conflict["id"], "choice": "source",
		"fingerprint": conflict["fingerprint"]})
	m := okTool(t, cs, "merge_proposal", map[string]any{"proposal": id})
	require.NotEmpty(t, m["revision"])
	var rec struct {
		Values map[string]any `json:"values"`
	}
	e.must(http.StatusOK, "GET", branchPath("acme", "main")+"/records/S-1", admin, nil).Decode(t, &rec)
	require.Equal(t, "DE", rec.Values["country"])
}

func TestMCPHostileInput(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.HTTP.MaxBodyBytes = 64 << 10 })
	admin := e.withSupply("acme")
	e.commit("acme", "main", admin, commitBody("seed", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	e.createDomain("other")
	otherAdmin := e.token("other", "admin", "admin")
	reader := e.token("acme", "r", "reader")
	before := e.rowCounts()

	// No token, a wrong token, the bootstrap admin: refused before MCP.
	e.must(http.StatusUnauthorized, "POST", "/mcp", "", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	e.must(http.StatusUnauthorized, "POST", "/mcp", "lb_not-a-token", `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	e.must(http.StatusForbidden, "POST", "/mcp", e.Admin, `{"jsonrpc":"2.0","id":1,"method":"tools/list"}`)
	_, err := e.mcpSession("")
	require.Error(t, err)

	cs, err := e.mcpSession(reader)
	require.NoError(t, err)
	// An unknown tool.
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "drop_everything", Arguments: map[string]any{}})
	require.Error(t, err)
	require.Contains(t, err.Error(), "drop_everything")
	// Arguments missing, of the wrong type, or unknown.
	require.Contains(t, refused(t, cs, "search", map[string]any{}), "q")
	require.Contains(t, refused(t, cs, "search", map[string]any{"q": 3}), "q")
	require.Contains(t, refused(t, cs, "search", map[string]any{"q": "x", "domain": "other"}), "domain", "no tool takes a Domain")
	// Oversized arguments: refused by the API's bound on parameters, or
	// by the bound on bodies (which ends the session).
	text, isErr := callTool(t, cs, "search", map[string]any{"q": strings.Repeat("b", 2000)})
	require.True(t, isErr)
	require.Contains(t, text, "HTTP 400")
	// A reader may not write.
	text, isErr = callTool(t, cs, "commit", map[string]any{"branch": "main", "message": "x",
		"changes": []any{map[string]any{"op": "delete", "key": "S-1"}}})
	require.True(t, isErr)
	require.Contains(t, text, "HTTP 403")
	text, isErr = callTool(t, cs, "create_branch", map[string]any{"name": "x"})
	require.True(t, isErr)
	require.Contains(t, text, "HTTP 403")
	// Keys of another Domain are not reachable: the tools only ever name
	// the token's own Domain.
	ocs, err := e.mcpSession(otherAdmin)
	require.NoError(t, err)
	text, isErr = callTool(t, ocs, "get_record", map[string]any{"key": "S-1"})
	require.True(t, isErr)
	require.Contains(t, text, "HTTP 404")
	text, isErr = callTool(t, ocs, "get_record", map[string]any{"key": "../../acme/branches/main/records/S-1"})
	require.True(t, isErr, text)
	r := e.must(http.StatusRequestEntityTooLarge, "POST", "/mcp", reader,
		`{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"search","arguments":{"q":"`+strings.Repeat("bolt ", 30000)+`"}}}`,
		"Accept", "application/json, text/event-stream")
	require.Contains(t, r.String(), "max_body_bytes")
	_, err = cs.CallTool(t.Context(), &mcp.CallToolParams{Name: "commit", Arguments: map[string]any{"branch": "main", "message": "x",
		"changes": []any{map[string]any{"op": "put", "kind": "Supplier", "key": "S-big", "values": map[string]any{"name": strings.Repeat("x", 70000)}}}}})
	require.Error(t, err)
	require.Equal(t, before, e.rowCounts(), "nothing written")
}
