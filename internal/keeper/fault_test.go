package keeper_test

import (
	"context"
	"log/slog"
	"net/http"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keepertest"
	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestPostgresRestartUnderLoad: PostgreSQL of its own crashes (stopped
// immediately) while readers keep reading. Meanwhile Keeper answers 503
// (never hangs past the request deadline, never 500), and once PostgreSQL
// is back it answers 200 again by itself, without a restart.
func TestPostgresRestartUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("starts a PostgreSQL cluster of its own")
	}
	t.Parallel()
	ctx := context.Background()
	// Durable: a crash must not lose committed transactions (the test
	// clusters otherwise run with fsync and synchronous_commit off).
	c, err := pgcluster.Start(ctx, pgcluster.StartOptions{Durable: true})
	require.NoError(t, err)
	t.Cleanup(func() { _ = c.Stop() })
	url, err := pgcluster.CreateDatabase(ctx, c.URL, "lorebase")
	require.NoError(t, err)
	require.NoError(t, store.Migrate(ctx, url))
	appURL := pgtest.AppURL(t, url)
	require.NoError(t, store.EnsureRequestRole(ctx, url, appURL))

	var logBuf lockedBuffer
	t.Cleanup(func() {
		if t.Failed() {
			t.Logf("server log:\n%s", logBuf.String())
		}
	})
	k, err := keepertest.Start(ctx, url, appURL, keepertest.Options{AdminToken: testAdminToken,
		Config: func(c *config.Config) { c.HTTP.RequestTimeout = 2 * time.Second },
		Log:    slog.New(slog.NewTextHandler(&logBuf, &slog.HandlerOptions{Level: slog.LevelWarn})), NoJobs: true})
	require.NoError(t, err)
	t.Cleanup(k.Close)
	e := envOf(t, k)
	admin := e.withSupply("alpha")
	e.commit("alpha", "main", admin, commitBody("seed", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	path := branchPath("alpha", "main") + "/records/S-1"

	var down atomic.Bool
	var mu sync.Mutex
	statuses := map[int]int{}
	var slowest time.Duration
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 4 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				r := e.doNoFail("GET", path, admin, nil)
				took := time.Since(start)
				mu.Lock()
				statuses[r.Status]++
				if down.Load() && took > slowest {
					slowest = took
				}
				mu.Unlock()
				time.Sleep(10 * time.Millisecond)
			}
		}()
	}
	time.Sleep(300 * time.Millisecond)
	require.NoError(t, c.Halt(ctx))
	down.Store(true)
	time.Sleep(3 * time.Second)
	mu.Lock()
	during := statuses[http.StatusServiceUnavailable]
	mu.Unlock()
	require.NoError(t, c.Resume(ctx))
	resumed := time.Now()
	down.Store(false)
	// Recovery: reads succeed again by themselves.
	require.Eventually(t, func() bool {
		return e.doNoFail("GET", path, admin, nil).Status == http.StatusOK
	}, 20*time.Second, 100*time.Millisecond)
	t.Logf("answers while down and after: %v; slowest answer while down %v; first 200 %v after PostgreSQL answered again",
		statuses, slowest, time.Since(resumed))
	close(stop)
	wg.Wait()

	require.Positive(t, during, "503 while the database was down: %v", statuses)
	require.Zero(t, statuses[http.StatusInternalServerError], "never a 500: %v", statuses)
	require.Zero(t, statuses[0], "never a dropped connection: %v", statuses)
	require.Less(t, slowest, e.Config.HTTP.RequestTimeout+2*time.Second, "no request hung past its deadline")
	e.must(http.StatusOK, "GET", path, admin, nil)
	e.commit("alpha", "main", admin, commitBody("after", put("Supplier", "S-2", map[string]any{"name": "Bolt"})))
}

// lockedBuffer is a log sink safe for concurrent writers.
type lockedBuffer struct {
	mu  sync.Mutex
	buf []byte
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.buf = append(b.buf, p...)
	return len(p), nil
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.buf) > 20000 {
		return "…" + string(b.buf[len(b.buf)-20000:])
	}
	return string(b.buf)
}
