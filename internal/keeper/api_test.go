package keeper_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

func TestHealthReadyMetrics(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.must(http.StatusOK, "GET", "/healthz", "", nil)
	ready := e.must(http.StatusOK, "GET", "/readyz", "", nil).JSON(t)
	require.Equal(t, "ready", ready["status"])
	require.NotContains(t, ready, "migrations", "no versions without a token")

	e.must(http.StatusUnauthorized, "GET", "/v1/domains", "", nil)
	m := e.must(http.StatusOK, "GET", "/metrics", "", nil).String()
	require.Contains(t, m, `lorebase_http_requests_total{method="GET",route="/readyz",status="200"} 1`)
	require.Contains(t, m, `lorebase_http_requests_total{method="GET",route="/v1/*",status="401"} 1`)
	require.Contains(t, m, "lorebase_http_request_duration_seconds_bucket")
	require.Contains(t, m, `lorebase_db_pool_max_connections{pool="requests"}`)
	require.Contains(t, m, `lorebase_db_pool_max_connections{pool="owner"}`)
}

func TestReadyzWhenMigrationsAreBehind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	admin := pgtest.AdminURL(t)
	name := "lorebase_unmigrated_" + strings.ToLower(strings.ReplaceAll(t.Name(), "/", "_"))
	url, err := pgcluster.CreateDatabase(ctx, admin, name)
	require.NoError(t, err)
	t.Cleanup(func() {
		s, err := store.Open(context.Background(), admin, store.Config{})
		if err == nil {
			_, _ = s.Pool.Exec(context.Background(), `DROP DATABASE IF EXISTS `+name+` WITH (FORCE)`)
			s.Close()
		}
	})
	s, err := store.Open(ctx, url, store.Config{})
	require.NoError(t, err)
	defer s.Close()
	cfg := config.Default()
	srv := keeper.New(cfg, keeper.Parts{Store: s})
	t.Cleanup(srv.Close)
	rec := newRecorder()
	srv.Handler().ServeHTTP(rec, mustRequest(t, "GET", "/readyz"))
	require.Equal(t, http.StatusServiceUnavailable, rec.Code, rec.Body.String())
	require.Contains(t, rec.Body.String(), "run keeper migrate")
	require.NotContains(t, rec.Body.String(), "river_current", "no versions without a token")
}

func TestDomains(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	d := e.must(http.StatusCreated, "POST", "/v1/domains", e.Admin, map[string]any{"name": "supply"}).JSON(t)
	require.Equal(t, "supply", d["name"])
	e.must(http.StatusConflict, "POST", "/v1/domains", e.Admin, map[string]any{"name": "supply"})
	for _, bad := range []string{"", "has space", "-lead", strings.Repeat("x", 64), "a/b", "quo'te", "nul\x00"} {
		r := e.must(http.StatusBadRequest, "POST", "/v1/domains", e.Admin, map[string]any{"name": bad})
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	}
	e.must(http.StatusBadRequest, "POST", "/v1/domains", e.Admin, map[string]any{"name": "x", "extra": 1})
	e.createDomain("beta")
	var list struct {
		Domains []struct{ Name string } `json:"domains"`
	}
	e.must(http.StatusOK, "GET", "/v1/domains", e.Admin, nil).Decode(t, &list)
	require.Len(t, list.Domains, 2)
	require.Equal(t, "beta", list.Domains[0].Name)

	e.must(http.StatusOK, "GET", "/v1/domains/supply", e.Admin, nil)
	e.must(http.StatusNotFound, "GET", "/v1/domains/nope", e.Admin, nil)

	admin := e.token("supply", "a", "admin")
	e.must(http.StatusForbidden, "POST", "/v1/domains", admin, map[string]any{"name": "gamma"})
	e.must(http.StatusForbidden, "GET", "/v1/domains", admin, nil)
	require.Equal(t, "supply", e.must(http.StatusOK, "GET", "/v1/domains/supply", admin, nil).JSON(t)["name"])
}

// TestDeleteDomain: the bootstrap admin deletes a Domain (202); it is gone
// for every request at once, its tokens no longer authenticate, the job
// removes it, and its name can be taken again.
func TestDeleteDomain(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Auth.TokenCache = 0 })
	e.createDomain("supply")
	e.createDomain("beta")
	admin := e.token("supply", "a", "admin")
	e.putSchema("supply", "main", admin, `{"kinds": [{"name": "Thing", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]}]}`)
	e.commit("supply", "main", admin, map[string]any{"message": "m", "author": "t", "changes": []map[string]any{
		{"op": "put", "kind": "Thing", "key": "T-1", "values": map[string]any{"name": "one"}}}})
	var id int32
	require.NoError(t, e.Store.Pool.QueryRow(context.Background(), `SELECT id FROM domains WHERE name = 'supply'`).Scan(&id))

	for _, c := range []struct {
		name   string
		path   string
		token  string
		status int
	}{
		{"a Domain admin may not", "/v1/domains/supply", admin, http.StatusForbidden},
		{"missing", "/v1/domains/nope", e.Admin, http.StatusNotFound},
		{"a query", "/v1/domains/supply?force=1", e.Admin, http.StatusBadRequest},
	} {
		r := e.do("DELETE", c.path, c.token, nil)
		require.Equal(t, c.status, r.Status, "%s: %s", c.name, r.Body)
	}
	e.must(http.StatusOK, "GET", "/v1/domains/supply", admin, nil)

	r := e.must(http.StatusAccepted, "DELETE", "/v1/domains/supply", e.Admin, nil).JSON(t)
	require.Equal(t, map[string]any{"name": "supply", "state": "deleting"}, r)
	e.must(http.StatusNotFound, "GET", "/v1/domains/supply", e.Admin, nil)
	e.must(http.StatusNotFound, "DELETE", "/v1/domains/supply", e.Admin, nil)
	e.must(http.StatusUnauthorized, "GET", "/v1/domains/supply/branches", admin, nil)
	var list struct {
		Domains []struct{ Name string } `json:"domains"`
	}
	e.must(http.StatusOK, "GET", "/v1/domains", e.Admin, nil).Decode(t, &list)
	require.Len(t, list.Domains, 1)
	require.Equal(t, "beta", list.Domains[0].Name)

	e.waitFor("the domain deletion", func() bool {
		var n int
		require.NoError(t, e.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM domains WHERE id = $1`, id).Scan(&n))
		return n == 0
	})
	var rows int
	require.NoError(t, e.Store.Pool.QueryRow(context.Background(), `SELECT (SELECT count(*) FROM mat_records WHERE domain_id = $1)
		+ (SELECT count(*) FROM revisions WHERE domain_id = $1) + (SELECT count(*) FROM pg_class WHERE relname = 'revision_number_' || $1)`, id).Scan(&rows))
	require.Zero(t, rows)
	e.must(http.StatusCreated, "POST", "/v1/domains", e.Admin, map[string]any{"name": "supply"})
}

func TestAuthentication(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("supply")
	for _, h := range []string{"", "Bearer", "Bearer ", "Basic abc", "Bearer wrong-token", "Bearer " + strings.Repeat("x", 10000)} {
		r := e.do("GET", "/v1/domains/supply", "", nil, "Authorization", h)
		require.Equal(t, http.StatusUnauthorized, r.Status, "Authorization %q: %s", h, r.Body)
		require.Contains(t, r.Header.Get("WWW-Authenticate"), "Bearer")
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
		p := r.JSON(t)
		require.EqualValues(t, 401, p["status"])
		require.NotEmpty(t, p["detail"])
	}
}

func TestTokens(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("supply")
	e.createDomain("other")

	r := e.must(http.StatusCreated, "POST", "/v1/tokens", e.Admin,
		map[string]any{"name": "scout", "domain": "supply", "role": "writer", "branches": []string{"agent/scout/*"}}).JSON(t)
	require.NotEmpty(t, r["token"])
	require.NotEmpty(t, r["id"])
	require.Equal(t, "scout", r["name"])
	require.Equal(t, "supply", r["domain"])
	require.Equal(t, "writer", r["role"])
	require.Equal(t, []any{"agent/scout/*"}, r["branches"])
	var hashed int
	require.NoError(t, e.Store.Pool.QueryRow(context.Background(),
		`SELECT count(*) FROM tokens WHERE token_hash = $1`, store.HashToken(r["token"].(string))).Scan(&hashed))
	require.Equal(t, 1, hashed, "stored hashed")

	def := e.must(http.StatusCreated, "POST", "/v1/tokens", e.Admin,
		map[string]any{"name": "reader", "domain": "supply", "role": "reader"}).JSON(t)
	require.Equal(t, []any{"*"}, def["branches"])

	e.must(http.StatusConflict, "POST", "/v1/tokens", e.Admin, map[string]any{"name": "scout", "domain": "supply", "role": "reader"})
	e.must(http.StatusNotFound, "POST", "/v1/tokens", e.Admin, map[string]any{"name": "x", "domain": "nope", "role": "reader"})

	for _, bad := range []map[string]any{
		{"name": "x", "domain": "supply", "role": "owner"},
		{"name": "", "domain": "supply", "role": "reader"},
		{"name": strings.Repeat("n", 101), "domain": "supply", "role": "reader"},
		{"name": "tab\tname", "domain": "supply", "role": "reader"},
		{"name": "x", "domain": "supply", "role": "writer", "branches": []string{"main; DROP"}},
		{"name": "x", "domain": "supply", "role": "writer", "branches": []string{}},
		{"name": "x", "domain": "", "role": "writer"},
		{"name": "x", "domain": "supply", "role": "writer", "unknown": true},
	} {
		e.must(http.StatusBadRequest, "POST", "/v1/tokens", e.Admin, bad)
	}

	admin := e.token("supply", "adm", "admin")
	writer := e.token("supply", "wri", "writer")
	e.must(http.StatusCreated, "POST", "/v1/tokens", admin, map[string]any{"name": "minted", "domain": "supply", "role": "reader"})
	e.must(http.StatusNotFound, "POST", "/v1/tokens", admin, map[string]any{"name": "minted", "domain": "other", "role": "reader"})
	e.must(http.StatusForbidden, "POST", "/v1/tokens", writer, map[string]any{"name": "minted2", "domain": "supply", "role": "reader"})
	e.must(http.StatusUnauthorized, "POST", "/v1/tokens", "", map[string]any{"name": "minted2", "domain": "supply", "role": "reader"})
}

func TestSchema(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("supply")
	admin := e.token("supply", "adm", "admin")
	writer := e.token("supply", "wri", "writer")
	reader := e.token("supply", "rea", "reader")
	path := branchPath("supply", "main") + "/schema"

	empty := e.must(http.StatusOK, "GET", path, reader, nil).JSON(t)
	require.Nil(t, empty["revision"])

	e.must(http.StatusForbidden, "PUT", path, writer, supplySchema)
	e.must(http.StatusForbidden, "PUT", path, reader, supplySchema)
	e.must(http.StatusBadRequest, "PUT", path, admin, `{"kinds": [`)
	e.must(http.StatusBadRequest, "PUT", path, admin, `[]`)
	e.must(http.StatusUnprocessableEntity, "PUT", path, admin, `{"kinds": [{"name": "1bad", "title": "x", "attributes": []}]}`)
	e.must(http.StatusNotFound, "PUT", branchPath("supply", "nope")+"/schema", admin, supplySchema)
	e.must(http.StatusConflict, "PUT", path, admin, supplySchema, "If-Match", `"01J0000000000000000000000"`)

	rev := e.putSchema("supply", "main", admin, supplySchema)
	require.NotEmpty(t, rev)
	got := e.must(http.StatusOK, "GET", path, reader, nil).JSON(t)
	require.Equal(t, rev, got["revision"])
	require.Contains(t, got, "document")
	require.Contains(t, got, "compiled")
	require.Equal(t, rev, e.head("supply", "main", reader))

	// Author and message from headers; If-Match with the current head.
	rev2 := e.must(http.StatusOK, "PUT", path+"?message=again", admin, supplySchema,
		"If-Match", rev, "Lorebase-Author", "curator").JSON(t)["revision"].(string)
	var log struct {
		Revisions []struct{ ID, Author, Message string } `json:"revisions"`
	}
	e.must(http.StatusOK, "GET", branchPath("supply", "main")+"/revisions", reader, nil).Decode(t, &log)
	require.Equal(t, rev2, log.Revisions[0].ID)
	require.Equal(t, "curator", log.Revisions[0].Author)
	require.Equal(t, "again", log.Revisions[0].Message)
	require.Equal(t, "Update schema", log.Revisions[1].Message)
	require.Equal(t, "adm", log.Revisions[1].Author, "the token's name by default")

	// Incompatible: Supplier.tier loses a value a Record holds.
	e.commit("supply", "main", admin, commitBody("s", put("Supplier", "S-1", map[string]any{"name": "Acme", "tier": "gold"})))
	narrowed := strings.Replace(supplySchema, `"values": ["gold", "silver"]`, `"values": ["silver"]`, 1)
	before := e.rowCounts()
	e.must(http.StatusUnprocessableEntity, "PUT", path, admin, narrowed)
	require.Equal(t, before, e.rowCounts())
}

func TestCommitAndRead(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	writer := e.token("supply", "wri", "writer")
	reader := e.token("supply", "rea", "reader")
	bp := branchPath("supply", "main")
	schemaHead := e.head("supply", "main", reader)

	body := map[string]any{
		"message": "Add Acme and its bolt", "author": "agent:scout-7",
		"provenance": map[string]any{"source": "https://example.com/acme", "confidence": 0.9},
		"changes": []map[string]any{
			put("Supplier", "S-1", map[string]any{"name": "Acme", "country": "DE", "vat": "DE1"}),
			put("Supplier", "S-2", map[string]any{"name": "Bolt Co", "country": "FR"}),
			put("Part", "P-1", map[string]any{"name": "Hex bolt", "maker": "S-1", "weight_kg": 0.25}),
			{"op": "link", "relation": "supplied_by", "from": "P-1", "to": "S-1"},
		},
	}
	firstAnswer := e.must(http.StatusCreated, "POST", bp+"/commits", writer, body, "Idempotency-Key", "commit-1")
	r := firstAnswer.JSON(t)
	rev1 := r["revision"].(string)
	require.Equal(t, []any{schemaHead}, r["parents"])
	require.EqualValues(t, 4, r["changes"])
	require.Equal(t, rev1, e.head("supply", "main", reader))

	// Replay: same answer, marked; a different body under the key: 422.
	replay := e.must(http.StatusCreated, "POST", bp+"/commits", writer, body, "Idempotency-Key", "commit-1")
	require.Equal(t, "true", replay.Header.Get("Idempotent-Replayed"))
	require.Empty(t, firstAnswer.Header.Get("Idempotent-Replayed"))
	require.Equal(t, string(firstAnswer.Body), string(replay.Body), "the replay's body is the first answer's, byte for byte")
	require.Equal(t, firstAnswer.Header.Get("Content-Type"), replay.Header.Get("Content-Type"))
	require.Equal(t, rev1, replay.JSON(t)["revision"])
	other := commitBody("other", put("Supplier", "S-9", map[string]any{"name": "Nine"}))
	e.must(http.StatusUnprocessableEntity, "POST", bp+"/commits", writer, other, "Idempotency-Key", "commit-1")
	e.must(http.StatusBadRequest, "POST", bp+"/commits", writer, other, "Idempotency-Key", strings.Repeat("k", 201))
	e.must(http.StatusBadRequest, "POST", bp+"/commits", writer, other, "Idempotency-Key", "caf\u00e9")

	rec := e.must(http.StatusOK, "GET", bp+"/records/S-1", reader, nil).JSON(t)
	require.Equal(t, "S-1", rec["key"])
	require.Equal(t, "Supplier", rec["kind"])
	require.Equal(t, "Acme", rec["title"])
	require.Equal(t, rev1, rec["revision"])
	require.Equal(t, "DE", rec["values"].(map[string]any)["country"])
	e.must(http.StatusNotFound, "GET", bp+"/records/S-404", reader, nil)
	e.must(http.StatusNotFound, "GET", branchPath("supply", "nope")+"/records/S-1", reader, nil)

	// Change S-1, then read it as of rev1.
	rev2 := e.commit("supply", "main", writer, commitBody("rename", map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"name": "Acme AG"}}))
	require.Equal(t, "Acme AG", e.must(http.StatusOK, "GET", bp+"/records/S-1", reader, nil).JSON(t)["title"])
	require.Equal(t, "Acme", e.must(http.StatusOK, "GET", bp+"/records/S-1?at="+rev1, reader, nil).JSON(t)["title"])

	var page struct {
		Records []struct{ Key string } `json:"records"`
		Next    string                 `json:"next"`
	}
	e.must(http.StatusOK, "GET", bp+"/records?kind=Supplier&limit=1", reader, nil).Decode(t, &page)
	require.Len(t, page.Records, 1)
	require.Equal(t, "S-1", page.Records[0].Key)
	require.Equal(t, "S-1", page.Next)
	page.Next = ""
	e.must(http.StatusOK, "GET", bp+"/records?kind=Supplier&limit=1&after=S-1", reader, nil).Decode(t, &page)
	require.Equal(t, "S-2", page.Records[0].Key)
	e.must(http.StatusOK, "GET", bp+"/records?kind=Supplier&attribute=country&value=FR", reader, nil).Decode(t, &page)
	require.Len(t, page.Records, 1)
	require.Equal(t, "S-2", page.Records[0].Key)

	for _, q := range []string{"limit=0", "limit=1001", "limit=x", "limit=-1", "kind=Supplier&attribute=country",
		"kind=Supplier&value=FR", "attribute=country&value=FR", "kind=bad%20kind", "kidn=Supplier",
		"kind=Supplier&after=" + strings.Repeat("a", 300), "kind=Supplier&at=%00", "kind=Supplier&limit=1&limit=2"} {
		p := e.must(http.StatusBadRequest, "GET", bp+"/records?"+q, reader, nil).JSON(t)
		require.NotEmpty(t, p["errors"], q)
	}

	var log struct {
		Revisions []struct {
			ID      string   `json:"id"`
			Parents []string `json:"parents"`
			Author  string   `json:"author"`
		} `json:"revisions"`
		Next string `json:"next"`
	}
	e.must(http.StatusOK, "GET", bp+"/revisions?limit=2", reader, nil).Decode(t, &log)
	require.Len(t, log.Revisions, 2)
	require.Equal(t, rev2, log.Revisions[0].ID)
	require.Equal(t, rev1, log.Revisions[1].ID)
	require.Equal(t, "agent:scout-7", log.Revisions[1].Author)
	require.NotEmpty(t, log.Next)
	e.must(http.StatusOK, "GET", bp+"/revisions?limit=2&before="+log.Next, reader, nil).Decode(t, &log)
	require.Equal(t, schemaHead, log.Revisions[0].ID)
	e.must(http.StatusBadRequest, "GET", bp+"/revisions?limit=100000", reader, nil)

	one := e.must(http.StatusOK, "GET", "/v1/domains/supply/revisions/"+rev1, reader, nil).JSON(t)
	require.Equal(t, rev1, one["id"])
	require.Len(t, one["changes"], 4)
	e.must(http.StatusNotFound, "GET", "/v1/domains/supply/revisions/01J0000000000000000000000", reader, nil)

	// Stale expected_head: 409, nothing written.
	before := e.rowCounts()
	stale := commitBody("stale", put("Supplier", "S-3", map[string]any{"name": "Three"}))
	stale["expected_head"] = rev1
	e.must(http.StatusConflict, "POST", bp+"/commits", writer, stale)
	require.Equal(t, before, e.rowCounts())
	stale["expected_head"] = rev2
	e.must(http.StatusCreated, "POST", bp+"/commits", writer, stale)

	// A reader may not commit; a commit to a missing branch is 404.
	e.must(http.StatusForbidden, "POST", bp+"/commits", reader, other)
	e.must(http.StatusNotFound, "POST", branchPath("supply", "nope")+"/commits", admin, other)
}

func TestRefusedCommitWritesNothing(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	bp := branchPath("supply", "main")
	e.commit("supply", "main", admin, commitBody("seed", put("Supplier", "S-1", map[string]any{"name": "Acme", "vat": "V1"})))
	head := e.head("supply", "main", admin)
	before := e.rowCounts()

	for name, body := range map[string]any{
		"unknown kind":      commitBody("x", put("Nope", "N-1", map[string]any{"name": "x"})),
		"missing required":  commitBody("x", put("Supplier", "S-2", map[string]any{"country": "DE"})),
		"bad enum":          commitBody("x", put("Supplier", "S-2", map[string]any{"name": "x", "tier": "bronze"})),
		"duplicate unique":  commitBody("x", put("Supplier", "S-2", map[string]any{"name": "x", "vat": "V1"})),
		"dangling ref":      commitBody("x", put("Part", "P-1", map[string]any{"name": "x", "maker": "S-404"})),
		"later one invalid": commitBody("x", put("Supplier", "S-3", map[string]any{"name": "ok"}), put("Supplier", "S-4", map[string]any{"name": 5})),
		"bad op":            commitBody("x", map[string]any{"op": "explode", "key": "S-1"}),
		"no changes":        commitBody("x"),
	} {
		r := e.do("POST", bp+"/commits", admin, body)
		require.True(t, r.Status == 400 || r.Status == 422, "%s: %d %s", name, r.Status, r.Body)
		require.NotEmpty(t, r.JSON(t)["errors"], name)
	}
	require.Equal(t, head, e.head("supply", "main", admin))
	require.Equal(t, before, e.rowCounts())
}

func TestEscapedBranchNames(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.withSupply("supply")
	e.createBranch("supply", "agent/scout/7")
	scout := e.token("supply", "scout", "writer", "agent/scout/*")

	b := e.must(http.StatusOK, "GET", "/v1/domains/supply/branches/agent%2Fscout%2F7", scout, nil).JSON(t)
	require.Equal(t, "agent/scout/7", b["name"])
	require.Equal(t, "copy", b["mode"])
	require.Equal(t, "ready", b["state"])
	e.must(http.StatusOK, "GET", "/v1/domains/supply/branches/agent%2fscout%2f7/schema", scout, nil)
	// Unescaped slashes are not one segment.
	e.must(http.StatusNotFound, "GET", "/v1/domains/supply/branches/agent/scout/7", scout, nil)

	e.commit("supply", "agent/scout/7", scout, commitBody("on the branch", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	e.must(http.StatusOK, "GET", branchPath("supply", "agent/scout/7")+"/records/S-1", scout, nil)
	e.must(http.StatusNotFound, "GET", branchPath("supply", "main")+"/records/S-1", scout, nil)

	// The writer's patterns keep it off main, but it may read main.
	e.must(http.StatusForbidden, "POST", branchPath("supply", "main")+"/commits", scout,
		commitBody("no", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	e.must(http.StatusOK, "GET", branchPath("supply", "main")+"/records?kind=Supplier", scout, nil)

	var list struct {
		Branches []struct{ Name string } `json:"branches"`
		Next     string                  `json:"next"`
	}
	e.must(http.StatusOK, "GET", "/v1/domains/supply/branches?limit=1", scout, nil).Decode(t, &list)
	require.Equal(t, "agent/scout/7", list.Branches[0].Name)
	require.Equal(t, "agent/scout/7", list.Next)
	after := list.Next
	list.Next = ""
	e.must(http.StatusOK, "GET", "/v1/domains/supply/branches?limit=1&after="+esc(after), scout, nil).Decode(t, &list)
	require.Equal(t, "main", list.Branches[0].Name)
	require.Empty(t, list.Next)

	// Keys with escapes round-trip.
	admin := e.token("supply", "adm", "admin")
	for _, key := range []string{"a/b", "100%", "q'uote", `back\slash`, "sp ace", "ünï", "%2F"} {
		e.commit("supply", "main", admin, commitBody("k", put("Supplier", key, map[string]any{"name": key})))
		got := e.must(http.StatusOK, "GET", branchPath("supply", "main")+"/records/"+esc(key), admin, nil).JSON(t)
		require.Equal(t, key, got["key"])
	}
	e.must(http.StatusNotFound, "GET", "/v1/domains/supply/branches/nope", admin, nil)
	e.must(http.StatusBadRequest, "GET", "/v1/domains/supply/branches/a%2F%2Fb", admin, nil)
	e.must(http.StatusBadRequest, "GET", "/v1/domains/supply/branches/..", admin, nil)
}

func TestBodyTooLarge(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.HTTP.MaxBodyBytes = 4096 })
	admin := e.withSupply("supply")
	big := commitBody("big", put("Supplier", "S-1", map[string]any{"name": strings.Repeat("x", 5000)}))
	before := e.rowCounts()
	r := e.must(http.StatusRequestEntityTooLarge, "POST", branchPath("supply", "main")+"/commits", admin, big)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	e.must(http.StatusRequestEntityTooLarge, "PUT", branchPath("supply", "main")+"/schema", admin, strings.Repeat(" ", 5000)+supplySchema)
	require.Equal(t, before, e.rowCounts())
}

func TestUnknownRoutes(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	r := e.must(http.StatusNotFound, "GET", "/v2/anything", e.Admin, nil)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	e.must(http.StatusMethodNotAllowed, "DELETE", "/v1/domains", e.Admin, nil)
}

// TestDeleteDomainForgetsCachedTokens: a Domain token this Keeper has
// cached stops working when the Domain is deleted, not when the cache
// expires it; another Domain's cached token keeps working.
func TestDeleteDomainForgetsCachedTokens(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Auth.TokenCache = time.Hour })
	e.createDomain("supply")
	e.createDomain("beta")
	gone := e.token("supply", "a", "admin")
	kept := e.token("beta", "b", "admin")
	for _, c := range []struct{ path, token string }{{"/v1/domains/supply/branches", gone}, {"/v1/domains/beta/branches", kept}} {
		e.must(http.StatusOK, "GET", c.path, c.token, nil)
	}
	e.must(http.StatusAccepted, "DELETE", "/v1/domains/supply", e.Admin, nil)
	for _, path := range []string{"/v1/domains/supply/branches", "/v1/domains/supply/branches/main/records?kind=Thing", "/v1/domains/supply"} {
		r := e.do("GET", path, gone, nil)
		require.Equal(t, http.StatusUnauthorized, r.Status, "%s: %s", path, r.Body)
	}
	e.must(http.StatusOK, "GET", "/v1/domains/beta/branches", kept, nil)
}
