package web_test

import (
	"net/http"
	"net/url"
	"regexp"
	"testing"

	"github.com/stretchr/testify/require"
)

var proposalLinkRE = regexp.MustCompile(`/d/supply/proposals/([^"?/]+)`)

// conflicted makes the scout's branch and main disagree on S-1's name.
func conflicted(e *env, f *fixture) {
	e.commit("supply", "agent/scout/7", f.Scout, "Scout renames Acme",
		map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"name": "Acme (scout)"}})
	e.commit("supply", "main", f.Admin, "Main renames Acme",
		map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"name": "Acme (main)"}})
}

func TestProposalFlow(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	conflicted(e, f)

	scout := e.browser()
	scout.signIn(f.Scout)
	token := scout.csrf("/d/supply/proposals")
	// Opening needs the CSRF token.
	p := scout.post("/d/supply/proposals", url.Values{"title": {"Washer"}, "source": {"agent/scout/7"}, "target": {"main"}})
	require.Equal(t, http.StatusForbidden, p.Status)
	p = scout.post("/d/supply/proposals", url.Values{"title": {"Washer <b>and</b> rename"}, "source": {"agent/scout/7"}, "target": {"main"}, "csrf": {token}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	m := proposalLinkRE.FindStringSubmatch(p.Header.Get("Location"))
	require.NotNil(t, m, p.Header.Get("Location"))
	path := "/d/supply/proposals/" + m[1]

	body := scout.mustGet(path)
	require.Contains(t, body, "Washer &lt;b&gt;and&lt;/b&gt; rename")
	require.Contains(t, body, "P-2")
	require.Contains(t, body, "Spring washer")
	require.Contains(t, body, "Acme (scout)")
	require.Contains(t, body, "Acme (main)")
	require.Contains(t, body, ">attribute<")
	require.NotContains(t, body, "merge-button", "the scout may not merge into main")
	require.Contains(t, scout.mustGet("/d/supply/proposals"), "Washer &lt;b&gt;and&lt;/b&gt; rename")

	// The scout posting a merge anyway: 403, nothing merged.
	p = scout.post(path+"/merge", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusForbidden, p.Status, p.Body)

	admin := e.browser()
	admin.signIn(f.Admin)
	at := admin.csrf(path)
	body = admin.mustGet(path)
	require.Contains(t, body, "merge-button")

	// Merging with the conflict unresolved: 409, the conflicts shown.
	p = admin.post(path+"/merge", url.Values{"csrf": {at}})
	require.Equal(t, http.StatusConflict, p.Status, p.Body)
	require.Contains(t, p.Body, "Not merged")
	require.Contains(t, p.Body, "Acme (scout)")

	// Resolve: take the source's value.
	cm := regexp.MustCompile(`action="(` + regexp.QuoteMeta(path) + `/conflicts/[^"]+)"`).FindStringSubmatch(body)
	require.NotNil(t, cm)
	fp := regexp.MustCompile(`name="fingerprint" value="([^"]*)"`).FindStringSubmatch(body)
	require.NotNil(t, fp)
	p = admin.post(cm[1], url.Values{"choice": {"source"}, "fingerprint": {fp[1]}})
	require.Equal(t, http.StatusForbidden, p.Status, "no CSRF token")
	p = admin.post(cm[1], url.Values{"choice": {"source"}, "fingerprint": {fp[1]}, "csrf": {at}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	require.Contains(t, admin.mustGet(p.Header.Get("Location")), "Resolved: <strong>source</strong>")

	p = admin.post(path+"/merge", url.Values{"csrf": {at}, "message": {"Merge the scout's washer"}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	require.Contains(t, admin.mustGet(p.Header.Get("Location")), "merged")
	require.Contains(t, admin.mustGet("/d/supply/records/S-1"), "Acme (scout)")
	require.Contains(t, admin.mustGet("/d/supply/records/P-2"), "Spring washer")
	require.Contains(t, admin.mustGet("/d/supply/proposals?state=merged"), "Washer")
}

func TestProposalClose(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	admin := e.browser()
	admin.signIn(f.Admin)
	token := admin.csrf("/d/supply/proposals")
	p := admin.post("/d/supply/proposals", url.Values{"title": {"To close"}, "source": {"agent/scout/7"}, "target": {"main"}, "csrf": {token}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	path := p.Header.Get("Location")

	reader := e.browser()
	reader.signIn(f.Reader)
	body := reader.mustGet(path)
	require.NotContains(t, body, "merge-button")
	require.NotContains(t, body, "Close without merging")
	p = reader.post(path+"/close", url.Values{"csrf": {reader.csrf(path)}})
	require.Equal(t, http.StatusForbidden, p.Status)

	p = admin.post(path+"/close", url.Values{"csrf": {token}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	require.Contains(t, admin.mustGet(p.Header.Get("Location")), "closed")
	require.Contains(t, admin.mustGet("/d/supply/proposals?state=closed"), "To close")
}
