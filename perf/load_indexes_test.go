package perf_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

// rowVersions answers the row version (xmin) of every Record of the
// Domain: an update of a row changes it.
func rowVersions(t *testing.T, s *store.Store, domainID int32) map[string]string {
	t.Helper()
	return pgtest.RowVersions(t, s.Pool, `SELECT key, xmin::text FROM mat_records WHERE domain_id = $1`, domainID)
}

// requireIndexedLoad checks that the schema's per-Attribute indexes of the
// Domain's main are recorded and ready, and that every Record's ivals are
// its values of the recorded Attributes of its Kind (as lb_ivals gives
// them); it answers how many Records have ivals.
func requireIndexedLoad(t *testing.T, s *store.Store, domainID int32) int {
	t.Helper()
	ctx := context.Background()
	var recorded, ready, built, stale, with int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE ready),
			count(*) FILTER (WHERE to_regclass(name) IS NOT NULL) FROM attribute_indexes WHERE domain_id = $1`,
		domainID).Scan(&recorded, &ready, &built))
	require.Positive(t, recorded)
	require.Equal(t, recorded, ready, "every recorded index ready")
	require.Equal(t, recorded, built, "every recorded index built")
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE ivals IS DISTINCT FROM lb_ivals(domain_id, branch_id, kind, "values")),
			count(*) FILTER (WHERE ivals IS NOT NULL)
		FROM mat_records WHERE domain_id = $1`, domainID).Scan(&stale, &with))
	require.Zero(t, stale, "Records whose ivals are not their indexed values")
	return with
}

// TestLoadWritesIvals: the load records and builds the schema's indexes
// before its batches, as a user who declares them does, so its commits
// write ivals, a resumed load too, and the bench's builds then rewrite no
// Record. A seed loaded without them (as before) is still backfilled by
// the bench's builds.
func TestLoadWritesIvals(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	cfg := supply.Config{Seed: 9, Scale: 2, ExtraLinks: 1}
	gen, err := supply.New(cfg)
	require.NoError(t, err)
	for _, tc := range []struct {
		name string
		load func(t *testing.T, s *store.Store) int32
		// rewritten: whether the bench's builds rewrite Records
		rewritten bool
	}{
		{"in one run", func(t *testing.T, s *store.Store) int32 {
			res, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, BatchSize: 300, SkipVacuum: true})
			require.NoError(t, err)
			require.True(t, res.Complete)
			return res.DomainID
		}, false},
		{"resumed", func(t *testing.T, s *store.Store) int32 {
			opts := perf.LoadOptions{Supply: cfg, BatchSize: 300, StopAfter: 2, SkipVacuum: true}
			first, err := perf.Load(ctx, s, opts)
			require.NoError(t, err)
			require.False(t, first.Complete)
			opts.StopAfter = 0
			rest, err := perf.Load(ctx, s, opts)
			require.NoError(t, err)
			require.True(t, rest.Complete)
			require.Equal(t, 2, rest.Skipped)
			return rest.DomainID
		}, false},
		{"resumed from a run that recorded none", func(t *testing.T, s *store.Store) int32 {
			opts := perf.LoadOptions{Supply: cfg, BatchSize: 300, StopAfter: 2, SkipVacuum: true}
			first, err := perf.Load(ctx, s, opts)
			require.NoError(t, err)
			forgetIndexes(t, s, first.DomainID)
			opts.StopAfter = 0
			rest, err := perf.Load(ctx, s, opts)
			require.NoError(t, err)
			require.True(t, rest.Complete)
			return rest.DomainID
		}, false},
		{"a seed loaded without indexes", func(t *testing.T, s *store.Store) int32 {
			res, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, BatchSize: 300, SkipVacuum: true})
			require.NoError(t, err)
			forgetIndexes(t, s, res.DomainID)
			return res.DomainID
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			s := pgtest.Store(t)
			domainID := tc.load(t, s)
			checkLoaded(t, s, domainID, cfg)
			w, err := perf.NewWorkload(ctx, s, gen, 3, 4)
			require.NoError(t, err)
			before := rowVersions(t, s, domainID)
			_, err = w.BuildIndexes(ctx)
			require.NoError(t, err)
			changed := pgtest.Rewritten(before, rowVersions(t, s, domainID))
			with := requireIndexedLoad(t, s, domainID)
			require.Positive(t, with)
			if tc.rewritten {
				require.Equal(t, with, changed, "the builds backfill each Record with ivals once")
			} else {
				require.Zero(t, changed, "the bench's builds rewrite no Record")
			}
		})
	}
}

// forgetIndexes makes the Domain's main as a load without indexes left it:
// no per-Attribute index recorded or built, no ivals.
func forgetIndexes(t *testing.T, s *store.Store, domainID int32) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.Pool.Query(ctx, `DELETE FROM attribute_indexes WHERE domain_id = $1 RETURNING name`, domainID)
	require.NoError(t, err)
	var names []string
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		names = append(names, n)
	}
	require.NoError(t, rows.Err())
	require.NotEmpty(t, names)
	for _, n := range names {
		_, err := s.Pool.Exec(ctx, `DROP INDEX `+n)
		require.NoError(t, err)
	}
	_, err = s.Pool.Exec(ctx, `UPDATE mat_records SET ivals = NULL WHERE domain_id = $1 AND ivals IS NOT NULL`, domainID)
	require.NoError(t, err)
}
