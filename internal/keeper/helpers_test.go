package keeper_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/apispec/specvalidate"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/internal/keepertest"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testAdminToken is the bootstrap admin token of every test server.
const testAdminToken = "test-bootstrap-admin-token-0123456789"

// env is a running Keeper over a fresh database.
type env struct {
	t testing.TB
	// URL is the server's base URL (no trailing slash).
	URL string
	// Admin is the bootstrap admin token.
	Admin string
	// Store is the server's store (owner pool), for SQL checks.
	Store *store.Store
	// Config is the server's configuration.
	Config config.Config
	// Server is the Keeper under test.
	Server *keeper.Server
}

// testServer starts Keeper over a fresh migrated database, with the
// configuration changed by opts, its responses checked against the OpenAPI
// document, and stops it when the test ends.
func testServer(t testing.TB, opts ...func(*config.Config)) *env {
	t.Helper()
	k := keepertest.New(t, keepertest.Options{AdminToken: testAdminToken, Config: all(opts),
		Handler: func(h http.Handler) http.Handler { return specChecked(t, h) }})
	return envOf(t, k)
}

// all applies opts in order.
func all(opts []func(*config.Config)) func(*config.Config) {
	return func(c *config.Config) {
		for _, o := range opts {
			o(c)
		}
	}
}

// envOf is the test environment of a Keeper.
func envOf(t testing.TB, k *keepertest.Keeper) *env {
	return &env{t: t, URL: k.URL, Admin: k.Admin, Store: k.Store, Config: k.Config, Server: k.Server}
}

// specChecked validates every response the handler writes against the
// OpenAPI document: an undocumented route, status or body fails the test.
func specChecked(t testing.TB, h http.Handler) http.Handler {
	t.Helper()
	v, err := specvalidate.New()
	require.NoError(t, err)
	return v.Wrap(h, func(err error) { t.Errorf("OpenAPI: %v", err) })
}

// response is an HTTP answer, read whole.
type response struct {
	Status int
	Header http.Header
	Body   []byte
}

// JSON decodes the body into a map.
func (r *response) JSON(t testing.TB) map[string]any {
	t.Helper()
	var m map[string]any
	require.NoError(t, json.Unmarshal(r.Body, &m), "body: %s", r.Body)
	return m
}

// Decode decodes the body into v.
func (r *response) Decode(t testing.TB, v any) {
	t.Helper()
	require.NoError(t, json.Unmarshal(r.Body, v), "body: %s", r.Body)
}

func (r *response) String() string { return string(r.Body) }

// do sends a request. path is appended to the base URL as is (escape it
// yourself); body is a string or []byte sent raw, or any other value sent
// as JSON; headers are name, value pairs.
func (e *env) do(method, path, token string, body any, headers ...string) *response {
	e.t.Helper()
	r, err := e.send(method, path, token, body, headers...)
	require.NoError(e.t, err, "%s %s", method, path)
	return r
}

// doNoFail is do for goroutines: a transport error comes back as status 0
// with the error as body.
func (e *env) doNoFail(method, path, token string, body any, headers ...string) *response {
	r, err := e.send(method, path, token, body, headers...)
	if err != nil {
		return &response{Body: []byte(err.Error())}
	}
	return r
}

func (e *env) send(method, path, token string, body any, headers ...string) (*response, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		data, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(data)
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	if err != nil {
		return nil, err
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for i := 0; i+1 < len(headers); i += 2 {
		req.Header.Set(headers[i], headers[i+1])
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, err
	}
	return &response{Status: resp.StatusCode, Header: resp.Header, Body: data}, nil
}

// must sends a request and requires the status.
func (e *env) must(status int, method, path, token string, body any, headers ...string) *response {
	e.t.Helper()
	r := e.do(method, path, token, body, headers...)
	require.Equal(e.t, status, r.Status, "%s %s: %s", method, path, r.Body)
	return r
}

// createDomain creates a Domain as the bootstrap admin.
func (e *env) createDomain(name string) {
	e.t.Helper()
	e.must(http.StatusCreated, "POST", "/v1/domains", e.Admin, map[string]any{"name": name})
}

// token mints a token for a Domain as the bootstrap admin and returns its
// secret; no branches means every branch.
func (e *env) token(domain, name, role string, branches ...string) string {
	e.t.Helper()
	req := map[string]any{"name": name, "domain": domain, "role": role}
	if branches != nil {
		req["branches"] = branches
	}
	r := e.must(http.StatusCreated, "POST", "/v1/tokens", e.Admin, req)
	return r.JSON(e.t)["token"].(string)
}

// putSchema replaces a branch's schema and returns the Revision id.
func (e *env) putSchema(domain, branch, token, doc string) string {
	e.t.Helper()
	r := e.must(http.StatusOK, "PUT", branchPath(domain, branch)+"/schema", token, doc)
	return r.JSON(e.t)["revision"].(string)
}

// commit commits to a branch and returns the Revision id.
func (e *env) commit(domain, branch, token string, body any) string {
	e.t.Helper()
	r := e.must(http.StatusCreated, "POST", branchPath(domain, branch)+"/commits", token, body)
	return r.JSON(e.t)["revision"].(string)
}

// head is a branch's head as GET .../branches/{b} shows it ("" for none).
func (e *env) head(domain, branch, token string) string {
	e.t.Helper()
	var b struct {
		Head *string `json:"head"`
	}
	e.must(http.StatusOK, "GET", branchPath(domain, branch), token, nil).Decode(e.t, &b)
	if b.Head == nil {
		return ""
	}
	return *b.Head
}

// createBranch adds a copy branch holding no Records, with the schema of
// main, straight in SQL (for tests of routes on branches other than main).
func (e *env) createBranch(domain, name string) {
	e.t.Helper()
	ctx := context.Background()
	_, err := e.Store.Pool.Exec(ctx, `WITH d AS (SELECT id FROM domains WHERE name = $1),
		r AS (INSERT INTO refs (domain_id, name, counts_from) SELECT id, $2, 0 FROM d RETURNING domain_id, id)
		INSERT INTO schemas (domain_id, branch_id, seq, document, compiled)
		SELECT r.domain_id, r.id, 0, s.document, s.compiled FROM r
		JOIN refs m ON m.domain_id = r.domain_id AND m.name = 'main'
		JOIN schemas s ON s.domain_id = m.domain_id AND s.branch_id = m.id`, domain, name)
	require.NoError(e.t, err)
}

// rowCounts counts the rows of every table holding Domain data (owner).
func (e *env) rowCounts() map[string]int {
	e.t.Helper()
	out := map[string]int{}
	for _, tbl := range domainTables {
		var n int
		require.NoError(e.t, e.Store.Pool.QueryRow(context.Background(), "SELECT count(*) FROM "+tbl).Scan(&n))
		out[tbl] = n
	}
	return out
}

// domainTables are the tables holding Domain data.
var domainTables = []string{"tokens", "refs", "schemas", "revisions", "objects", "idempotency_keys",
	"mat_records", "mat_links", "mat_history", "mat_link_history", "mat_lexicon",
	"merge_bases", "proposals", "proposal_resolutions", "mat_vectors", "mat_counts", "mat_count_changes"}

// branchPath is the path of a branch, its name escaped.
func branchPath(domain, branch string) string {
	return "/v1/domains/" + esc(domain) + "/branches/" + esc(branch)
}

// esc escapes a path segment, / included.
func esc(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '-' || c == '_' || c == '.' || c == '~' {
			b.WriteByte(c)
		} else {
			b.WriteString("%" + strings.ToUpper(hex2(c)))
		}
	}
	return b.String()
}

func hex2(c byte) string {
	const digits = "0123456789abcdef"
	return string([]byte{digits[c>>4], digits[c&15]})
}

// supplySchema is the schema document of DESIGN.md section 5.
const supplySchema = `{"kinds": [
   {"name": "Supplier", "title": "name", "attributes": [
      {"name": "name", "type": "text", "required": true, "search": true},
      {"name": "vat", "type": "text", "unique": true},
      {"name": "country", "type": "text", "indexed": true},
      {"name": "tier", "type": "enum", "values": ["gold", "silver"]}]},
   {"name": "Part", "title": "name", "attributes": [
      {"name": "name", "type": "text", "required": true, "search": true},
      {"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true},
      {"name": "weight_kg", "type": "number"}]}],
 "relations": [
   {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many",
    "inverse": "supplies"}]}`

// put is a put change.
func put(kind, key string, values map[string]any) map[string]any {
	return map[string]any{"op": "put", "kind": kind, "key": key, "values": values}
}

// commitBody is a commit request.
func commitBody(message string, changes ...map[string]any) map[string]any {
	return map[string]any{"message": message, "author": "test", "changes": changes}
}

// withSupply creates the Domain with the supply schema and an admin token.
func (e *env) withSupply(domain string) (admin string) {
	e.t.Helper()
	e.createDomain(domain)
	admin = e.token(domain, "admin", "admin")
	e.putSchema(domain, "main", admin, supplySchema)
	return admin
}
