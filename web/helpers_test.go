package web_test

import (
	"bytes"
	"encoding/json"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/http/httptest"
	"net/url"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keepertest"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const adminToken = "web-test-bootstrap-admin-token-0123456789"

// env is a Keeper (API and UI) over a fresh database.
type env struct {
	t     testing.TB
	URL   string
	Store *store.Store
}

func newEnv(t *testing.T) *env {
	t.Helper()
	return newEnvWith(t, httptest.NewServer)
}

func newEnvWith(t *testing.T, start func(http.Handler) *httptest.Server) *env {
	t.Helper()
	return newEnvTB(t, start)
}

func newEnvTB(t testing.TB, start func(http.Handler) *httptest.Server) *env {
	t.Helper()
	return newEnvOn(t, start, "")
}

// newEnvOn is newEnvTB over an existing database kept at the end (""
// a fresh one).
func newEnvOn(t testing.TB, start func(http.Handler) *httptest.Server, database string) *env {
	t.Helper()
	// The jobs run (branch copies and deletions, large merges) so their
	// progress shows as it would in a running Keeper.
	k := keepertest.New(t, keepertest.Options{AdminToken: adminToken,
		Config: func(c *config.Config) { c.Auth.TokenCache = 0 }, Serve: start, Database: database})
	return &env{t: t, URL: k.URL, Store: k.Store}
}

// api calls the JSON API and requires the status; the answer is decoded
// into a map (nil when empty).
func (e *env) api(status int, method, path, token string, body any) map[string]any {
	e.t.Helper()
	var rd io.Reader
	if body != nil {
		switch b := body.(type) {
		case string:
			rd = strings.NewReader(b)
		default:
			data, err := json.Marshal(b)
			require.NoError(e.t, err)
			rd = bytes.NewReader(data)
		}
	}
	req, err := http.NewRequest(method, e.URL+path, rd)
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(e.t, err)
	require.Equal(e.t, status, resp.StatusCode, "%s %s: %s", method, path, data)
	var m map[string]any
	if len(data) > 0 {
		_ = json.Unmarshal(data, &m)
	}
	return m
}

// apiStatus is the status of a JSON API call.
func (e *env) apiStatus(method, path, token string) int {
	e.t.Helper()
	req, err := http.NewRequest(method, e.URL+path, nil)
	require.NoError(e.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	resp, err := http.DefaultClient.Do(req)
	require.NoError(e.t, err)
	resp.Body.Close()
	return resp.StatusCode
}

// token mints a token of a Domain.
func (e *env) token(domain, name, role string, branches ...string) string {
	e.t.Helper()
	req := map[string]any{"name": name, "domain": domain, "role": role}
	if branches != nil {
		req["branches"] = branches
	}
	return e.api(http.StatusCreated, "POST", "/v1/tokens", adminToken, req)["token"].(string)
}

// commit commits changes to a branch and returns the Revision.
func (e *env) commit(domain, branch, token, message string, changes ...map[string]any) string {
	e.t.Helper()
	body := map[string]any{"message": message, "author": "agent:scout-7", "changes": changes,
		"provenance": map[string]any{"source": "https://example.com/acme", "tool": "web.fetch", "confidence": 0.9}}
	return e.api(http.StatusCreated, "POST", bpath(domain, branch)+"/commits", token, body)["revision"].(string)
}

func bpath(domain, branch string) string {
	return "/v1/domains/" + url.PathEscape(domain) + "/branches/" + url.PathEscape(branch)
}

func put(kind, key string, values map[string]any) map[string]any {
	return map[string]any{"op": "put", "kind": kind, "key": key, "values": values}
}

func linkChange(rel, from, to string) map[string]any {
	return map[string]any{"op": "link", "relation": rel, "from": from, "to": to}
}

const supplySchema = `{"kinds": [
   {"name": "Supplier", "title": "name", "attributes": [
      {"name": "name", "type": "text", "required": true, "search": true},
      {"name": "vat", "type": "text", "unique": true},
      {"name": "country", "type": "text", "indexed": true},
      {"name": "tier", "type": "enum", "values": ["gold", "silver"]},
      {"name": "active", "type": "boolean"},
      {"name": "meta", "type": "json"}]},
   {"name": "Part", "title": "name", "attributes": [
      {"name": "name", "type": "text", "required": true, "search": true},
      {"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true},
      {"name": "weight_kg", "type": "number"}]}],
 "relations": [
   {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many",
    "inverse": "supplies"}]}`

// hostileTitle is a Record title that must render as text.
const hostileTitle = `<script>alert("pwned")</script><img src=x onerror=alert(1)>`

// fixture is the supply Domain with a few Records on main and a change on
// an overlay branch.
type fixture struct {
	Admin, Writer, Reader, Scout string
	Rev1, Rev2                   string
}

func (e *env) supply() *fixture {
	e.t.Helper()
	f := &fixture{}
	e.api(http.StatusCreated, "POST", "/v1/domains", adminToken, map[string]any{"name": "supply"})
	f.Admin = e.token("supply", "admin", "admin")
	f.Writer = e.token("supply", "writer", "writer")
	f.Reader = e.token("supply", "reader", "reader")
	f.Scout = e.token("supply", "scout", "writer", "agent/scout/*")
	e.api(http.StatusOK, "PUT", bpath("supply", "main")+"/schema", f.Admin, supplySchema)
	f.Rev1 = e.commit("supply", "main", f.Admin, "Add Acme",
		put("Supplier", "S-1", map[string]any{"name": "Acme Fasteners", "country": "DE", "vat": "DE123", "tier": "gold", "active": true, "meta": map[string]any{"rating": 5}}),
		put("Supplier", "S-2", map[string]any{"name": hostileTitle, "country": "FR"}),
		put("Part", "P-1", map[string]any{"name": "Hex bolt", "maker": "S-1", "weight_kg": 0.25}),
		linkChange("supplied_by", "P-1", "S-1"),
		linkChange("supplied_by", "P-1", "S-2"))
	f.Rev2 = e.commit("supply", "main", f.Admin, "Rename Acme",
		map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"name": "Acme Fastening Works"}})
	e.api(http.StatusCreated, "POST", "/v1/domains/supply/branches", f.Admin,
		map[string]any{"name": "agent/scout/7", "from": "main", "mode": "overlay"})
	e.commit("supply", "agent/scout/7", f.Scout, "Scout found a washer",
		put("Part", "P-2", map[string]any{"name": "Spring washer", "maker": "S-1"}))
	return f
}

// browser is a person's browser: a cookie jar, redirects not followed
// unless asked.
type browser struct {
	e      *env
	client *http.Client
}

func (e *env) browser() *browser {
	jar, err := cookiejar.New(nil)
	require.NoError(e.t, err)
	c := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
	if strings.HasPrefix(e.URL, "https") {
		c.Transport = &http.Transport{TLSClientConfig: tlsInsecure()}
	}
	return &browser{e: e, client: c}
}

// page is one answer.
type page struct {
	Status int
	Header http.Header
	Body   string
}

func (b *browser) do(req *http.Request) *page {
	b.e.t.Helper()
	req.Header.Set("Accept", "text/html")
	resp, err := b.client.Do(req)
	require.NoError(b.e.t, err)
	defer resp.Body.Close()
	data, err := io.ReadAll(resp.Body)
	require.NoError(b.e.t, err)
	return &page{Status: resp.StatusCode, Header: resp.Header, Body: string(data)}
}

// get fetches a page (no redirect followed).
func (b *browser) get(path string) *page {
	b.e.t.Helper()
	req, err := http.NewRequest("GET", b.e.URL+path, nil)
	require.NoError(b.e.t, err)
	return b.do(req)
}

// post submits a form (no redirect followed).
func (b *browser) post(path string, form url.Values) *page {
	b.e.t.Helper()
	req, err := http.NewRequest("POST", b.e.URL+path, strings.NewReader(form.Encode()))
	require.NoError(b.e.t, err)
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	return b.do(req)
}

// signIn signs in with a token and requires success.
func (b *browser) signIn(token string) {
	b.e.t.Helper()
	p := b.post("/signin", url.Values{"token": {token}, "next": {"/"}})
	require.Equal(b.e.t, http.StatusSeeOther, p.Status, p.Body)
}

var csrfRE = regexp.MustCompile(`name="csrf" value="([^"]+)"`)

// csrf reads the CSRF token from a page's forms.
func (b *browser) csrf(path string) string {
	b.e.t.Helper()
	p := b.get(path)
	require.Equal(b.e.t, http.StatusOK, p.Status, p.Body)
	m := csrfRE.FindStringSubmatch(p.Body)
	require.NotNil(b.e.t, m, "no CSRF token on %s", path)
	return m[1]
}

// mustGet requires a 200 page.
func (b *browser) mustGet(path string) string {
	b.e.t.Helper()
	p := b.get(path)
	require.Equal(b.e.t, http.StatusOK, p.Status, "GET %s: %s", path, p.Body)
	return p.Body
}
