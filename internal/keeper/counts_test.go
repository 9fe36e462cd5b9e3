package keeper_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"net/url"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/migrations"
)

// counts are a branch's exact Record counts: of every Kind ("") and of
// each Kind named.
type counts map[string]int

// requireCounts reads ?count=true for every Kind of want on branch (at a
// Revision when at is set) and requires each to be exact and as wanted.
func (e *env) requireCounts(domain, branch, token, at string, want counts, msg string) {
	e.t.Helper()
	for kind, n := range want {
		q := url.Values{"count": {"true"}, "limit": {"1"}}
		if kind != "" {
			q.Set("kind", kind)
		}
		if at != "" {
			q.Set("at", at)
		}
		got := e.must(http.StatusOK, "GET", branchPath(domain, branch)+"/records?"+q.Encode(), token, nil).JSON(e.t)["count"]
		require.Equal(e.t, map[string]any{"records": float64(n), "exact": true}, got, "%s: %s of Kind %q", msg, branch, kind)
	}
}

// counterRows are the rows of a branch in the count tables (owner).
func (e *env) counterRows(id int32) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.Store.Pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM mat_counts WHERE branch_id = $1) + (SELECT count(*) FROM mat_count_changes WHERE branch_id = $1)`,
		id).Scan(&n))
	return n
}

func supplier(key, name string) map[string]any {
	return put("Supplier", key, map[string]any{"name": name})
}

func del(key string) map[string]any { return map[string]any{"op": "delete", "key": key} }

// TestRecordCounts: the counts are exact after every kind of change, on
// main, an overlay (the base moving on after the fork), copies (at the
// head and at a past Revision), after a merge and at past Revisions, and a
// deleted branch's counters go with it.
func TestRecordCounts(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	type step struct {
		name   string
		branch string
		// changes to commit on branch (none: the step only reads)
		changes []map[string]any
		want    map[string]counts // branch -> counts after the step
	}
	revs := map[string]string{} // step name -> the Revision it made
	steps := []step{
		{"create", "main", []map[string]any{supplier("S-1", "Acme"), supplier("S-2", "Bolt"), supplier("S-3", "Cog"),
			put("Part", "P-1", map[string]any{"name": "Hex", "maker": "S-1"})},
			map[string]counts{"main": {"": 4, "Supplier": 3, "Part": 1, "Nothing": 0}}},
		{"update", "main", []map[string]any{supplier("S-1", "Acme AG"),
			{"op": "patch", "key": "P-1", "values": map[string]any{"name": "Hex bolt"}}},
			map[string]counts{"main": {"": 4, "Supplier": 3, "Part": 1}}},
		{"delete", "main", []map[string]any{del("S-3")}, map[string]counts{"main": {"": 3, "Supplier": 2}}},
		{"re-create", "main", []map[string]any{supplier("S-3", "Cog again"), put("Part", "P-2", map[string]any{"name": "Nut"})},
			map[string]counts{"main": {"": 5, "Supplier": 3, "Part": 2}}},
		{"change of Kind", "main", []map[string]any{del("P-2"), supplier("P-2", "Nut Inc")},
			map[string]counts{"main": {"": 5, "Supplier": 4, "Part": 1}}},
	}
	run := func(steps []step) {
		t.Helper()
		for _, s := range steps {
			if len(s.changes) > 0 {
				revs[s.name] = e.commit("acme", s.branch, admin, commitBody(s.name, s.changes...))
			}
			for b, want := range s.want {
				e.requireCounts("acme", b, admin, "", want, s.name)
			}
		}
	}
	run(steps)

	// Forks: an overlay, a copy at the head, a copy at a past Revision.
	e.createBranchReq("acme", admin, map[string]any{"name": "ov", "from": "main", "mode": "overlay"})
	e.createBranchReq("acme", admin, map[string]any{"name": "cp", "from": "main", "mode": "copy"})
	e.createBranchReq("acme", admin, map[string]any{"name": "old", "from": "main", "mode": "copy", "at": revs["delete"]})
	run([]step{
		{"forked", "", nil, map[string]counts{
			"ov": {"": 5, "Supplier": 4, "Part": 1}, "cp": {"": 5, "Supplier": 4}, "old": {"": 3, "Supplier": 2, "Part": 1}}},
		// main moves on: the forks read main as of their fork.
		{"main moves on", "main", []map[string]any{supplier("S-4", "Dyn"), del("S-2")}, map[string]counts{
			"main": {"": 5, "Supplier": 4}, "ov": {"": 5, "Supplier": 4}, "cp": {"": 5, "Supplier": 4}, "old": {"": 3}}},
		// An overlay updating a base Record adds none; deleting one
		// subtracts it; its own Records add.
		{"overlay updates", "ov", []map[string]any{supplier("S-1", "Acme Overlay"),
			{"op": "patch", "key": "P-1", "values": map[string]any{"weight_kg": 2}}},
			map[string]counts{"ov": {"": 5, "Supplier": 4, "Part": 1}}},
		{"overlay deletes and creates", "ov", []map[string]any{del("S-3"), supplier("S-10", "Own"), supplier("S-11", "Own 2")},
			map[string]counts{"ov": {"": 6, "Supplier": 5, "Part": 1}, "main": {"": 5, "Supplier": 4}}},
		{"overlay re-creates", "ov", []map[string]any{supplier("S-3", "Back")},
			map[string]counts{"ov": {"": 7, "Supplier": 6}}},
	})
	e.waitReady("acme", "cp", admin)
	e.waitReady("acme", "old", admin)
	run([]step{
		{"copies copied", "", nil, map[string]counts{"cp": {"": 5, "Supplier": 4, "Part": 1}, "old": {"": 3, "Supplier": 2, "Part": 1}}},
		{"copy commits", "cp", []map[string]any{del("S-1"), del("P-1")}, map[string]counts{"cp": {"": 3, "Supplier": 3, "Part": 0}}},
	})

	// A merge is a commit: main gets the overlay's changes (S-3 deleted
	// and re-created, S-10 and S-11 added; S-2 stays deleted).
	e.must(http.StatusCreated, "POST", branchPath("acme", "main")+"/merges", admin, map[string]any{"from": "ov", "default": "source"})
	run([]step{{"merged", "", nil, map[string]counts{"main": {"": 7, "Supplier": 6, "Part": 1}, "ov": {"": 7}}}})

	// As of past Revisions: main's own, the overlay's, and main's through
	// the overlay (before its fork).
	for _, c := range []struct {
		branch, at string
		want       counts
	}{
		{"main", revs["create"], counts{"": 4, "Supplier": 3, "Part": 1}},
		{"main", revs["delete"], counts{"": 3, "Supplier": 2}},
		{"main", revs["change of Kind"], counts{"": 5, "Supplier": 4, "Part": 1}},
		{"main", revs["main moves on"], counts{"": 5, "Supplier": 4}},
		{"ov", revs["overlay updates"], counts{"": 5, "Supplier": 4}},
		{"ov", revs["overlay deletes and creates"], counts{"": 6, "Supplier": 5}},
		{"ov", revs["re-create"], counts{"": 5, "Supplier": 3, "Part": 2}},
		{"cp", revs["copy commits"], counts{"": 3}},
		{"cp", revs["delete"], counts{"": 3, "Supplier": 2}},
	} {
		e.requireCounts("acme", c.branch, admin, c.at, c.want, "as of a Revision")
	}

	// Deleting a branch removes its counters; a new branch of the name
	// starts from its base.
	cp := e.branchID("acme", "cp")
	require.Positive(t, e.counterRows(cp))
	e.must(http.StatusAccepted, "DELETE", branchPath("acme", "cp"), admin, nil)
	e.waitGone("acme", "cp")
	require.Zero(t, e.counterRows(cp))
	e.createBranchReq("acme", admin, map[string]any{"name": "cp", "from": "main", "mode": "copy"})
	e.requireCounts("acme", "cp", admin, "", counts{"": 7, "Supplier": 6, "Part": 1}, "re-created copy")
	e.requireCounts("acme", "main", admin, "", counts{"": 7, "Supplier": 6, "Part": 1}, "main after the delete")

	// Deleting the Domain takes its counters along (the owner's SQL: no
	// API deletes Domains).
	var domainID int32
	require.NoError(t, e.Store.Pool.QueryRow(context.Background(), `SELECT id FROM domains WHERE name = 'acme'`).Scan(&domainID))
	_, err := e.Store.Pool.Exec(context.Background(), `DELETE FROM domains WHERE id = $1`, domainID)
	require.NoError(t, err)
	var left int
	require.NoError(t, e.Store.Pool.QueryRow(context.Background(), `SELECT
		(SELECT count(*) FROM mat_counts WHERE domain_id = $1) + (SELECT count(*) FROM mat_count_changes WHERE domain_id = $1)`,
		domainID).Scan(&left))
	require.Zero(t, left)
}

// TestRecordCountsBeyondTheWalk: past the 10,000 Records a walk would
// count, the count is still exact, on the branch and on an overlay of it.
func TestRecordCountsBeyondTheWalk(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("big")
	const perCommit, commits = 3400, 3
	for c := range commits {
		changes := make([]map[string]any, 0, perCommit)
		for i := range perCommit {
			changes = append(changes, supplier(fmt.Sprintf("S-%d-%d", c, i), "Supplier"))
		}
		e.commit("big", "main", admin, commitBody("load", changes...))
	}
	e.requireCounts("big", "main", admin, "", counts{"": 10200, "Supplier": 10200, "Part": 0}, "loaded")
	e.createBranchReq("big", admin, map[string]any{"name": "ov", "from": "main"})
	e.commit("big", "ov", admin, commitBody("one less", del("S-0-0")))
	e.requireCounts("big", "ov", admin, "", counts{"": 10199}, "overlay")
}

// TestRecordCountsIsolation: a token of one Domain reads no count of
// another, through any parameter, and the count function reads only the
// Domain in scope.
func TestRecordCountsIsolation(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	adminA := e.withSupply("alpha")
	adminB := e.withSupply("beta")
	revA := e.commit("alpha", "main", adminA, commitBody("a", supplier("S-1", "A1"), supplier("S-2", "A2")))
	e.createBranchReq("alpha", adminA, map[string]any{"name": "secret", "from": "main"})
	e.commit("beta", "main", adminB, commitBody("b", supplier("S-1", "B1")))
	for _, c := range []struct {
		path   string
		status int
	}{
		{branchPath("alpha", "main") + "/records?count=true&kind=Supplier", http.StatusNotFound},
		{branchPath("alpha", "secret") + "/records?count=true", http.StatusNotFound},
		{branchPath("beta", "secret") + "/records?count=true", http.StatusNotFound},
		{branchPath("beta", "main") + "/records?count=true&at=" + revA, http.StatusNotFound},
	} {
		r := e.do("GET", c.path, adminB, nil)
		require.Equal(t, c.status, r.Status, "%s: %s", c.path, r.String())
		require.NotContains(t, r.String(), `"records":2`, c.path)
	}
	e.requireCounts("beta", "main", adminB, "", counts{"": 1, "Supplier": 1}, "beta's own")

	// SQL as lorebase_app with beta in scope: lb_count answers beta's
	// branches only, and the counter tables show beta's rows only.
	var betaID int32
	ctx := context.Background()
	require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT id FROM domains WHERE name = 'beta'`).Scan(&betaID))
	err := e.Store.InDomain(ctx, betaID, func(ctx context.Context, tx pgx.Tx) error {
		var n int64
		if err := tx.QueryRow(ctx, `SELECT lb_count('main', 'Supplier')`).Scan(&n); err != nil {
			return err
		}
		require.Equal(t, int64(1), n)
		return nil
	})
	require.NoError(t, err)
	err = e.Store.InDomain(ctx, betaID, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT lb_count('secret', '')`)
		return err
	})
	require.ErrorContains(t, err, "branch not found", "alpha's branch")
	err = e.Store.InDomain(ctx, betaID, func(ctx context.Context, tx pgx.Tx) error {
		var foreign int
		if err := tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM mat_counts WHERE domain_id <> $1)
			+ (SELECT count(*) FROM mat_count_changes WHERE domain_id <> $1)`, betaID).Scan(&foreign); err != nil {
			return err
		}
		require.Zero(t, foreign)
		return nil
	})
	require.NoError(t, err)
}

// TestMigrationFillsRecordCounts: migration 0014 on a database holding
// branches (main, an overlay whose base moved on, a copy) fills counters
// that say what a walk of each branch counts.
func TestMigrationFillsRecordCounts(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	e.commit("acme", "main", admin, commitBody("seed", supplier("S-1", "A"), supplier("S-2", "B"), supplier("S-3", "C"),
		put("Part", "P-1", map[string]any{"name": "Hex", "maker": "S-1"})))
	e.createBranchReq("acme", admin, map[string]any{"name": "ov", "from": "main"})
	e.createBranchReq("acme", admin, map[string]any{"name": "cp", "from": "main", "mode": "copy"})
	e.waitReady("acme", "cp", admin)
	e.commit("acme", "main", admin, commitBody("on", del("S-2"), supplier("S-4", "D")))
	e.commit("acme", "ov", admin, commitBody("own", del("S-3"), supplier("S-1", "A2"), supplier("S-9", "Z")))
	e.commit("acme", "cp", admin, commitBody("own", del("P-1")))

	ctx := context.Background()
	read := func(name string) []byte {
		b, err := fs.ReadFile(migrations.FS, name)
		require.NoError(t, err)
		return b
	}
	// Back to before 0014, then 0014 again and its functions.
	for _, sql := range []string{string(read("0014_record_counts.down.sql")), string(read("0014_record_counts.up.sql")),
		string(read("functions/lb_counts_at.sql")), string(read("functions/lb_count.sql")),
		`GRANT EXECUTE ON FUNCTION lb_count(text, text, bigint), lb_counts_at(integer, integer, bigint, text, integer) TO lorebase_app`} {
		_, err := e.Store.Pool.Exec(ctx, sql)
		require.NoError(t, err)
	}
	var domainID int32
	require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT id FROM domains WHERE name = 'acme'`).Scan(&domainID))
	for _, b := range []string{"main", "ov", "cp"} {
		for _, kind := range []string{"", "Supplier", "Part"} {
			var counted *int64
			var walked int64
			err := e.Store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
				return tx.QueryRow(ctx, `SELECT lb_count($1, $2), (SELECT count(*) FROM lb_page($1, $2, '', 10001))`, b, kind).Scan(&counted, &walked)
			})
			require.NoError(t, err)
			require.NotNil(t, counted, "%s %q", b, kind)
			require.Equal(t, walked, *counted, "%s %q", b, kind)
		}
	}
	// The walk above holds the expected numbers too.
	e.requireCounts("acme", "ov", admin, "", counts{"": 4, "Supplier": 3, "Part": 1}, "overlay after the migration")
	e.requireCounts("acme", "cp", admin, "", counts{"": 3, "Part": 0}, "copy after the migration")
}

// TestCountsAtReadBackCap: a count as of a past Revision reads back the
// count changes after it, and says nothing (NULL) when they are more than
// the cap, at the cap exactly the count.
func TestCountsAtReadBackCap(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("capped")
	for i := range 4 {
		e.commit("capped", "main", admin, commitBody(fmt.Sprintf("c%d", i), supplier(fmt.Sprintf("S-%d", i), "Name")))
	}
	ctx := context.Background()
	var d, b int32
	require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT r.domain_id, r.id FROM refs r JOIN domains x ON x.id = r.domain_id
		WHERE x.name = 'capped' AND r.name = 'main'`).Scan(&d, &b))
	var first, changes int64
	require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT min(seq), count(*) FILTER (WHERE seq > (SELECT min(seq) FROM mat_count_changes WHERE domain_id = $1 AND branch_id = $2))
		FROM mat_count_changes WHERE domain_id = $1 AND branch_id = $2`, d, b).Scan(&first, &changes))
	require.Equal(t, int64(3), changes, "one count change per later commit")
	for _, tc := range []struct {
		cap  int
		want *string
	}{
		{cap: 2, want: nil},
		{cap: 3, want: ptr(`{"Supplier": 1}`)},
		{cap: 10, want: ptr(`{"Supplier": 1}`)},
	} {
		var got *string
		require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT lb_counts_at($1, $2, $3, '', $4)::text`, d, b, first, tc.cap).Scan(&got))
		if tc.want == nil {
			require.Nil(t, got, "cap %d", tc.cap)
			continue
		}
		require.NotNil(t, got, "cap %d", tc.cap)
		require.JSONEq(t, *tc.want, *got, "cap %d", tc.cap)
	}
}
