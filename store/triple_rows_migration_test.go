package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/migrations"
)

// TestSearchTripleRowsMigration: after migration 0029 lb_search_triples has
// one form (with p_pair) and the plateau read from its rows is
// lb_search_triple_rows, the forms before gone; the down migration drops
// the new forms, leaving the version before's files to create theirs.
func TestSearchTripleRowsMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	forms := func(q pgx.Tx) []string {
		rows, err := q.Query(ctx, `SELECT p.oid::regprocedure::text FROM pg_proc p
			WHERE p.proname IN ('lb_search_triples', 'lb_search_triple_rows', 'lb_search_triple_rows_sql',
			                    'lb_search_triple_plateau', 'lb_search_triple_plateau_sql')
			ORDER BY 1`)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	tx, err := s.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	require.Equal(t, []string{
		"lb_search_triple_rows(integer,integer,text[],integer[],real[],integer)",
		"lb_search_triple_rows_sql(integer,integer,text[],integer[],real[],integer)",
		"lb_search_triples(integer,integer,text[],integer,integer,integer,integer,integer,integer,integer)",
	}, forms(tx))

	down, err := migrations.FS.ReadFile("0029_search_triple_rows.down.sql")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, string(down))
	require.NoError(t, err)
	require.Empty(t, forms(tx))
}
