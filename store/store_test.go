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
	s := pgtest.Store(t)
	a, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	b, err := s.CreateDomain(ctx, "beta")
	require.NoError(t, err)

	var role string
	var names []string
	err = s.Read(ctx, a.ID, `SELECT current_user || '', (SELECT array_agg(name) FROM domains)`, nil, func(rows pgx.Rows) error {
		_, err := pgx.ForEachRow(rows, []any{&role, &names}, func() error { return nil })
		return err
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

// Every table holding Domain data (every table with a domain_id column,
// partitions included) has row-level security on and the domain_isolation
// policy, so a table added later cannot forget it; lorebase_app owns none.
func TestEveryDomainTableIsIsolated(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	rows, err := s.Pool.Query(ctx, `
		SELECT c.relname, c.relrowsecurity, c.relispartition,
		       EXISTS (SELECT 1 FROM pg_policy p WHERE p.polrelid = coalesce(i.inhparent, c.oid) AND p.polname = 'domain_isolation'),
		       pg_get_userbyid(c.relowner),
		       has_table_privilege('lorebase_app', c.oid, 'SELECT, INSERT, UPDATE, DELETE')
		  FROM pg_class c
		  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname = 'domain_id' AND NOT a.attisdropped
		  LEFT JOIN pg_inherits i ON i.inhrelid = c.oid
		 WHERE c.relnamespace = 'public'::regnamespace AND c.relkind IN ('r', 'p')
		 ORDER BY 1`)
	require.NoError(t, err)
	n := 0
	for rows.Next() {
		var name, owner string
		var rls, partition, policy, direct bool
		require.NoError(t, rows.Scan(&name, &rls, &partition, &policy, &owner, &direct))
		n++
		require.True(t, policy, "%s has no domain_isolation policy", name)
		require.NotEqual(t, "lorebase_app", owner, name)
		if !partition {
			require.True(t, rls, "%s has row-level security off", name)
		} else if !rls {
			// A partition is reached through its parent, whose policy
			// applies; lorebase_app must not reach it directly.
			require.False(t, direct, "lorebase_app may use partition %s directly, around the policy", name)
		}
	}
	require.NoError(t, rows.Err())
	require.GreaterOrEqual(t, n, 11, "the Domain tables were found")

	// River's jobs name their Domain in their args; lorebase_app sees only
	// its own Domain's.
	var jobRLS, jobPolicy bool
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT relrowsecurity,
		EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = 'river_job'::regclass AND polname = 'domain_isolation')
		FROM pg_class WHERE oid = 'river_job'::regclass`).Scan(&jobRLS, &jobPolicy))
	require.True(t, jobRLS)
	require.True(t, jobPolicy)
	a, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	b, err := s.CreateDomain(ctx, "beta")
	require.NoError(t, err)
	for _, d := range []int32{a.ID, b.ID} {
		_, err := s.Pool.Exec(ctx, `INSERT INTO river_job (args, kind, max_attempts, queue, state)
			VALUES (jsonb_build_object('domain_id', $1::int), 'store.test', 1, 'default', 'available')`, d)
		require.NoError(t, err)
	}
	var seen []int32
	require.NoError(t, s.Read(ctx, a.ID, `SELECT (args ->> 'domain_id')::int FROM river_job`, nil, func(rows pgx.Rows) error {
		var err error
		seen, err = pgx.CollectRows(rows, pgx.RowTo[int32])
		return err
	}))
	require.Equal(t, []int32{a.ID}, seen, "lorebase_app sees only its Domain's jobs")

	// domains itself is keyed by id.
	var rls bool
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT relrowsecurity FROM pg_class WHERE oid = 'domains'::regclass`).Scan(&rls))
	require.True(t, rls)
}
