package keeper_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"
)

func newRecorder() *httptest.ResponseRecorder { return httptest.NewRecorder() }

func mustRequest(t *testing.T, method, path string) *http.Request {
	t.Helper()
	return httptest.NewRequest(method, path, nil)
}

// TestDomainIsolation: two Domains holding the same keys and words; a token
// of one can neither read nor write the other through any path or
// parameter, and in SQL as lorebase_app a scoped transaction sees one
// Domain's rows only.
func TestDomainIsolation(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	seed := func(domain, word string) (admin, rev string) {
		admin = e.withSupply(domain)
		e.commit(domain, "main", admin, commitBody("seed "+word,
			put("Supplier", "S-1", map[string]any{"name": "Acme " + word, "country": "DE", "vat": "V1"}),
			put("Part", "P-1", map[string]any{"name": "Bolt " + word, "maker": "S-1"}),
			map[string]any{"op": "link", "relation": "supplied_by", "from": "P-1", "to": "S-1"}))
		// A Proposal with a resolved conflict, merged: rows in the
		// Proposal tables and the merge base of each Domain.
		e.createBranchReq(domain, admin, map[string]any{"name": "agent/x", "from": "main"})
		patchCountry := func(branch, country string) {
			e.commit(domain, branch, admin, commitBody("c", map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": country}}))
		}
		patchCountry("agent/x", "FR")
		patchCountry("main", "NL")
		var p proposalView
		e.must(http.StatusCreated, "POST", proposalsPath(domain), admin, map[string]any{"title": "t", "source": "agent/x", "target": "main"}).Decode(t, &p)
		c := e.conflicts(domain, p.ID, admin)[0]
		e.must(http.StatusOK, "PUT", proposalsPath(domain)+"/"+p.ID+"/conflicts/"+c.ID+"/resolution", admin,
			map[string]any{"choice": "source", "fingerprint": c.Fingerprint})
		e.must(http.StatusCreated, "POST", proposalsPath(domain)+"/"+p.ID+"/merge", admin, nil)
		rev = e.head(domain, "main", admin)
		return admin, rev
	}
	adminA, revA := seed("alpha", "shared")
	adminB, revB := seed("beta", "shared")
	readerA := e.token("alpha", "reader", "reader")

	// Paths of Domain beta with tokens of alpha: 404, exactly as for a
	// Domain that does not exist.
	missing := e.must(http.StatusNotFound, "GET", "/v1/domains/gamma", adminA, nil).JSON(t)
	bp := branchPath("beta", "main")
	for _, tok := range []string{adminA, readerA} {
		for _, c := range []struct{ method, path string }{
			{"GET", "/v1/domains/beta"},
			{"GET", "/v1/domains/beta/branches"},
			{"GET", bp},
			{"GET", bp + "/schema"},
			{"PUT", bp + "/schema"},
			{"POST", bp + "/commits"},
			{"GET", bp + "/records/S-1"},
			{"GET", bp + "/records?kind=Supplier"},
			{"GET", bp + "/revisions"},
			{"GET", "/v1/domains/beta/revisions/" + revB},
		} {
			var body any
			switch c.method {
			case "PUT":
				body = supplySchema
			case "POST":
				body = commitBody("x", put("Supplier", "S-9", map[string]any{"name": "intruder"}))
			}
			r := e.must(http.StatusNotFound, c.method, c.path, tok, body)
			got := r.JSON(t)
			require.Equal(t, missing["title"], got["title"], c.path)
			require.NotContains(t, r.String(), "shared", "nothing of beta leaks")
		}
	}
	e.must(http.StatusNotFound, "POST", "/v1/tokens", adminA, map[string]any{"name": "x", "domain": "beta", "role": "admin"})

	// Parameters naming the other Domain's Revision: not found in alpha.
	ap := branchPath("alpha", "main")
	e.must(http.StatusNotFound, "GET", "/v1/domains/alpha/revisions/"+revB, adminA, nil)
	e.must(http.StatusNotFound, "GET", ap+"/records/S-1?at="+revB, adminA, nil)
	e.must(http.StatusNotFound, "GET", ap+"/records?kind=Supplier&at="+revB, adminA, nil)
	r := e.do("GET", ap+"/revisions?before="+revB, adminA, nil)
	require.True(t, r.Status == http.StatusNotFound || r.Status == http.StatusBadRequest, "%d %s", r.Status, r.Body)
	rec := e.must(http.StatusOK, "GET", ap+"/records/S-1?at="+revA, adminA, nil).JSON(t)
	require.Equal(t, revA, rec["revision"])

	// beta is untouched: its head is its own commit.
	require.Equal(t, revB, e.head("beta", "main", adminB))

	// SQL as lorebase_app: with alpha set, every table shows alpha's rows only.
	ctx := context.Background()
	var alphaID int32
	require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT id FROM domains WHERE name = 'alpha'`).Scan(&alphaID))
	for _, tbl := range append([]string{"domains"}, domainTables...) {
		col := "domain_id"
		if tbl == "domains" {
			col = "id"
		}
		var own, total int
		require.NoError(t, e.Store.Pool.QueryRow(ctx, "SELECT count(*) FILTER (WHERE "+col+" = $1), count(*) FROM "+tbl, alphaID).Scan(&own, &total))
		var scoped, foreign int
		err := e.Store.InDomain(ctx, alphaID, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, "SELECT count(*), count(*) FILTER (WHERE "+col+" <> $1) FROM "+tbl, alphaID).Scan(&scoped, &foreign)
		})
		require.NoError(t, err, tbl)
		require.Equal(t, own, scoped, tbl)
		require.Zero(t, foreign, tbl)
		// The fixture embeds nothing: TestSemanticIsolation checks
		// mat_vectors with two Domains' vectors.
		if tbl != "idempotency_keys" && tbl != "mat_vectors" {
			require.Greater(t, total, own, "%s holds beta's rows too", tbl)
		}
	}
}
