package perf_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
)

// loadedWorkload loads the supply dataset of cfg into a new database
// (perf.Load without its VACUUM) and returns a Workload over its main
// drawing calls keys and queries from seed.
func loadedWorkload(t *testing.T, cfg supply.Config, seed uint64, calls int) *perf.Workload {
	t.Helper()
	ctx := context.Background()
	s := pgtest.Store(t)
	_, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, SkipVacuum: true})
	require.NoError(t, err)
	gen, err := supply.New(cfg)
	require.NoError(t, err)
	w, err := perf.NewWorkload(ctx, s, gen, seed, calls)
	require.NoError(t, err)
	return w
}
