package keeper_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// branchInfo is a branch as the branch calls answer it.
type branchInfo struct {
	Name         string         `json:"name"`
	Mode         string         `json:"mode"`
	State        string         `json:"state"`
	Base         *string        `json:"base"`
	ForkRevision *string        `json:"fork_revision"`
	Head         *string        `json:"head"`
	Progress     map[string]any `json:"progress"`
	Own          *struct {
		Records int  `json:"records"`
		Links   int  `json:"links"`
		Capped  bool `json:"capped"`
	} `json:"own"`
	Job *struct {
		Kind  string `json:"kind"`
		State string `json:"state"`
	} `json:"job"`
}

func branchesPath(domain string) string { return "/v1/domains/" + esc(domain) + "/branches" }

// createBranchReq creates a branch and returns the answer.
func (e *env) createBranchReq(domain, token string, req map[string]any) branchInfo {
	e.t.Helper()
	var b branchInfo
	e.must(http.StatusCreated, "POST", branchesPath(domain), token, req).Decode(e.t, &b)
	return b
}

// waitFor polls a condition (background jobs) and fails after a minute.
func (e *env) waitFor(what string, cond func() bool) {
	e.t.Helper()
	deadline := time.Now().Add(time.Minute)
	for !cond() {
		if time.Now().After(deadline) {
			e.t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// waitReady waits until a copy has finished copying.
func (e *env) waitReady(domain, branch, token string) branchInfo {
	e.t.Helper()
	var b branchInfo
	e.waitFor(branch+" to be ready", func() bool {
		e.must(http.StatusOK, "GET", branchPath(domain, branch), token, nil).Decode(e.t, &b)
		return b.State == "ready"
	})
	return b
}

// waitGone waits until a deleted branch's ref is removed.
func (e *env) waitGone(domain, branch string) {
	e.t.Helper()
	e.waitFor(branch+" to be removed", func() bool {
		var n int
		require.NoError(e.t, e.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM refs r JOIN domains d ON d.id = r.domain_id
			WHERE d.name = $1 AND r.name = $2`, domain, branch).Scan(&n))
		return n == 0
	})
}

// branchID is a branch's id (owner).
func (e *env) branchID(domain, branch string) int32 {
	e.t.Helper()
	var id int32
	require.NoError(e.t, e.Store.Pool.QueryRow(context.Background(), `SELECT r.id FROM refs r JOIN domains d ON d.id = r.domain_id
		WHERE d.name = $1 AND r.name = $2`, domain, branch).Scan(&id))
	return id
}

// sameRows requires two branches of a Domain to hold the same rows (seq at
// most maxSeq) in every materialized table.
func (e *env) sameRows(domain, a, b string, maxSeq int64) {
	e.t.Helper()
	ida, idb := e.branchID(domain, a), e.branchID(domain, b)
	for tbl, cols := range map[string]string{
		"mat_records":      "key, kind, title, values, search, lineage, created_seq, seq, versions, deleted",
		"mat_links":        "from_key, relation, to_key, origin, seq, deleted",
		"mat_history":      "key, seq, revision_id, op, kind, title, values, object_hash, provenance",
		"mat_link_history": "from_key, relation, to_key, seq, op, origin",
	} {
		q := fmt.Sprintf(`SELECT (SELECT count(*) FROM %[1]s WHERE branch_id = $1 AND seq <= $3),
			(SELECT count(*) FROM ((SELECT %[2]s FROM %[1]s WHERE branch_id = $1 AND seq <= $3
			  EXCEPT ALL SELECT %[2]s FROM %[1]s WHERE branch_id = $2 AND seq <= $3)
			 UNION ALL (SELECT %[2]s FROM %[1]s WHERE branch_id = $2 AND seq <= $3
			  EXCEPT ALL SELECT %[2]s FROM %[1]s WHERE branch_id = $1 AND seq <= $3)) x)`, tbl, cols)
		var n, diff int
		require.NoError(e.t, e.Store.Pool.QueryRow(context.Background(), q, ida, idb, maxSeq).Scan(&n, &diff))
		require.Positive(e.t, n, "%s of %s is empty", tbl, a)
		require.Zero(e.t, diff, "%s differs between %s and %s", tbl, a, b)
	}
}

// revSeq is a Revision's seq (owner).
func (e *env) revSeq(rev string) int64 {
	e.t.Helper()
	var s int64
	require.NoError(e.t, e.Store.Pool.QueryRow(context.Background(), `SELECT seq FROM revisions WHERE id = $1`, rev).Scan(&s))
	return s
}

// seedSupply commits Suppliers and Parts with Links on main.
func (e *env) seedSupply(domain, token string, n int) string {
	e.t.Helper()
	var changes []map[string]any
	for i := 1; i <= n; i++ {
		changes = append(changes,
			put("Supplier", fmt.Sprintf("S-%d", i), map[string]any{"name": fmt.Sprintf("Acme %d", i), "country": "DE", "vat": fmt.Sprintf("V%d", i), "tier": "gold"}),
			put("Part", fmt.Sprintf("P-%d", i), map[string]any{"name": fmt.Sprintf("Bolt %d", i), "maker": fmt.Sprintf("S-%d", i)}),
			map[string]any{"op": "link", "relation": "supplied_by", "from": fmt.Sprintf("P-%d", i), "to": fmt.Sprintf("S-%d", i)})
	}
	e.commit(domain, "main", token, commitBody("seed", changes...))
	return e.commit(domain, "main", token, commitBody("patch",
		map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "FR"}},
		map[string]any{"op": "patch", "key": "P-2", "values": map[string]any{"name": "Nut 2"}}))
}

func TestCreateOverlayAndCopyBranches(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	head := e.seedSupply("acme", admin, 6)

	o := e.createBranchReq("acme", admin, map[string]any{"name": "agent/scout-7", "from": "main", "mode": "overlay"})
	require.Equal(t, "agent/scout-7", o.Name)
	require.Equal(t, "overlay", o.Mode)
	require.Equal(t, "ready", o.State)
	require.Equal(t, "main", *o.Base)
	require.Equal(t, head, *o.ForkRevision)
	require.Equal(t, head, *o.Head)
	// No row copies for an overlay; the schema is the base's.
	got := e.must(http.StatusOK, "GET", branchPath("acme", "agent/scout-7"), admin, nil)
	var ob branchInfo
	got.Decode(t, &ob)
	require.Zero(t, ob.Own.Records)
	require.Equal(t, e.must(http.StatusOK, "GET", branchPath("acme", "main")+"/schema", admin, nil).JSON(t)["compiled"],
		e.must(http.StatusOK, "GET", branchPath("acme", "agent/scout-7")+"/schema", admin, nil).JSON(t)["compiled"])

	// The default mode is overlay.
	require.Equal(t, "overlay", e.createBranchReq("acme", admin, map[string]any{"name": "plain", "from": "main"}).Mode)

	// A copy reads through until its job has copied main's rows.
	c := e.createBranchReq("acme", admin, map[string]any{"name": "copy-1", "from": "main", "mode": "copy"})
	require.Equal(t, "copy", c.Mode)
	require.Equal(t, "copying", c.State)
	require.Equal(t, head, *c.ForkRevision)
	ready := e.waitReady("acme", "copy-1", admin)
	require.Equal(t, "done", ready.Progress["phase"])
	require.Equal(t, 12, ready.Own.Records)
	require.NotNil(t, ready.Job)
	require.Equal(t, "store.materialize", ready.Job.Kind)
	e.sameRows("acme", "main", "copy-1", e.revSeq(head))
	rec := e.must(http.StatusOK, "GET", branchPath("acme", "copy-1")+"/records/S-1", admin, nil).JSON(t)
	require.Equal(t, "FR", rec["values"].(map[string]any)["country"])

	// main moves on; a copy forked at the earlier head still holds main as
	// of then, rebuilt from history where main's rows changed since.
	later := e.commit("acme", "main", admin, commitBody("later",
		map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "IT", "tier": "silver"}},
		map[string]any{"op": "unlink", "relation": "supplied_by", "from": "P-3", "to": "S-3"},
		map[string]any{"op": "unlink", "relation": "supplied_by", "from": "P-4", "to": "S-4"},
		map[string]any{"op": "delete", "key": "P-4"},
		put("Supplier", "S-99", map[string]any{"name": "Newcomer"})))
	c2 := e.createBranchReq("acme", admin, map[string]any{"name": "copy-2", "from": "main", "mode": "copy", "at": head})
	require.Equal(t, head, *c2.ForkRevision)
	e.waitReady("acme", "copy-2", admin)
	e.sameRows("acme", "copy-1", "copy-2", e.revSeq(later))
	e.must(http.StatusNotFound, "GET", branchPath("acme", "copy-2")+"/records/S-99", admin, nil)
	rec = e.must(http.StatusOK, "GET", branchPath("acme", "copy-2")+"/records/S-1", admin, nil).JSON(t)
	require.Equal(t, "FR", rec["values"].(map[string]any)["country"])

	// A copy is writable at once and its commits move its head only.
	c3 := e.createBranchReq("acme", admin, map[string]any{"name": "copy-3", "from": "main", "mode": "copy"})
	require.Equal(t, later, *c3.Head)
	rev := e.commit("acme", "copy-3", admin, commitBody("own", put("Supplier", "S-1", map[string]any{"name": "Mine"})))
	e.waitReady("acme", "copy-3", admin)
	rec = e.must(http.StatusOK, "GET", branchPath("acme", "copy-3")+"/records/S-1", admin, nil).JSON(t)
	require.Equal(t, "Mine", rec["title"])
	require.Equal(t, rev, e.head("acme", "copy-3", admin))
	require.Equal(t, later, e.head("acme", "main", admin))

	// The list shows every branch with its base and own rows.
	var page struct {
		Branches []branchInfo `json:"branches"`
		Next     string       `json:"next"`
	}
	e.must(http.StatusOK, "GET", branchesPath("acme"), admin, nil).Decode(t, &page)
	names := []string{}
	for _, b := range page.Branches {
		names = append(names, b.Name)
		require.NotNil(t, b.Own)
	}
	require.Equal(t, []string{"agent/scout-7", "copy-1", "copy-2", "copy-3", "main", "plain"}, names)
	e.must(http.StatusOK, "GET", branchesPath("acme")+"?limit=2", admin, nil).Decode(t, &page)
	require.Len(t, page.Branches, 2)
	require.Equal(t, "copy-1", page.Next)
	e.must(http.StatusOK, "GET", branchesPath("acme")+"?limit=2&after=copy-1", admin, nil).Decode(t, &page)
	require.Equal(t, "copy-2", page.Branches[0].Name)
}

func TestBranchErrors(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	first := e.commit("acme", "main", admin, commitBody("one", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	// A compatible schema change after the commit: forking before it is refused.
	e.putSchema("acme", "main", admin, strings.Replace(supplySchema, `{"name": "weight_kg", "type": "number"}`,
		`{"name": "weight_kg", "type": "number"}, {"name": "color", "type": "text"}`, 1))
	e.createBranchReq("acme", admin, map[string]any{"name": "side", "from": "main"})
	sideRev := e.commit("acme", "side", admin, commitBody("side", put("Supplier", "S-2", map[string]any{"name": "Side"})))
	reader := e.token("acme", "reader", "reader")
	scout := e.token("acme", "scout", "writer", "agent/scout/*")
	p := branchesPath("acme")

	long := strings.Repeat("a", 129)
	for _, c := range []struct {
		name   string
		token  string
		body   any
		status int
		field  string
	}{
		{"no token", "", map[string]any{"name": "x", "from": "main"}, 401, ""},
		{"reader", reader, map[string]any{"name": "x", "from": "main"}, 403, ""},
		{"writer outside its patterns", scout, map[string]any{"name": "other", "from": "main"}, 403, ""},
		{"empty body", admin, "", 400, "body"},
		{"not JSON", admin, "{", 400, "body"},
		{"unknown field", admin, map[string]any{"name": "x", "from": "main", "bogus": 1}, 400, "body"},
		{"wrong type", admin, map[string]any{"name": 7, "from": "main"}, 400, "name"},
		{"NUL", admin, `{"name": "a\u0000b", "from": "main"}`, 400, "body"},
		{"missing name", admin, map[string]any{"from": "main"}, 422, "name"},
		{"missing from", admin, map[string]any{"name": "x"}, 422, "from"},
		{"double slash", admin, map[string]any{"name": "a//b", "from": "main"}, 422, "name"},
		{"dot dot", admin, map[string]any{"name": "a/../b", "from": "main"}, 422, "name"},
		{"trailing slash", admin, map[string]any{"name": "a/", "from": "main"}, 422, "name"},
		{"leading dash", admin, map[string]any{"name": "-a", "from": "main"}, 422, "name"},
		{"too long", admin, map[string]any{"name": long, "from": "main"}, 422, "name"},
		{"quote", admin, map[string]any{"name": `a'b"c`, "from": "main"}, 422, "name"},
		{"percent and backslash", admin, map[string]any{"name": `a%b\c`, "from": "main"}, 422, "name"},
		{"unicode", admin, map[string]any{"name": "zweig-ä", "from": "main"}, 422, "name"},
		{"bad from", admin, map[string]any{"name": "x", "from": "a//b"}, 422, "from"},
		{"bad mode", admin, map[string]any{"name": "x", "from": "main", "mode": "mirror"}, 422, "mode"},
		{"bad at", admin, map[string]any{"name": "x", "from": "main", "at": "a\nb"}, 422, "at"},
		{"missing base", admin, map[string]any{"name": "x", "from": "nope"}, 404, ""},
		{"missing revision", admin, map[string]any{"name": "x", "from": "main", "at": "01HZZZZZZZZZZZZZZZZZZZZZZZ"}, 404, ""},
		{"hostile revision", admin, map[string]any{"name": "x", "from": "main", "at": `'; DROP TABLE refs; --`}, 404, ""},
		{"revision of another branch", admin, map[string]any{"name": "x", "from": "main", "at": sideRev}, 404, ""},
		{"before the schema change", admin, map[string]any{"name": "x", "from": "main", "at": first}, 422, "at"},
		{"name taken", admin, map[string]any{"name": "side", "from": "main"}, 409, ""},
		{"main taken", admin, map[string]any{"name": "main", "from": "side"}, 409, ""},
	} {
		t.Run(c.name, func(t *testing.T) {
			before := e.rowCounts()
			r := e.do("POST", p, c.token, c.body)
			require.Equal(t, c.status, r.Status, "%s", r.Body)
			require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
			prob := r.JSON(t)
			require.NotEmpty(t, prob["detail"])
			if c.field != "" {
				require.Equal(t, c.field, prob["errors"].([]any)[0].(map[string]any)["field"], "%s", r.Body)
			}
			require.Equal(t, before, e.rowCounts(), "nothing written")
		})
	}
	// The side branch's Revision is visible from side, and from a branch of side.
	e.createBranchReq("acme", admin, map[string]any{"name": "side-2", "from": "side", "at": sideRev})

	// A scoped writer creates and deletes branches matching its patterns,
	// reads main, and cannot touch the others.
	sb := e.createBranchReq("acme", scout, map[string]any{"name": "agent/scout/1", "from": "main"})
	require.Equal(t, "main", *sb.Base)
	e.must(http.StatusOK, "GET", branchPath("acme", "main")+"/records/S-1", scout, nil)
	e.must(http.StatusOK, "GET", branchPath("acme", "main"), scout, nil)
	e.must(http.StatusOK, "GET", branchPath("acme", "side"), reader, nil)
	e.must(http.StatusForbidden, "DELETE", branchPath("acme", "side"), scout, nil)
	e.must(http.StatusForbidden, "DELETE", branchPath("acme", "side"), reader, nil)
	e.must(http.StatusUnauthorized, "DELETE", branchPath("acme", "side"), "", nil)
	e.must(http.StatusAccepted, "DELETE", branchPath("acme", "agent/scout/1"), scout, nil)

	// Deletion conflicts: main, and a branch others read through.
	prob := e.must(http.StatusConflict, "DELETE", branchPath("acme", "main"), admin, nil).JSON(t)
	require.Contains(t, prob["detail"], "main")
	prob = e.must(http.StatusConflict, "DELETE", branchPath("acme", "side"), admin, nil).JSON(t)
	require.Contains(t, prob["detail"], `"side-2"`)
	e.must(http.StatusNotFound, "DELETE", branchPath("acme", "nope"), admin, nil)
	e.must(http.StatusBadRequest, "DELETE", branchPath("acme", "a..b"), admin, nil)
	e.must(http.StatusBadRequest, "DELETE", branchPath("acme", "side")+"?force=1", admin, nil)
	e.must(http.StatusBadRequest, "GET", branchPath("acme", "a//b"), admin, nil)
	e.must(http.StatusNotFound, "GET", branchPath("acme", "nope"), admin, nil)
}

func TestDeleteBranch(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	e.seedSupply("acme", admin, 5)
	e.createBranchReq("acme", admin, map[string]any{"name": "work", "from": "main", "mode": "copy"})
	e.waitReady("acme", "work", admin)
	e.must(http.StatusCreated, "POST", branchPath("acme", "work")+"/commits", admin,
		commitBody("own", put("Supplier", "S-50", map[string]any{"name": "Own"})), "Idempotency-Key", "work-1")
	id := e.branchID("acme", "work")
	mainBefore := e.rowCounts()

	r := e.must(http.StatusAccepted, "DELETE", branchPath("acme", "work"), admin, nil).JSON(t)
	require.Equal(t, "deleting", r["state"])
	// Gone for reads, commits and deletes at once.
	e.must(http.StatusNotFound, "GET", branchPath("acme", "work"), admin, nil)
	e.must(http.StatusNotFound, "GET", branchPath("acme", "work")+"/records/S-1", admin, nil)
	e.must(http.StatusNotFound, "POST", branchPath("acme", "work")+"/commits", admin,
		commitBody("late", put("Supplier", "S-51", map[string]any{"name": "Late"})))
	e.must(http.StatusNotFound, "DELETE", branchPath("acme", "work"), admin, nil)
	e.waitGone("acme", "work")
	for _, tbl := range []string{"mat_records", "mat_links", "mat_history", "mat_link_history", "mat_lexicon", "idempotency_keys", "schemas",
		"mat_counts", "mat_count_changes"} {
		var n int
		require.NoError(t, e.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM `+tbl+` WHERE branch_id = $1`, id).Scan(&n))
		require.Zero(t, n, tbl)
	}
	after := e.rowCounts()
	require.Less(t, after["mat_records"], mainBefore["mat_records"])
	// The name is free again.
	e.createBranchReq("acme", admin, map[string]any{"name": "work", "from": "main"})
}

func TestDeleteBranchWhileReading(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	e.seedSupply("acme", admin, 20)
	e.createBranchReq("acme", admin, map[string]any{"name": "busy", "from": "main", "mode": "copy"})
	e.waitReady("acme", "busy", admin)
	paths := []string{
		branchPath("acme", "busy") + "/records/S-3",
		branchPath("acme", "busy") + "/records?kind=Supplier&limit=5",
		branchPath("acme", "busy"),
		branchPath("acme", "busy") + "/schema",
		branchPath("acme", "busy") + "/revisions",
	}
	deleted := make(chan struct{})
	var wg sync.WaitGroup
	statuses := make([][]int, len(paths))
	for i, p := range paths {
		wg.Add(1)
		go func() {
			defer wg.Done()
			// Read until a read after the deletion answered 404.
			for n := 0; n < 2000; n++ {
				select {
				case <-deleted:
					r := e.doNoFail("GET", p, admin, nil)
					statuses[i] = append(statuses[i], r.Status)
					if r.Status == http.StatusNotFound {
						return
					}
				default:
					statuses[i] = append(statuses[i], e.doNoFail("GET", p, admin, nil).Status)
				}
			}
		}()
	}
	e.must(http.StatusAccepted, "DELETE", branchPath("acme", "busy"), admin, nil)
	close(deleted)
	wg.Wait()
	for i, ss := range statuses {
		require.NotEmpty(t, ss)
		for _, s := range ss {
			require.Contains(t, []int{http.StatusOK, http.StatusNotFound}, s, "%s: %v", paths[i], ss)
		}
		require.Equal(t, http.StatusNotFound, ss[len(ss)-1], paths[i])
	}
	e.waitGone("acme", "busy")
}

func TestBranchIsolation(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	adminA := e.withSupply("alpha")
	adminB := e.withSupply("beta")
	e.seedSupply("alpha", adminA, 2)
	e.createBranchReq("alpha", adminA, map[string]any{"name": "secret", "from": "main", "mode": "copy"})
	e.waitReady("alpha", "secret", adminA)
	writerB := e.token("beta", "writer", "writer")
	for _, tok := range []string{adminB, writerB} {
		for _, c := range []struct {
			method, path string
			body         any
		}{
			{"GET", branchesPath("alpha"), nil},
			{"POST", branchesPath("alpha"), map[string]any{"name": "x", "from": "secret"}},
			{"GET", branchPath("alpha", "secret"), nil},
			{"DELETE", branchPath("alpha", "secret"), nil},
			{"GET", branchPath("alpha", "secret") + "/records/S-1", nil},
			{"GET", branchPath("beta", "secret"), nil},
			{"DELETE", branchPath("beta", "secret"), nil},
			{"GET", branchPath("beta", "secret") + "/records/S-1", nil},
			{"POST", branchesPath("beta"), map[string]any{"name": "x", "from": "secret"}},
		} {
			r := e.do(c.method, c.path, tok, c.body)
			require.Equal(t, http.StatusNotFound, r.Status, "%s %s: %s", c.method, c.path, r.Body)
			require.NotContains(t, string(r.Body), "S-1")
		}
		var page struct {
			Branches []branchInfo `json:"branches"`
		}
		e.must(http.StatusOK, "GET", branchesPath("beta"), tok, nil).Decode(t, &page)
		require.Len(t, page.Branches, 1)
		require.Equal(t, "main", page.Branches[0].Name)
	}
	// A name used in alpha is free in beta.
	e.createBranchReq("beta", adminB, map[string]any{"name": "secret", "from": "main"})
	e.must(http.StatusOK, "GET", branchPath("alpha", "secret"), adminA, nil)
}

// TestListBranchesWithoutOwnRows: own=false lists the branches without
// their own-row counts; another value is 400 naming own.
func TestListBranchesWithoutOwnRows(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	e.seedSupply("acme", admin, 3)
	e.createBranchReq("acme", admin, map[string]any{"name": "ov", "from": "main"})
	for _, c := range []struct {
		query   string
		wantOwn bool
	}{
		{"", true}, {"?own=true", true}, {"?own=false", false}, {"?own=false&limit=1&after=main", false},
	} {
		var page struct {
			Branches []map[string]any `json:"branches"`
		}
		e.must(http.StatusOK, "GET", branchesPath("acme")+c.query, admin, nil).Decode(t, &page)
		require.NotEmpty(t, page.Branches, c.query)
		for _, b := range page.Branches {
			_, has := b["own"]
			require.Equal(t, c.wantOwn, has, "%s: %v", c.query, b["name"])
			require.NotEmpty(t, b["state"], c.query)
		}
	}
	r := e.must(http.StatusBadRequest, "GET", branchesPath("acme")+"?own=no", admin, nil)
	require.Contains(t, r.JSON(t)["detail"], "own")
}
