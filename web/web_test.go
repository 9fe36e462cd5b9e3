package web_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSignInAndOut(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	b := e.browser()

	p := b.get("/d/supply/records/S-1")
	require.Equal(t, http.StatusSeeOther, p.Status)
	loc, err := url.Parse(p.Header.Get("Location"))
	require.NoError(t, err)
	require.Equal(t, "/signin", loc.Path)
	require.Equal(t, "/d/supply/records/S-1", loc.Query().Get("next"))

	form := b.mustGet(p.Header.Get("Location"))
	require.Contains(t, form, `type="password"`)
	require.Contains(t, form, `<label for="token">`)

	bad := b.post("/signin", url.Values{"token": {"not-a-token"}})
	require.Equal(t, http.StatusUnauthorized, bad.Status)
	require.Contains(t, bad.Body, "This token is not valid")
	empty := b.post("/signin", url.Values{"token": {""}})
	require.Equal(t, http.StatusUnauthorized, empty.Status)
	require.Contains(t, empty.Body, "Enter a token")

	ok := b.post("/signin", url.Values{"token": {f.Reader}, "next": {"/d/supply/records/S-1"}})
	require.Equal(t, http.StatusSeeOther, ok.Status)
	require.Equal(t, "/d/supply/records/S-1", ok.Header.Get("Location"))
	c := sessionCookie(t, ok)
	require.Equal(t, f.Reader, c.Value)
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)
	require.False(t, c.Secure, "plain HTTP")
	require.Equal(t, "/", c.Path)
	require.NotContains(t, ok.Header.Get("Location"), f.Reader, "the token never goes in a URL")

	// An open redirect is refused.
	off := b.post("/signin", url.Values{"token": {f.Reader}, "next": {"//evil.example/x"}})
	require.Equal(t, "/", off.Header.Get("Location"))

	// A domain token's home is its Domain.
	home := b.get("/")
	require.Equal(t, http.StatusSeeOther, home.Status)
	require.Equal(t, "/d/supply/", home.Header.Get("Location"))

	// Sign-out needs the CSRF token.
	refused := b.post("/signout", url.Values{})
	require.Equal(t, http.StatusForbidden, refused.Status)
	require.Equal(t, http.StatusOK, b.get("/d/supply/").Status, "still signed in")
	out := b.post("/signout", url.Values{"csrf": {b.csrf("/d/supply/")}})
	require.Equal(t, http.StatusSeeOther, out.Status)
	require.Equal(t, -1, sessionCookie(t, out).MaxAge)
	require.Equal(t, http.StatusSeeOther, b.get("/d/supply/").Status, "signed out")
}

func sessionCookie(t *testing.T, p *page) *http.Cookie {
	t.Helper()
	for _, c := range (&http.Response{Header: p.Header}).Cookies() {
		if c.Name == "lorebase_session" {
			return c
		}
	}
	t.Fatalf("no session cookie in %v", p.Header)
	return nil
}

func TestSecureCookieOverTLS(t *testing.T) {
	t.Parallel()
	e := newEnvWith(t, httptest.NewTLSServer)
	b := e.browser()
	p := b.post("/signin", url.Values{"token": {adminToken}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	c := sessionCookie(t, p)
	require.True(t, c.Secure)
	require.True(t, c.HttpOnly)
	require.Equal(t, http.SameSiteStrictMode, c.SameSite)
}

func TestPages(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	admin := e.browser()
	admin.signIn(adminToken)
	reader := e.browser()
	reader.signIn(f.Reader)

	tests := []struct {
		name    string
		b       *browser
		path    string
		want    []string
		notWant []string
	}{
		{"domains", admin, "/", []string{`href="/d/supply/"`, "supply"}, nil},
		{"domain", reader, "/d/supply/", []string{"agent/scout/7", "overlay", "ready", "Supplier", "Part"}, []string{"Create branch", "Delete"}},
		{"domain as admin", admin, "/d/supply/", []string{"Create branch", `aria-label="Delete branch agent/scout/7"`}, nil},
		{"records of a kind", reader, "/d/supply/records?kind=Supplier", []string{"S-1", "Acme Fastening Works", "S-2", ">2 Records.<"}, []string{"P-1"}},
		{"records page 2", reader, "/d/supply/records?kind=Supplier&after=S-1", []string{"S-2", ">2 Records.<"}, []string{">S-1<"}},
		{"records on a branch", reader, "/d/supply/records?kind=Part&b=agent%2Fscout%2F7", []string{"P-2", "Spring washer", `<option value="agent/scout/7" selected>`}, nil},
		{"record", reader, "/d/supply/records/S-1", []string{"Acme Fastening Works", "DE123", "gold", ">yes<", "&#34;rating&#34;: 5",
			"supplied_by", "P-1", "← in", "Rename Acme", "Add Acme", "agent:scout-7", "source https://example.com/acme", "confidence 0.9", "2 changes in all"}, nil},
		{"record typed ref", reader, "/d/supply/records/P-1", []string{`<a href="/d/supply/records/S-1">S-1</a>`, "0.25", "→ out", "S-2"}, nil},
		{"record at a revision", reader, "/d/supply/records/S-1?at=" + f.Rev1, []string{"Acme Fasteners", "as of <code>" + f.Rev1}, []string{"<h1>Acme Fastening Works"}},
		{"record on a branch", reader, "/d/supply/records/P-2?b=agent%2Fscout%2F7", []string{"Spring washer", "Scout found a washer"}, nil},
		{"search", reader, "/d/supply/search?q=bolt", []string{"Hex bolt", "P-1"}, nil},
		{"search kind filter", reader, "/d/supply/search?q=acme&kind=Part", []string{"Nothing matches"}, []string{"S-1"}},
		{"search form", reader, "/d/supply/search", []string{`type="search"`, `role="search"`}, nil},
		{"graph", reader, "/d/supply/graph?key=P-1", []string{`id="graph-canvas"`, "S-1", "S-2", "3 Records (3 Links)"}, nil},
		{"revisions", reader, "/d/supply/revisions", []string{"Rename Acme", "Add Acme", "agent:scout-7"}, nil},
		{"revision", reader, "/d/supply/revisions/" + f.Rev1, []string{f.Rev1, "Add Acme", ">P-1<", "supplied_by", "5 changes", "object <code"}, nil},
		{"schema", reader, "/d/supply/schema", []string{"Supplier", "supplied_by", "supplies", "required", "unique", "ref → Supplier", "gold, silver"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			body := tc.b.mustGet(tc.path)
			for _, w := range tc.want {
				require.Contains(t, body, w)
			}
			for _, w := range tc.notWant {
				require.NotContains(t, body, w)
			}
			// Every Domain page shows the branch switcher and at=.
			if strings.HasPrefix(tc.path, "/d/") {
				require.Contains(t, body, `<select name="b">`)
				require.Contains(t, body, `name="at"`)
			}
			require.Equal(t, "text/html; charset=utf-8", tc.b.get(tc.path).Header.Get("Content-Type"))
		})
	}
}

func TestErrorsAPersonCanActOn(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	e.api(http.StatusCreated, "POST", "/v1/domains", adminToken, map[string]any{"name": "other"})
	other := e.token("other", "o", "admin")
	b := e.browser()
	b.signIn(f.Reader)

	tests := []struct {
		path   string
		status int
		want   string
	}{
		{"/d/supply/records/NOPE", http.StatusNotFound, "use the branch switcher"},
		{"/d/supply/records/S-1?b=nope", http.StatusNotFound, "nope"},
		{"/d/supply/records/S-1?at=garbage", http.StatusNotFound, "another Revision"},
		{"/d/supply/records?kind=" + url.QueryEscape("no such kind"), http.StatusBadRequest, "nothing was written"},
		{"/d/other/", http.StatusNotFound, "Not found"},
		{"/no/such/page", http.StatusNotFound, "There is no page at /no/such/page"},
	}
	for _, tc := range tests {
		p := b.get(tc.path)
		require.Equal(t, tc.status, p.Status, "%s: %s", tc.path, p.Body)
		require.Contains(t, p.Body, tc.want, tc.path)
	}
	// The other Domain's token sees nothing of supply.
	ob := e.browser()
	ob.signIn(other)
	for _, path := range []string{"/d/supply/", "/d/supply/records/S-1", "/d/supply/search?q=acme"} {
		p := ob.get(path)
		require.Equal(t, http.StatusNotFound, p.Status, path)
		require.NotContains(t, p.Body, "Acme", path)
	}
	// A revoked token sends the person to sign in again.
	_, err := e.Store.Pool.Exec(context.Background(), `DELETE FROM tokens WHERE name = 'reader'`)
	require.NoError(t, err)
	p := b.get("/d/supply/records/S-1")
	require.Equal(t, http.StatusSeeOther, p.Status)
	require.Contains(t, p.Header.Get("Location"), "/signin?")
	require.Contains(t, p.Header.Get("Location"), "no+longer+accepted")
	// An API client that misses its route still gets a problem document.
	require.Equal(t, http.StatusNotFound, e.apiStatus("GET", "/v2/anything", adminToken))
}

func TestEscaping(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	b := e.browser()
	b.signIn(f.Reader)
	for _, path := range []string{
		"/d/supply/records/S-2",
		"/d/supply/records?kind=Supplier",
		"/d/supply/graph?key=P-1",
		"/d/supply/search?q=" + url.QueryEscape("pwned script alert"),
		"/d/supply/search?q=" + url.QueryEscape(hostileTitle),
		"/d/supply/records/" + url.PathEscape(hostileTitle),
	} {
		p := b.get(path)
		require.NotContains(t, p.Body, "<script>alert", path)
		require.NotContains(t, p.Body, "<img src=x", path)
		require.Contains(t, p.Body, "&lt;script&gt;", path)
	}
	p := b.get("/d/supply/records/S-2")
	require.Contains(t, p.Header.Get("Content-Security-Policy"), "default-src 'self'")
	require.Contains(t, p.Body, "<h1>&lt;script&gt;alert(&#34;pwned&#34;)&lt;/script&gt;")
}

func TestFormsNeedCSRFAndGrants(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	admin := e.browser()
	admin.signIn(f.Admin)
	token := admin.csrf("/d/supply/")
	branches := func() int {
		m := e.api(http.StatusOK, "GET", "/v1/domains/supply/branches", f.Admin, nil)
		return len(m["branches"].([]any))
	}
	before := branches()

	for _, form := range []url.Values{
		{"name": {"x1"}, "from": {"main"}, "mode": {"overlay"}},
		{"name": {"x1"}, "from": {"main"}, "mode": {"overlay"}, "csrf": {"forged"}},
		{"name": {"x1"}, "from": {"main"}, "mode": {"overlay"}, "csrf": {admin.csrf("/d/supply/") + "x"}},
	} {
		p := admin.post("/d/supply/branches", form)
		require.Equal(t, http.StatusForbidden, p.Status)
		require.Contains(t, p.Body, "CSRF")
	}
	require.Equal(t, before, branches(), "nothing written")

	// Another session's CSRF token does not work for this one.
	writer := e.browser()
	writer.signIn(f.Writer)
	p := admin.post("/d/supply/branches", url.Values{"name": {"x1"}, "from": {"main"}, "mode": {"overlay"}, "csrf": {writer.csrf("/d/supply/")}})
	require.Equal(t, http.StatusForbidden, p.Status)

	ok := admin.post("/d/supply/branches", url.Values{"name": {"x1"}, "from": {"main"}, "mode": {"overlay"}, "csrf": {token}})
	require.Equal(t, http.StatusSeeOther, ok.Status, ok.Body)
	require.Equal(t, before+1, branches())
	require.Contains(t, admin.mustGet(ok.Header.Get("Location")), "Branch x1 created.")

	// Bad input: the API's 4xx, shown with what to correct; nothing written.
	bad := admin.post("/d/supply/branches", url.Values{"name": {"x1"}, "from": {"main"}, "mode": {"overlay"}, "csrf": {token}})
	require.Equal(t, http.StatusConflict, bad.Status, bad.Body)
	bad = admin.post("/d/supply/branches", url.Values{"name": {"x2"}, "from": {"main"}, "mode": {"sideways"}, "csrf": {token}})
	require.Equal(t, http.StatusUnprocessableEntity, bad.Status, bad.Body)
	require.Contains(t, bad.Body, "mode")
	require.Equal(t, before+1, branches())

	// A reader sees no write controls and gets 403 if it posts anyway.
	reader := e.browser()
	reader.signIn(f.Reader)
	body := reader.mustGet("/d/supply/")
	require.NotContains(t, body, "Create branch")
	require.NotContains(t, body, "Delete branch")
	rt := reader.csrf("/d/supply/")
	p = reader.post("/d/supply/branches", url.Values{"name": {"x3"}, "from": {"main"}, "mode": {"overlay"}, "csrf": {rt}})
	require.Equal(t, http.StatusForbidden, p.Status)
	require.Contains(t, p.Body, "Ask an admin")
	p = reader.post("/d/supply/branches/delete", url.Values{"name": {"x1"}, "csrf": {rt}})
	require.Equal(t, http.StatusForbidden, p.Status)
	require.Equal(t, before+1, branches())

	// A scout may delete only its own branches: the button shows where it may.
	scout := e.browser()
	scout.signIn(f.Scout)
	body = scout.mustGet("/d/supply/")
	require.Contains(t, body, `aria-label="Delete branch agent/scout/7"`)
	require.NotContains(t, body, `aria-label="Delete branch x1"`)
	p = scout.post("/d/supply/branches/delete", url.Values{"name": {"x1"}, "csrf": {scout.csrf("/d/supply/")}})
	require.Equal(t, http.StatusForbidden, p.Status)

	// The admin deletes x1 through the form.
	p = admin.post("/d/supply/branches/delete", url.Values{"name": {"x1"}, "csrf": {token}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	require.Contains(t, admin.mustGet(p.Header.Get("Location")), "Branch x1 is being deleted.")
	require.NotEqual(t, http.StatusOK, e.apiStatus("GET", bpath("supply", "x1")+"/records", f.Admin), "x1 no longer reads")
}

func TestJSONEndpoints(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	b := e.browser()
	b.signIn(f.Reader)
	p := b.get("/d/supply/neighborhood.json?key=P-1&depth=1")
	require.Equal(t, http.StatusOK, p.Status, p.Body)
	require.Contains(t, p.Body, `"key":"S-1"`)
	p = b.get("/d/supply/neighborhood.json?key=P-1&depth=99")
	require.Equal(t, http.StatusBadRequest, p.Status)
	p = b.get("/d/supply/branches.json")
	require.Equal(t, http.StatusOK, p.Status)
	require.Contains(t, p.Body, "agent/scout/7")
	anon := e.browser()
	require.Equal(t, http.StatusSeeOther, anon.get("/d/supply/branches.json").Status)
}

func TestRevisionChangesPaged(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	var changes []map[string]any
	for i := range 250 {
		changes = append(changes, put("Supplier", fmt.Sprintf("B-%03d", i), map[string]any{"name": fmt.Sprintf("Bulk %d", i)}))
	}
	rev := e.commit("supply", "main", f.Admin, "Bulk", changes...)
	b := e.browser()
	b.signIn(f.Reader)
	first := b.mustGet("/d/supply/revisions/" + rev)
	require.Contains(t, first, "250 changes")
	require.Contains(t, first, "Changes 1 to 200.")
	require.Contains(t, first, ">B-199<")
	require.NotContains(t, first, ">B-200<")
	require.Contains(t, first, "?from=200")
	second := b.mustGet("/d/supply/revisions/" + rev + "?from=200")
	require.Contains(t, second, "Changes 201 to 250.")
	require.Contains(t, second, ">B-249<")
	require.NotContains(t, second, ">B-199<")
	require.NotContains(t, second, "Next changes")
}

// TestRecordsPageExactCount: past the 10,000 Records a walk would count,
// the Records page shows the exact number, as the API says it.
func TestRecordsPageExactCount(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	before := e.api(http.StatusOK, "GET", bpath("supply", "main")+"/records?kind=Supplier&count=true&limit=1", f.Admin, nil)["count"].(map[string]any)
	const perCommit, commits = 3400, 3
	for c := range commits {
		changes := make([]map[string]any, 0, perCommit)
		for i := range perCommit {
			changes = append(changes, put("Supplier", fmt.Sprintf("C-%d-%04d", c, i), map[string]any{"name": "Counted"}))
		}
		e.commit("supply", "main", f.Admin, "Load", changes...)
	}
	want := int(before["records"].(float64)) + perCommit*commits
	got := e.api(http.StatusOK, "GET", bpath("supply", "main")+"/records?kind=Supplier&count=true&limit=1", f.Admin, nil)["count"]
	require.Equal(t, map[string]any{"records": float64(want), "exact": true}, got)
	b := e.browser()
	b.signIn(f.Reader)
	page := b.mustGet("/d/supply/records?kind=Supplier")
	require.Contains(t, page, fmt.Sprintf(">%d Records.<", want))
	require.NotContains(t, page, "More than")
}
