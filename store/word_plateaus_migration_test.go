package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/migrations"
)

// TestSearchWordPlateausMigration: migration 0030 creates the type of a
// word's plateaus that lb_search_word_plateaus returns and
// lb_search_pairs_of takes; the down migration drops both functions and
// the type (the callers of the version before call lb_search_pairs, whose
// file of that version reads the plateaus itself).
func TestSearchWordPlateausMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	forms := func(q pgx.Tx) []string {
		rows, err := q.Query(ctx, `SELECT p.oid::regprocedure::text FROM pg_proc p
			WHERE p.proname IN ('lb_search_word_plateaus', 'lb_search_pairs_of')
			UNION ALL SELECT t.typname::text FROM pg_type t WHERE t.typname = 'lb_search_word_plateaus'
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
		"lb_search_pairs_of(integer,integer,lb_search_word_plateaus,lb_search_word_plateaus,integer,integer,integer,integer)",
		"lb_search_word_plateaus",
		"lb_search_word_plateaus(integer,integer,text,integer,integer,integer)",
	}, forms(tx))

	down, err := migrations.FS.ReadFile("0030_search_word_plateaus.down.sql")
	require.NoError(t, err)
	_, err = tx.Exec(ctx, string(down))
	require.NoError(t, err)
	require.Empty(t, forms(tx))
}
