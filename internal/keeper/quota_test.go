package keeper_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
)

// problemField is the field of a problem document's first error.
func problemField(t *testing.T, r *response) string {
	t.Helper()
	var p struct {
		Errors []struct{ Field string } `json:"errors"`
	}
	r.Decode(t, &p)
	require.NotEmpty(t, p.Errors, r.String())
	return p.Errors[0].Field
}

// TestQuotas: branches, copies in flight and indexed Attributes are bounded
// per Domain; the refusal names the quota and writes nothing; another
// Domain is not limited by the first's use.
func TestQuotas(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) {
		c.Quota.Branches = 3 // main and two more
		c.Quota.CopiesInFlight = 1
		c.Quota.IndexedAttributes = 3 // the supply schema has vat, country and maker
	})
	admin := e.withSupply("alpha")
	betaAdmin := e.withSupply("beta")

	// Branches: main + 2.
	e.createBranchReq("alpha", admin, map[string]any{"name": "one", "from": "main"})
	e.createBranchReq("alpha", admin, map[string]any{"name": "two", "from": "main"})
	before := e.rowCounts()
	r := e.must(http.StatusTooManyRequests, "POST", branchesPath("alpha"), admin, map[string]any{"name": "three", "from": "main"})
	require.Equal(t, "quota.branches", problemField(t, r))
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	require.Equal(t, before, e.rowCounts(), "nothing written")
	e.createBranchReq("beta", betaAdmin, map[string]any{"name": "one", "from": "main"})
	// Deleting frees a slot once the delete job has removed the branch
	// (a branch being deleted still holds its rows, and counts).
	e.must(http.StatusAccepted, "DELETE", branchPath("alpha", "one"), admin, nil)
	e.waitFor("branch one gone", func() bool {
		var n int
		require.NoError(t, e.Store.Pool.QueryRow(t.Context(), `SELECT count(*) FROM refs WHERE name = 'one'`).Scan(&n))
		return n == 1 // beta's
	})
	e.createBranchReq("alpha", admin, map[string]any{"name": "three", "from": "main"})

	// Indexed Attributes: a fourth is refused with 422 naming the quota.
	four := strings.Replace(supplySchema, `{"name": "weight_kg", "type": "number"}`, `{"name": "weight_kg", "type": "number", "indexed": true}`, 1)
	require.NotEqual(t, supplySchema, four)
	r = e.must(http.StatusUnprocessableEntity, "PUT", branchPath("alpha", "main")+"/schema", admin, four)
	require.Equal(t, "quota.indexed_attributes", problemField(t, r))
	require.Contains(t, r.String(), "4 indexed")
}

// TestCopyQuota: one copy still copying takes the Domain's only slot.
func TestCopyQuota(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Quota.CopiesInFlight = 1 })
	admin := e.withSupply("alpha")
	changes := make([]map[string]any, 0, 300)
	for i := range 300 {
		changes = append(changes, put("Supplier", fmt.Sprintf("S-%d", i), map[string]any{"name": fmt.Sprintf("Supplier %d", i)}))
	}
	e.commit("alpha", "main", admin, commitBody("seed", changes...))
	// Hold the copy in 'copying' by setting the state as the owner (the
	// job may finish quickly); the quota counts refs in that state.
	e.createBranchReq("alpha", admin, map[string]any{"name": "c1", "from": "main", "mode": "overlay"})
	_, err := e.Store.Pool.Exec(t.Context(), `UPDATE refs SET state = 'copying' WHERE name = 'c1'`)
	require.NoError(t, err)
	r := e.must(http.StatusTooManyRequests, "POST", branchesPath("alpha"), admin, map[string]any{"name": "c2", "from": "main", "mode": "copy"})
	require.Equal(t, "quota.copies_in_flight", problemField(t, r))
	// An overlay is not a copy.
	e.createBranchReq("alpha", admin, map[string]any{"name": "o1", "from": "main"})
	_, err = e.Store.Pool.Exec(t.Context(), `UPDATE refs SET state = 'ready' WHERE name = 'c1'`)
	require.NoError(t, err)
	e.createBranchReq("alpha", admin, map[string]any{"name": "c2", "from": "main", "mode": "copy"})
}
