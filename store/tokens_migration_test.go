package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/migrations"
)

// TestSearchTokensIndexMigration: migration 0027 builds the GIN index of
// the score plateaus' tokens on every partition of mat_records, each with
// the 256 kB pending list of the other search indexes; its down migration
// drops the index and every function that reads it or builds it.
func TestSearchTokensIndexMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	var parts, bounded int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE c.reloptions @> ARRAY['gin_pending_list_limit=256'])
		FROM pg_inherits h JOIN pg_class c ON c.oid = h.inhrelid WHERE h.inhparent = 'mat_records_tokens_idx'::regclass`).Scan(&parts, &bounded))
	var partitions int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_inherits WHERE inhparent = 'mat_records'::regclass`).Scan(&partitions))
	require.Equal(t, partitions, parts, "one index a partition")
	require.Equal(t, parts, bounded, "every partition's index bounds its pending list")

	down, err := migrations.FS.ReadFile("0027_search_tokens.down.sql")
	require.NoError(t, err)
	tx, err := s.Pool.Begin(ctx)
	require.NoError(t, err)
	defer func() { _ = tx.Rollback(ctx) }()
	_, err = tx.Exec(ctx, string(down))
	require.NoError(t, err)
	rows, err := tx.Query(ctx, `SELECT p.oid::regprocedure::text FROM pg_proc p
		WHERE p.proname IN ('lb_search_token', 'lb_search_tokens', 'lb_search_triple_meet')
		   OR (p.proname IN ('lb_search_triple_top', 'lb_search_triple_top_sql') AND p.pronargs = 7)
		UNION ALL SELECT 'mat_records_tokens_idx' WHERE to_regclass('mat_records_tokens_idx') IS NOT NULL`)
	require.NoError(t, err)
	left, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Empty(t, left)
}
