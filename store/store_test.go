package store_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestMigrateTwiceAndState(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	require.NoError(t, store.Migrate(ctx, url), "a second run is a no-op")
	s, err := store.Open(ctx, url, store.Config{})
	require.NoError(t, err)
	defer s.Close()
	st, err := s.Migrations(ctx)
	require.NoError(t, err)
	require.True(t, st.UpToDate(), "%+v", st)
	require.Positive(t, st.RiverLatest)
}

func TestReadIsScopedToOneDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{})
	require.NoError(t, err)
	defer s.Close()
	a, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	b, err := s.CreateDomain(ctx, "beta")
	require.NoError(t, err)

	var role string
	var names []string
	err = s.Read(ctx, a.ID, `SELECT current_user || '', (SELECT array_agg(name) FROM domains)`, nil, func(rows pgx.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&role, &names); err != nil {
				return err
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, "lorebase_app", role)
	require.Equal(t, []string{"alpha"}, names)

	// The setting does not outlive the transaction: a plain owner query on a
	// pooled connection sees both Domains and is not lorebase_app.
	var n int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM domains WHERE current_user <> 'lorebase_app'`).Scan(&n))
	require.Equal(t, 2, n)
	_ = b
}
