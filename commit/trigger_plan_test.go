package commit_test

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
)

// TestPostingsTriggerPlansEachUpdate: the postings trigger's first question
// on an update (did any row's search vector or deletion change?) joins the
// statement's transition tables with a plan made for their row counts. A
// plan kept for the session from a first update of no row is a nested loop,
// and on a later update of n rows it compares n² pairs of rows: the
// connection's first update here touches no row, the second 2,000, and the
// plans auto_explain reports for the join of the second must not be a
// nested loop.
func TestPostingsTriggerPlansEachUpdate(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	const n = 2000
	cs := make([]commit.Change, 0, n)
	for i := range n {
		cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i), fmt.Sprintf(`{"name": "Supplier %d", "tier": "gold"}`, i)))
	}
	b.commit(t, cs...)

	conn, plans := autoExplain(t, b, true)
	// joins returns the plans reported so far of the trigger's join, and
	// forgets every plan.
	joins := func() []string {
		var out []string
		for _, p := range plans() {
			if strings.Contains(p, "JOIN old_rows o") {
				out = append(out, p)
			}
		}
		return out
	}
	tag, err := conn.Exec(b.ctx, `UPDATE mat_records SET "values" = "values" WHERE domain_id = $1 AND key = 'no such key'`, b.domain)
	require.NoError(t, err)
	require.Zero(t, tag.RowsAffected())
	require.NotEmpty(t, joins(), "the trigger ran its join on the update of no row")

	tag, err = conn.Exec(b.ctx, `UPDATE mat_records SET "values" = "values" || '{"tier": "silver"}' WHERE domain_id = $1 AND kind = 'Supplier'`, b.domain)
	require.NoError(t, err)
	require.EqualValues(t, n, tag.RowsAffected())
	got := joins()
	require.NotEmpty(t, got, "the trigger ran its join on the update of %d rows", n)
	for _, p := range got {
		require.NotContains(t, p, "Nested Loop", "the join of %d rows' transition tables:\n%s", n, p)
	}
}
