package keeper_test

import (
	"context"
	"io"
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
	require.Less(t, took, deadline+10*time.Second, "answered after the deadline, not hung")

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

// TestLargeBodiesTakeTurns: with http.body_concurrency 1, a large body
// being sent slowly holds the only turn; another large body waits no
// longer than its deadline and is answered 503 with Retry-After, while a
// small request goes through.
func TestLargeBodiesTakeTurns(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) {
		c.HTTP.BodyConcurrency = 1
		c.HTTP.RequestTimeout = 800 * time.Millisecond
	})
	admin := e.withSupply("alpha")
	path := branchPath("alpha", "main") + "/commits"

	// A 2 MiB body of which only the first bytes arrive.
	pr, pw := io.Pipe()
	req, err := http.NewRequest("POST", e.URL+path, pr)
	require.NoError(t, err)
	req.ContentLength = 2 << 20
	req.Header.Set("Authorization", "Bearer "+admin)
	slow := make(chan int, 1)
	go func() {
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			slow <- 0
			return
		}
		resp.Body.Close()
		slow <- resp.StatusCode
	}()
	_, err = pw.Write([]byte(`{"message": "slow", "changes": [`))
	require.NoError(t, err)
	time.Sleep(100 * time.Millisecond)

	// The big body (no changes: it could write nothing) is refused once
	// the slow one holds the turn; on a loaded machine the slow request
	// may take a while to get there, so the big one is sent until then.
	big := `{"message": "big", "author": "t", "changes": [], "provenance": {"pad": "` + strings.Repeat("x", 1<<20+10) + `"}}`
	var r *response
	require.Eventually(t, func() bool {
		start := time.Now()
		r = e.do("POST", path, admin, big)
		// Answered, not hung, whatever the answer.
		require.Less(t, time.Since(start), 800*time.Millisecond+10*time.Second)
		return r.Status == http.StatusServiceUnavailable
	}, 30*time.Second, 50*time.Millisecond)
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	require.Contains(t, r.String(), "body_concurrency")
	// Small bodies do not wait for a turn.
	e.commit("alpha", "main", admin, commitBody("small", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	pw.CloseWithError(io.ErrUnexpectedEOF)
	<-slow
}
