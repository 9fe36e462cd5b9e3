package perf_test

import (
	"bytes"
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// checkLoaded compares main with the generated dataset: every Record once,
// with one version, and every Link.
func checkLoaded(t *testing.T, s *store.Store, domainID int32, cfg supply.Config) {
	t.Helper()
	ctx := context.Background()
	g, err := supply.New(cfg)
	require.NoError(t, err)
	want := map[string]string{}
	for c := range g.Changes() {
		if c.Op == "put" {
			want[c.Key] = c.Kind
		}
	}
	rows, err := s.Pool.Query(ctx, `SELECT key, kind, versions FROM mat_records WHERE domain_id = $1`, domainID)
	require.NoError(t, err)
	got := map[string]string{}
	var key, kind string
	var versions int
	_, err = pgx.ForEachRow(rows, []any{&key, &kind, &versions}, func() error {
		require.NotContains(t, got, key)
		require.Equal(t, 1, versions, "record %s put more than once", key)
		got[key] = kind
		return nil
	})
	require.NoError(t, err)
	require.Equal(t, want, got)

	var history, stored, refs int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_history WHERE domain_id = $1`, domainID).Scan(&history))
	require.Equal(t, len(want), history)
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE origin = 'l'), count(*) FILTER (WHERE origin = 'r')
		FROM mat_links WHERE domain_id = $1`, domainID).Scan(&stored, &refs))
	require.Equal(t, g.Counts().Links(), stored)
	require.Equal(t, g.Counts().RefLinks(), refs)

	ds, err := perf.ReadDataset(ctx, s, domainID)
	require.NoError(t, err)
	require.EqualValues(t, len(want), ds.Records)
	require.EqualValues(t, g.Counts().Links(), ds.StoredLinks)
	require.Positive(t, ds.DatabaseBytes)
}

func TestLoadSmall(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	cfg := supply.Config{Seed: 11, Scale: 2, ExtraLinks: 1}
	var log bytes.Buffer
	res, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, BatchSize: 300, Progress: &log})
	require.NoError(t, err)
	require.True(t, res.Complete)
	require.Equal(t, 0, res.Skipped)
	require.Equal(t, res.Batches, res.Committed)
	require.Equal(t, 2*supply.RecordsPerUnit, res.Records)
	require.Contains(t, log.String(), "records/s")
	checkLoaded(t, s, res.DomainID, cfg)

	again, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, BatchSize: 300})
	require.NoError(t, err, "a complete load loads nothing")
	require.True(t, again.Complete)
	require.Equal(t, 0, again.Committed)
	require.Equal(t, res.Batches, again.Skipped)

	other := cfg
	other.Seed = 12
	_, err = perf.Load(ctx, s, perf.LoadOptions{Supply: other, BatchSize: 300})
	require.ErrorContains(t, err, "another dataset")
}

func TestLoadResumes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	cfg := supply.Config{Seed: 5, Scale: 2, ExtraLinks: 1}
	opts := perf.LoadOptions{Supply: cfg, BatchSize: 200, StopAfter: 2}
	first, err := perf.Load(ctx, s, opts)
	require.NoError(t, err)
	require.False(t, first.Complete)
	require.Equal(t, 2, first.Committed)

	opts.StopAfter = 0
	rest, err := perf.Load(ctx, s, opts)
	require.NoError(t, err)
	require.True(t, rest.Complete)
	require.Equal(t, 2, rest.Skipped)
	require.Equal(t, rest.Batches-2, rest.Committed)
	checkLoaded(t, s, rest.DomainID, cfg)

	var revisions int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM revisions WHERE domain_id = $1`, rest.DomainID).Scan(&revisions))
	require.Equal(t, rest.Batches+1, revisions, "the schema commit and one commit per batch")
}
