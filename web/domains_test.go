package web_test

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

// hostileDomain is a Domain name that must render as text. The API
// refuses such names; the database may still hold one.
const hostileDomain = `<img src=x onerror=alert(1)>`

// holdDeleting marks a Domain deleting with its deletion job waiting for
// a retry an hour out, and sets the progress the page shows: it stays
// deleting for the whole test.
func (e *env) holdDeleting(name, progress string) {
	e.t.Helper()
	ctx := context.Background()
	d, err := e.Store.DeleteDomain(ctx, name, func(ctx context.Context, tx pgx.Tx, id int32) error {
		_, err := tx.Exec(ctx, `INSERT INTO river_job (kind, args, state, attempt, max_attempts, scheduled_at, errors)
			VALUES ('store.domain_delete', jsonb_build_object('domain_id', $1::int), 'retryable', 2, 25, now() + interval '1 hour',
			        ARRAY['{"at": "2026-01-01T00:00:00Z", "attempt": 1, "error": "secret internals"}'::jsonb])`, id)
		return err
	})
	require.NoError(e.t, err)
	_, err = e.Store.Pool.Exec(ctx, `UPDATE domains SET progress = $2 WHERE id = $1`, d.ID, progress)
	require.NoError(e.t, err)
}

// domainState is a Domain's state as the bootstrap admin's list shows it
// ("" when it is gone).
func (e *env) domainState(name string) string {
	e.t.Helper()
	for _, d := range e.api(http.StatusOK, "GET", "/v1/domains?deleting=true", adminToken, nil)["domains"].([]any) {
		if m := d.(map[string]any); m["name"] == name {
			return m["state"].(string)
		}
	}
	return ""
}

// TestDomainsPageDeletes: the bootstrap admin's Domains page lists every
// Domain, shows one being deleted with its job and progress, and deletes
// a Domain once its name is typed. Forms without the CSRF token, a name
// that does not match and tokens other than the bootstrap admin's are
// refused, and delete nothing; hostile names and input render as text.
func TestDomainsPageDeletes(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	ctx := context.Background()
	e.api(http.StatusCreated, "POST", "/v1/domains", adminToken, map[string]any{"name": "doomed"})
	e.api(http.StatusCreated, "POST", "/v1/domains", adminToken, map[string]any{"name": "held"})
	e.holdDeleting("held", `{"phase": "mat_records", "tables_done": 3, "tables": 17, "rows": 1234}`)
	_, err := e.Store.CreateDomain(ctx, hostileDomain)
	require.NoError(t, err)

	admin := e.browser()
	admin.signIn(adminToken)
	page := admin.mustGet("/")
	for _, want := range []string{
		`<tr data-domain="doomed">`, `aria-label="Delete Domain doomed"`, `name="confirm"`, `<a href="/d/supply/">supply</a>`,
		`data-live-domains="/domains.json"`,
		// The Domain being deleted: its state, job and progress, no link
		// and no form.
		`<tr data-domain="held">`, `<td class="state">deleting</td>`,
		"store.domain_delete retryable (attempt 2) — attempt 2 failed; the job is retried automatically",
		"3 of 17 tables emptied, 1234 rows deleted, now mat_records",
		// The hostile name, as text.
		"&lt;img src=x onerror=alert(1)&gt;",
	} {
		require.Contains(t, page, want)
	}
	for _, not := range []string{`href="/d/held/"`, `aria-label="Delete Domain held"`, "secret internals", "<img src=x"} {
		require.NotContains(t, page, not)
	}
	require.Equal(t, 3, strings.Count(page, `name="confirm"`), "a form for each ready Domain: doomed, supply and the hostile one")

	token := admin.csrf("/")
	domainAdmin := e.browser()
	domainAdmin.signIn(f.Admin)
	reader := e.browser()
	reader.signIn(f.Reader)
	// A Domain's own admin has no Domains page: it is sent to its Domain.
	p := domainAdmin.get("/")
	require.Equal(t, http.StatusSeeOther, p.Status)
	require.Equal(t, "/d/supply/", p.Header.Get("Location"))
	require.NotContains(t, domainAdmin.mustGet("/d/supply/"), "Delete Domain")

	for _, tc := range []struct {
		name    string
		b       *browser
		form    url.Values
		status  int
		want    []string
		notWant []string
	}{
		{"no CSRF token", admin, url.Values{"name": {"doomed"}, "confirm": {"doomed"}}, http.StatusForbidden, []string{"CSRF", "nothing was changed"}, nil},
		{"a forged CSRF token", admin, url.Values{"name": {"doomed"}, "confirm": {"doomed"}, "csrf": {token + "x"}}, http.StatusForbidden, []string{"CSRF"}, nil},
		{"another session's CSRF token", admin, url.Values{"name": {"doomed"}, "confirm": {"doomed"}, "csrf": {csrfOf(t, reader, "/d/supply/")}},
			http.StatusForbidden, []string{"CSRF"}, nil},
		{"a name that does not match", admin, url.Values{"name": {"doomed"}, "confirm": {"doome"}, "csrf": {token}}, http.StatusUnprocessableEntity,
			[]string{`To delete the Domain &#34;doomed&#34;, type its name exactly; you typed &#34;doome&#34;. Nothing was deleted.`,
				`<details class="delete-domain" open>`}, nil},
		{"another Domain's name", admin, url.Values{"name": {"doomed"}, "confirm": {"supply"}, "csrf": {token}}, http.StatusUnprocessableEntity,
			[]string{"you typed &#34;supply&#34;. Nothing was deleted."}, nil},
		{"nothing typed", admin, url.Values{"name": {"doomed"}, "confirm": {""}, "csrf": {token}}, http.StatusUnprocessableEntity,
			[]string{"type its name in the box; nothing was deleted"}, nil},
		{"a hostile name typed", admin, url.Values{"name": {"doomed"}, "confirm": {hostileTitle}, "csrf": {token}}, http.StatusUnprocessableEntity,
			[]string{"you typed &#34;&lt;script&gt;alert(\\&#34;pwned\\&#34;)&lt;/script&gt;"}, []string{"<script>alert", "<img src=x"}},
		{"no Domain named", admin, url.Values{"confirm": {""}, "csrf": {token}}, http.StatusBadRequest, []string{"named no Domain"}, nil},
		{"a Domain that does not exist", admin, url.Values{"name": {"nope"}, "confirm": {"nope"}, "csrf": {token}}, http.StatusNotFound, []string{"nope"}, nil},
		{"a Domain being deleted", admin, url.Values{"name": {"held"}, "confirm": {"held"}, "csrf": {token}}, http.StatusNotFound, []string{"held"}, nil},
		{"a hostile Domain name", admin, url.Values{"name": {hostileDomain}, "confirm": {hostileDomain}, "csrf": {token}}, http.StatusNotFound,
			[]string{"No Domain named"}, []string{"<img src=x"}},
		{"a Domain admin, by hand", domainAdmin, url.Values{"name": {"supply"}, "confirm": {"supply"}, "csrf": {csrfOf(t, domainAdmin, "/d/supply/")}},
			http.StatusForbidden, []string{"Only the bootstrap admin may delete a Domain; nothing was deleted."}, nil},
		{"a reader, by hand", reader, url.Values{"name": {"supply"}, "confirm": {"supply"}, "csrf": {csrfOf(t, reader, "/d/supply/")}},
			http.StatusForbidden, []string{"Only the bootstrap admin"}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := tc.b.post("/domains/delete", tc.form)
			require.Equal(t, tc.status, p.Status, p.Body)
			for _, w := range tc.want {
				require.Contains(t, p.Body, w)
			}
			for _, w := range tc.notWant {
				require.NotContains(t, p.Body, w)
			}
			// Nothing was deleted.
			require.Equal(t, "ready", e.domainState("doomed"))
			require.Equal(t, "ready", e.domainState("supply"))
			require.Equal(t, "deleting", e.domainState("held"))
		})
	}

	// The live feed: the bootstrap admin's list with those being deleted.
	j := admin.get("/domains.json")
	require.Equal(t, http.StatusOK, j.Status, j.Body)
	require.Contains(t, j.Body, `"name":"held","created_at"`)
	require.Contains(t, j.Body, `"tables_done":3`)
	require.Equal(t, http.StatusForbidden, domainAdmin.get("/domains.json").Status)

	// The name typed: the Domain is deleted, shown as such, then gone.
	p = admin.post("/domains/delete", url.Values{"name": {"doomed"}, "confirm": {" doomed "}, "csrf": {token}})
	require.Equal(t, http.StatusSeeOther, p.Status, p.Body)
	require.Equal(t, "/?notice="+url.QueryEscape("Domain doomed is being deleted."), p.Header.Get("Location"))
	after := admin.mustGet(p.Header.Get("Location"))
	require.Contains(t, after, "Domain doomed is being deleted.")
	require.NotContains(t, after, `aria-label="Delete Domain doomed"`)
	require.Equal(t, http.StatusNotFound, e.apiStatus("GET", "/v1/domains/doomed", adminToken))
	deadline := time.Now().Add(time.Minute)
	for e.domainState("doomed") != "" {
		require.True(t, time.Now().Before(deadline), "the deletion job did not finish")
		time.Sleep(20 * time.Millisecond)
	}
	require.NotContains(t, admin.mustGet("/"), `data-domain="doomed"`)
	require.Equal(t, "ready", e.domainState("supply"), "the other Domains are untouched")
}

// csrfOf is a session's CSRF token as a page of path carries it.
func csrfOf(t *testing.T, b *browser, path string) string {
	t.Helper()
	return b.csrf(path)
}
