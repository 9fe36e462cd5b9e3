package perf_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
)

// twoDomains loads two small Domains with the same keys into one database:
// supply, and a second one whose titles carry a marker.
func twoDomains(t *testing.T) (*perf.Workload, *perf.Workload) {
	t.Helper()
	ctx := context.Background()
	s := pgtest.Store(t)
	load := func(domain string, cfg supply.Config) *perf.Workload {
		_, err := perf.Load(ctx, s, perf.LoadOptions{Domain: domain, Supply: cfg, SkipVacuum: true})
		require.NoError(t, err)
		g, err := supply.New(cfg)
		require.NoError(t, err)
		w, err := perf.NewWorkloadIn(ctx, s, domain, g, 3, 10)
		require.NoError(t, err)
		return w
	}
	a := load(perf.DomainName, supply.Config{Seed: 2, Scale: 1, ExtraLinks: 1})
	b := load("other", supply.Config{Seed: 3, Scale: 1, ExtraLinks: 1, Marker: "zzother"})
	return a, b
}

func TestConcurrencyChecksEveryRecord(t *testing.T) {
	t.Parallel()
	a, b := twoDomains(t)
	tenants := []*perf.Tenant{perf.NewTenant(a, ""), perf.NewTenant(b, "zzother")}
	res, err := perf.RunConcurrency(context.Background(), tenants, perf.ConcurrencyOptions{
		// MinCalls: on a loaded machine a level goes on until each client
		// has called every read of the mix and the writer has committed.
		Clients: []int{1, 3}, Duration: 1500 * time.Millisecond, MaxCalls: 200, MinCalls: len(perf.MixedReads),
		WriterRate: 20, WriterChanges: 5, Seed: 1,
	})
	require.NoError(t, err)
	require.Len(t, res.Levels, 4)
	for _, l := range res.Levels {
		require.Zero(t, l.Errors, l.FirstError)
		require.Zero(t, l.Leaks, l.LeakExamples)
		require.Positive(t, l.Calls)
		require.Positive(t, l.Checked)
		require.LessOrEqual(t, l.Calls, l.Clients*200)
		require.Equal(t, l.Writer, l.Commits != nil)
		if l.Writer {
			require.Positive(t, l.Commits.N, l.CommitError)
			require.Zero(t, l.CommitErrors, l.CommitError)
		}
	}
	require.Len(t, res.Levels[3].ByRead, len(perf.MixedReads))
	l := res.Levels[1]
	require.Len(t, l.ByDomain, 2)
	require.Equal(t, 2, l.ByDomain[0].Clients, "clients 0 and 2")
	require.Equal(t, 1, l.ByDomain[1].Clients)
	require.Equal(t, l.Calls, l.ByDomain[0].Calls+l.ByDomain[1].Calls)
}

func TestConcurrencyCountsLeaks(t *testing.T) {
	t.Parallel()
	a, b := twoDomains(t)
	// A client that expects supply's Records but reads the other Domain
	// gets Records with the other Domain's marker and keys.
	misrouted := *a
	misrouted.DomainID = b.DomainID
	tenants := []*perf.Tenant{perf.NewTenant(&misrouted, ""), perf.NewTenant(b, "zzother")}
	res, err := perf.RunConcurrency(context.Background(), tenants, perf.ConcurrencyOptions{
		Clients: []int{1}, Duration: 300 * time.Millisecond, MaxCalls: 60, Seed: 1,
	})
	require.NoError(t, err)
	require.Len(t, res.Levels, 1)
	require.Positive(t, res.Levels[0].Leaks)
	require.NotEmpty(t, res.Levels[0].LeakExamples)
}
