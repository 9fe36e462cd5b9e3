package store_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestInDomainBatchStaysInTheDomain: the statements sent with the scope
// run scoped to the Domain, as lorebase_app: scoped to alpha, beta's main
// cannot be locked, its schema is not read, and a write naming beta is
// refused and leaves nothing; alpha's own branch is locked and read.
func TestInDomainBatchStaysInTheDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	a, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	b, err := s.CreateDomain(ctx, "beta")
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `UPDATE refs SET name = 'beta-only' WHERE domain_id = $1 AND name = 'main'`, b.ID)
	require.NoError(t, err)
	var betaMain int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1`, b.ID).Scan(&betaMain))

	// alpha's own branch: locked, and the batch ran before fn.
	var br *store.Branch
	var sch store.SchemaRow
	first := &pgx.Batch{}
	var role string
	var scoped int32
	first.Queue(`SELECT current_user, lb_domain()`).QueryRow(func(row pgx.Row) error { return row.Scan(&role, &scoped) })
	store.QueueLockBranch(first, "main", &br, &sch)
	ranFn := false
	err = s.InDomainBatch(ctx, a.ID, first, func(ctx context.Context, tx pgx.Tx) error {
		ranFn = true
		return nil
	})
	require.NoError(t, err)
	require.True(t, ranFn)
	require.Equal(t, "lorebase_app", role)
	require.Equal(t, a.ID, scoped)
	require.NotNil(t, br)
	require.Equal(t, a.ID, br.DomainID)
	require.NotNil(t, sch.Compiled)

	// beta's branch, named from alpha: not found, and fn does not run.
	br, sch = nil, store.SchemaRow{}
	first = &pgx.Batch{}
	store.QueueLockBranch(first, "beta-only", &br, &sch)
	err = s.InDomainBatch(ctx, a.ID, first, func(ctx context.Context, tx pgx.Tx) error {
		t.Error("fn ran after a failed first batch")
		return nil
	})
	require.True(t, errors.Is(err, store.ErrNotFound), "got %v", err)
	require.Nil(t, br)
	require.Nil(t, sch.Compiled)

	// A write into beta from alpha's scope is refused by row-level
	// security and nothing is written.
	first = &pgx.Batch{}
	first.Queue(`INSERT INTO mat_records (domain_id, branch_id, key, kind, created_seq, seq) VALUES ($1, $2, 'HOSTILE-1', 'K', 1, 1)`, b.ID, betaMain)
	err = s.InDomainBatch(ctx, a.ID, first, func(ctx context.Context, tx pgx.Tx) error { return nil })
	require.Error(t, err)
	var n int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records WHERE key = 'HOSTILE-1'`).Scan(&n))
	require.Zero(t, n)
}
