package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/migrations"
)

// requireDownDrops migrates a fresh database, asserts that query (one text
// column: the objects a migration made, ordered) lists want, then runs the
// down migration file down in a transaction and asserts it lists nothing.
func requireDownDrops(t *testing.T, query string, want []string, down string) {
	t.Helper()
	ctx := context.Background()
	s := pgtest.Store(t)
	forms := func(q pgx.Tx) []string {
		rows, err := q.Query(ctx, query)
		require.NoError(t, err)
		out, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		return out
	}
	tx, err := s.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	require.Equal(t, want, forms(tx))

	sql, err := migrations.FS.ReadFile(down)
	require.NoError(t, err)
	_, err = tx.Exec(ctx, string(sql))
	require.NoError(t, err)
	require.Empty(t, forms(tx))
}
