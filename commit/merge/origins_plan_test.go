package merge_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestOriginsKeptPlanOfAnotherDomainProbesByKey: a merge reads the origin
// of each changed Record version from the history (merge.OriginsSQLForTest)
// on a pooled connection, whose kept generic plan may have been made under
// another Domain. Generic plans forced, the read runs first for a small
// Domain written after the statistics were taken, then for one of 20,000
// history rows: every node that ran on mat_history must name the key (with
// lb_domain() in its condition, as before, the plan made under the small
// Domain read the large one's history by the Domain alone).
func TestOriginsKeptPlanOfAnotherDomainProbesByKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	type domain struct{ id, branch int32 }
	// write gives a Domain one Revision (seq 1) and n history rows at it.
	write := func(name string, n int) domain {
		d, err := s.CreateDomain(ctx, name)
		require.NoError(t, err)
		out := domain{id: d.ID}
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&out.branch))
		_, err = s.Pool.Exec(ctx, `INSERT INTO revisions (domain_id, id, seq, number, branch_id, parents, author, message, hash, changes)
			VALUES ($1, $3 || '-rev', 1, 1, $2, '{}', 'alice', 'load', '\x00', '[]')`, out.id, out.branch, name)
		require.NoError(t, err)
		_, err = s.Pool.Exec(ctx, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, "values")
			SELECT $1, $2, 'K-' || i, 1, $4 || '-rev', 'put', 'Part', 'part ' || i, '{}' FROM generate_series(1, $3::int) i`,
			out.id, out.branch, n, name)
		require.NoError(t, err)
		return out
	}
	big := write("origins-big", 20000)
	_, err := s.Pool.Exec(ctx, `ANALYZE mat_history`)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `ANALYZE revisions`)
	require.NoError(t, err)
	small := write("origins-small", 2)

	conn, plans := pgtest.AutoExplainGeneric(t, s.Requests)
	origins := func(d domain, key string) int {
		n := 0
		require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if err := store.Scope(ctx, tx, d.id); err != nil {
				return err
			}
			rows, err := tx.Query(ctx, merge.OriginsSQLForTest, []int32{d.branch}, []string{key}, []int64{1}, d.id)
			if err != nil {
				return err
			}
			for rows.Next() {
				n++
			}
			return rows.Err()
		}))
		return n
	}
	require.Equal(t, 1, origins(small, "K-1"))
	plans()
	require.Equal(t, 1, origins(big, "K-1234"))
	ran := 0
	for _, p := range plans() {
		e, err := pgtest.ParseExplained(p)
		require.NoError(t, err)
		for _, n := range pgtest.NodesOn(e.Plan, "mat_history") {
			ran++
			require.Contains(t, n.IndexCond, "(key = ", "%s on %s: %s", n.Type, n.Index, e.Query)
		}
	}
	require.Positive(t, ran, "a node ran on mat_history")
}
