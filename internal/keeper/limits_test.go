package keeper_test

import (
	"context"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
)

// holdPool takes every connection of a pool until the returned release is
// called.
func holdPool(t *testing.T, pool *pgxpool.Pool) (release func()) {
	t.Helper()
	var conns []*pgxpool.Conn
	for range pool.Config().MaxConns {
		c, err := pool.Acquire(context.Background())
		require.NoError(t, err)
		conns = append(conns, c)
	}
	var once sync.Once
	release = func() {
		once.Do(func() {
			for _, c := range conns {
				c.Release()
			}
		})
	}
	t.Cleanup(release)
	return release
}

// TestPoolExhaustedAnswers503WithinTheDeadline: with every request
// connection taken, a read waits no longer than http.request_timeout and
// is answered 503 with Retry-After; once connections free up, reads work
// again without a restart.
func TestPoolExhaustedAnswers503WithinTheDeadline(t *testing.T) {
	t.Parallel()
	const deadline = 700 * time.Millisecond
	e := testServer(t, func(c *config.Config) {
		c.Database.MaxConns = 2
		c.HTTP.RequestTimeout = deadline
	})
	admin := e.withSupply("alpha")
	e.commit("alpha", "main", admin, commitBody("seed", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	path := branchPath("alpha", "main") + "/records/S-1"

	release := holdPool(t, e.Store.Requests)
	start := time.Now()
	r := e.do("GET", path, admin, nil)
	took := time.Since(start)
	require.Equal(t, http.StatusServiceUnavailable, r.Status, r.String())
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	require.GreaterOrEqual(t, took, deadline-50*time.Millisecond)
	require.Less(t, took, deadline+2*time.Second, "answered within the deadline, not hung")

	release()
	e.must(http.StatusOK, "GET", path, admin, nil)
}

// TestDomainConcurrencyLimit: past http.domain_concurrency requests in
// flight for one Domain, the next is refused at once with 503 and
// Retry-After; another Domain is not refused by it.
func TestDomainConcurrencyLimit(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) {
		c.Database.MaxConns = 1
		c.HTTP.DomainConcurrency = 1
		c.HTTP.RequestTimeout = 3 * time.Second
	})
	adminA := e.withSupply("alpha")
	adminB := e.withSupply("beta")
	release := holdPool(t, e.Store.Requests)

	// One alpha request in flight, waiting for a connection.
	done := make(chan *response, 1)
	go func() { done <- e.doNoFail("GET", branchPath("alpha", "main")+"/records?kind=Supplier", adminA, nil) }()
	time.Sleep(300 * time.Millisecond)
	require.Eventually(t, func() bool {
		r := e.do("GET", branchPath("alpha", "main")+"/records?kind=Supplier", adminA, nil)
		if r.Status != http.StatusServiceUnavailable || r.Header.Get("Retry-After") == "" {
			return false
		}
		var p struct{ Detail string }
		r.Decode(t, &p)
		return strings.Contains(p.Detail, "domain_concurrency")
	}, 2500*time.Millisecond, 20*time.Millisecond, "a second alpha request is refused at once")

	// beta is not limited by alpha's slot: it waits for a connection like
	// any request and gets one once they free up.
	betaDone := make(chan *response, 1)
	go func() {
		betaDone <- e.doNoFail("GET", branchPath("beta", "main")+"/records?kind=Supplier", adminB, nil)
	}()
	time.Sleep(200 * time.Millisecond)
	release()
	require.Equal(t, http.StatusOK, (<-done).Status)
	require.Equal(t, http.StatusOK, (<-betaDone).Status)
	e.must(http.StatusOK, "GET", branchPath("alpha", "main")+"/records?kind=Supplier", adminA, nil)
}

// TestAtReadsAreBounded: a read as of a Revision replays the changes made
// since it; past read.at_max_changes it is refused with 422 naming at=,
// before any of that history is expanded.
func TestAtReadsAreBounded(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Read.AtMaxChanges = 3 })
	admin := e.withSupply("alpha")
	var revs []string
	for i := range 5 {
		revs = append(revs, e.commit("alpha", "main", admin, commitBody("c",
			put("Supplier", "S-"+strconv.Itoa(i), map[string]any{"name": "Acme " + strconv.Itoa(i)}))))
	}
	bp := branchPath("alpha", "main")
	for _, path := range []string{"/records?kind=Supplier&at=", "/records/S-0?at=", "/search?q=acme&at=", "/records/S-0/links?at="} {
		r := e.must(http.StatusUnprocessableEntity, "GET", bp+path+revs[0], admin, nil)
		require.Equal(t, "at", problemField(t, r), path)
		require.Contains(t, r.String(), "read.at_max_changes")
		e.must(http.StatusOK, "GET", bp+path+revs[2], admin, nil) // two changes since
	}
}
