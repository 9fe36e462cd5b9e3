package keeper_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/internal/keepertest"
	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// another starts a second Keeper over the same database (its own pools and
// token cache), as a second replica behind a load balancer would be.
func (e *env) another(opts ...func(*config.Config)) *env {
	e.t.Helper()
	cfg := e.Config
	all(opts)(&cfg)
	k, err := keepertest.Start(context.Background(), cfg.Database.URL, cfg.Database.AppURL,
		keepertest.Options{Config: func(c *config.Config) { *c = cfg }, NoJobs: true})
	require.NoError(e.t, err)
	e.t.Cleanup(k.Close)
	return envOf(e.t, k)
}

func TestTokenLifecycle(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Auth.TokenCache = time.Minute })
	admin := e.withSupply("alpha")
	e.createDomain("beta")
	betaAdmin := e.token("beta", "admin", "admin")
	tp := "/v1/domains/alpha/tokens"

	created := e.must(http.StatusCreated, "POST", "/v1/tokens", admin,
		map[string]any{"name": "scout", "domain": "alpha", "role": "writer", "expires_in": "1h"}).JSON(t)
	scout := created["token"].(string)
	scoutID := created["id"].(string)
	exp, err := time.Parse(time.RFC3339Nano, created["expires_at"].(string))
	require.NoError(t, err)
	require.WithinDuration(t, time.Now().Add(time.Hour), exp, time.Minute)

	// Used once: last_used_at is set. A second Keeper with a short cache.
	other := e.another(func(c *config.Config) { c.Auth.TokenCache = 300 * time.Millisecond })
	e.must(http.StatusOK, "GET", branchPath("alpha", "main"), scout, nil)
	other.must(http.StatusOK, "GET", branchPath("alpha", "main"), scout, nil)

	// Listed without secrets, by an admin only.
	var page struct {
		Tokens []map[string]any `json:"tokens"`
	}
	r := e.must(http.StatusOK, "GET", tp, admin, nil)
	r.Decode(t, &page)
	require.Len(t, page.Tokens, 2)
	require.NotContains(t, r.String(), scout)
	require.NotContains(t, r.String(), "token_hash")
	var listed map[string]any
	for _, tok := range page.Tokens {
		require.NotContains(t, tok, "token")
		if tok["id"] == scoutID {
			listed = tok
		}
	}
	require.NotNil(t, listed)
	require.Equal(t, "scout", listed["name"])
	require.NotNil(t, listed["last_used_at"], "a used token shows when")
	require.Nil(t, listed["revoked_at"])
	e.must(http.StatusForbidden, "GET", tp, scout, nil)
	e.must(http.StatusNotFound, "GET", tp, betaAdmin, nil)
	e.must(http.StatusForbidden, "DELETE", tp+"/"+scoutID, scout, nil)

	// Another Domain's admin cannot revoke it, not even naming its id
	// under its own Domain.
	e.must(http.StatusNotFound, "DELETE", tp+"/"+scoutID, betaAdmin, nil)
	e.must(http.StatusNotFound, "DELETE", "/v1/domains/beta/tokens/"+scoutID, betaAdmin, nil)
	e.must(http.StatusOK, "GET", branchPath("alpha", "main"), scout, nil)

	// Revoked: refused at once by this Keeper (its cache holds the token
	// for a minute), by the other within its cache time.
	rv := e.must(http.StatusOK, "DELETE", tp+"/"+scoutID, admin, nil).JSON(t)
	require.NotNil(t, rv["revoked_at"])
	got := e.must(http.StatusUnauthorized, "GET", branchPath("alpha", "main"), scout, nil).JSON(t)
	require.Contains(t, got["detail"], "revoked")
	require.Eventually(t, func() bool {
		return other.do("GET", branchPath("alpha", "main"), scout, nil).Status == http.StatusUnauthorized
	}, 5*time.Second, 50*time.Millisecond)
	e.must(http.StatusOK, "DELETE", tp+"/"+scoutID, admin, nil) // twice: no change
	e.must(http.StatusNotFound, "DELETE", tp+"/01HZZZZZZZZZZZZZZZZZZZZZZZ", admin, nil)

	// Expiry.
	short := e.must(http.StatusCreated, "POST", "/v1/tokens", admin,
		map[string]any{"name": "brief", "domain": "alpha", "role": "reader", "expires_in": 1}).JSON(t)["token"].(string)
	e.must(http.StatusOK, "GET", branchPath("alpha", "main"), short, nil)
	time.Sleep(1100 * time.Millisecond)
	got = e.must(http.StatusUnauthorized, "GET", branchPath("alpha", "main"), short, nil).JSON(t)
	require.Contains(t, got["detail"], "expired")

	for _, bad := range []any{0, -5, "soon", "1ms", true, "99999h"} {
		r := e.must(http.StatusBadRequest, "POST", "/v1/tokens", admin,
			map[string]any{"name": "bad", "domain": "alpha", "role": "reader", "expires_in": bad}).JSON(t)
		require.Equal(t, "expires_in", r["errors"].([]any)[0].(map[string]any)["field"], "%v", bad)
	}
}

// TestRequestRoleCannotBecomeOwner: a request connection logs in as a role
// that is a member of lorebase_app only. SQL run on it cannot switch to the
// owner, and leaving lorebase_app leaves it with no privilege at all.
func TestRequestRoleCannotBecomeOwner(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.withSupply("alpha")
	ctx := context.Background()
	require.NoError(t, e.Store.CheckRequestRole(ctx))

	var owner string
	require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT pg_get_userbyid(relowner)::text FROM pg_class WHERE oid = 'refs'::regclass`).Scan(&owner))
	conn, err := e.Store.Requests.Acquire(ctx)
	require.NoError(t, err)
	defer conn.Release()
	var who string
	require.NoError(t, conn.QueryRow(ctx, `SELECT session_user::text`).Scan(&who))
	require.Equal(t, pgtest.RequestRole, who)
	require.NotEqual(t, owner, who)

	for _, stmt := range []string{
		"SET ROLE " + pgx.Identifier{owner}.Sanitize(),
		"SELECT set_config('role', " + store.QuoteLiteral(owner) + ", false)",
		"SET SESSION AUTHORIZATION " + pgx.Identifier{owner}.Sanitize(),
	} {
		_, err := conn.Exec(ctx, stmt)
		require.Error(t, err, stmt)
	}
	// Back to its own login role: no table is readable.
	for _, stmt := range []string{"RESET ROLE", "SELECT set_config('role', 'none', false)"} {
		_, err := conn.Exec(ctx, stmt)
		require.NoError(t, err)
		for _, tbl := range []string{"refs", "tokens", "revisions", "mat_records", "domains"} {
			_, err := conn.Exec(ctx, "SELECT 1 FROM "+tbl+" LIMIT 1")
			require.Error(t, err, "%s then %s", stmt, tbl)
		}
	}
	// As lorebase_app with no Domain set: nothing.
	var n int
	_, err = conn.Exec(ctx, "SET ROLE lorebase_app")
	require.NoError(t, err)
	require.NoError(t, conn.QueryRow(ctx, "SELECT count(*) FROM refs").Scan(&n))
	require.Zero(t, n)
	_, err = conn.Exec(ctx, "RESET ROLE")
	require.NoError(t, err)
}

// TestEnsureRequestRoleRefusesPowerfulRoles: a request role that is the
// owner, or that is a member of a role besides lorebase_app, is refused.
func TestEnsureRequestRoleRefusesPowerfulRoles(t *testing.T) {
	t.Parallel()
	url := pgtest.NewDatabase(t)
	ctx := context.Background()
	owner, err := pgx.ParseConfig(url)
	require.NoError(t, err)
	same, err := pgcluster.WithUser(url, owner.User, "")
	require.NoError(t, err)
	require.ErrorContains(t, store.EnsureRequestRole(ctx, url, same), "neither the owner")

	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)
	role := "lorebase_request_wide_" + time.Now().Format("150405000000")
	_, err = conn.Exec(ctx, "CREATE ROLE "+role+" LOGIN IN ROLE pg_read_all_data")
	require.NoError(t, err)
	t.Cleanup(func() { _, _ = conn.Exec(context.Background(), "DROP ROLE IF EXISTS "+role) })
	wide, err := pgcluster.WithUser(url, role, "")
	require.NoError(t, err)
	require.ErrorContains(t, store.EnsureRequestRole(ctx, url, wide), "pg_read_all_data")
}

// TestIdempotencyKeysPerToken: two writers using one key do not meet;
// one writer's replay answers again; a key is forgotten after its TTL.
func TestIdempotencyKeysPerToken(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Write.IdempotencyTTL = time.Hour })
	admin := e.withSupply("alpha")
	w1 := e.token("alpha", "w1", "writer")
	w2 := e.token("alpha", "w2", "writer")
	path := branchPath("alpha", "main") + "/commits"
	b1 := commitBody("one", put("Supplier", "S-1", map[string]any{"name": "One"}))
	b2 := commitBody("two", put("Supplier", "S-2", map[string]any{"name": "Two"}))

	r1 := e.must(http.StatusCreated, "POST", path, w1, b1, "Idempotency-Key", "k").JSON(t)
	// Another writer's key of the same name is its own: no 422, no replay
	// of w1's answer.
	r2 := e.do("POST", path, w2, b2, "Idempotency-Key", "k")
	require.Equal(t, http.StatusCreated, r2.Status, r2.String())
	require.Empty(t, r2.Header.Get("Idempotent-Replayed"))
	require.NotEqual(t, r1["revision"], r2.JSON(t)["revision"])
	// w2 probing w1's key with w1's body gets a new commit, not w1's answer.
	r3 := e.do("POST", path, w2, b1, "Idempotency-Key", "k")
	require.Equal(t, http.StatusUnprocessableEntity, r3.Status, "w2's own key holds w2's body: %s", r3)
	// w1's replay.
	again := e.must(http.StatusCreated, "POST", path, w1, b1, "Idempotency-Key", "k")
	require.Equal(t, "true", again.Header.Get("Idempotent-Replayed"))
	require.Equal(t, r1["revision"], again.JSON(t)["revision"])
	// The admin's keys are apart too.
	e.must(http.StatusCreated, "POST", path, admin, b2, "Idempotency-Key", "k")

	// After the TTL the key is free again: the keys are made older than
	// the TTL (this test's own database), rather than waited for, so a
	// loaded machine cannot let the TTL run out before the replay above.
	_, err := e.Store.Pool.Exec(context.Background(), `UPDATE idempotency_keys SET created_at = now() - interval '61 minutes'`)
	require.NoError(t, err)
	fresh := e.do("POST", path, w1, commitBody("three", put("Supplier", "S-3", map[string]any{"name": "Three"})), "Idempotency-Key", "k")
	require.Equal(t, http.StatusCreated, fresh.Status, fresh.String())
	require.Empty(t, fresh.Header.Get("Idempotent-Replayed"))
}

// TestBranchJobErrorIsNotShown: a job's own error (SQL, internals) never
// reaches a reader of the branch; the branch says an attempt failed.
func TestBranchJobErrorIsNotShown(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("alpha")
	e.createBranchReq("alpha", admin, map[string]any{"name": "work", "from": "main"})
	_, err := e.Store.Pool.Exec(context.Background(), `INSERT INTO river_job (kind, args, state, attempt, max_attempts, attempted_at, scheduled_at, errors)
		SELECT $1, jsonb_build_object('domain_id', r.domain_id, 'branch_id', r.id), 'retryable', 1, 25, now(), now() + interval '1 hour',
		       ARRAY[jsonb_build_object('at', now(), 'attempt', 1, 'error', 'ERROR: relation "mat_records_p3" secret internals (SQLSTATE 42P01)')]
		FROM refs r WHERE r.name = 'work'`, jobkind.Materialize)
	require.NoError(t, err)
	r := e.must(http.StatusOK, "GET", branchPath("alpha", "work"), admin, nil)
	require.NotContains(t, r.String(), "SQLSTATE")
	require.NotContains(t, r.String(), "mat_records_p3")
	require.Contains(t, r.String(), "attempt 1 failed")
}

// TestLongIndexedTextIsRefused: a text value of an indexed or unique
// Attribute too long for its index is refused with 422 naming the change,
// and nothing is written (it used to fail in the index with a 413).
func TestLongIndexedTextIsRefused(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("alpha")
	long := strings.Repeat("x", 2001)
	before := e.rowCounts()
	for _, attr := range []string{"country", "vat"} { // indexed, unique
		r := e.must(http.StatusUnprocessableEntity, "POST", branchPath("alpha", "main")+"/commits", admin,
			commitBody("long", put("Supplier", "S-1", map[string]any{"name": "Acme", attr: long})))
		require.Contains(t, r.String(), "indexed or unique", attr)
		require.Contains(t, r.String(), `"index":0`)
	}
	require.Equal(t, before, e.rowCounts())
	// An Attribute neither indexed nor unique takes it.
	e.commit("alpha", "main", admin, commitBody("long name", put("Supplier", "S-1", map[string]any{"name": long})))
}
