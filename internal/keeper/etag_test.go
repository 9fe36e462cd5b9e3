package keeper_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keepertest"
)

// requestTrips counts what the request pool sends to PostgreSQL: each
// batch and each statement sent alone is one round trip.
type requestTrips struct {
	mu      sync.Mutex
	on      bool
	batches [][]string // the statements of each batch
	alone   []string
}

func requestPool(conn *pgx.Conn) bool {
	return conn.Config().RuntimeParams["application_name"] == "lorebase"
}

func (c *requestTrips) TraceQueryStart(ctx context.Context, conn *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on && requestPool(conn) {
		c.alone = append(c.alone, d.SQL)
	}
	return ctx
}

func (c *requestTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (c *requestTrips) TraceBatchStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on && requestPool(conn) {
		c.batches = append(c.batches, nil)
	}
	return ctx
}

func (c *requestTrips) TraceBatchQuery(_ context.Context, conn *pgx.Conn, d pgx.TraceBatchQueryData) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.on && requestPool(conn) && len(c.batches) > 0 {
		c.batches[len(c.batches)-1] = append(c.batches[len(c.batches)-1], d.SQL)
	}
}

func (c *requestTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// record starts recording (clearing what was recorded) or stops it.
func (c *requestTrips) record(on bool) (batches [][]string, alone []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	batches, alone = c.batches, c.alone
	c.on = on
	if on {
		c.batches, c.alone = nil, nil
	}
	return batches, alone
}

// TestReadRoundTrips: a read costs one round trip to PostgreSQL when
// neither the response cache nor If-None-Match can answer before it: the
// branch head for the ETag travels in the read's batch (for a get by key,
// in the read's own statement: BEGIN, the scope, the read and COMMIT and
// nothing else). With a tag to compare or a cache to look in, the head is
// read first, and a 304 or a cache hit reads nothing else.
func TestReadRoundTrips(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name   string
		path   string // under /v1/domains/acme/branches/main
		cache  int64
		tag    string // "": no If-None-Match; "same": the answer's own ETag; else sent as is
		status int
		// statements of each batch sent, in order
		batches []int
	}{
		{"get, cache off, no tag", "/records/S-1", 0, "", http.StatusOK, []int{4}},
		{"get as of a Revision, cache off, no tag", "/records/S-1?at=REV", 0, "", http.StatusOK, []int{5}},
		{"search, cache off, no tag", "/search?q=acme", 0, "", http.StatusOK, []int{5}},
		{"get, cache off, a tag of another version", "/records/S-1", 0, `"other"`, http.StatusOK, []int{4, 4}},
		{"get, cache off, its own tag", "/records/S-1", 0, "same", http.StatusNotModified, []int{4}},
		{"get, cache on, kept answer", "/records/S-1", 1 << 20, "", http.StatusOK, []int{4}},
		{"get, cache on, its own tag", "/records/S-1", 1 << 20, "same", http.StatusNotModified, []int{4}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			trips := &requestTrips{}
			k := keepertest.New(t, keepertest.Options{AdminToken: testAdminToken, NoJobs: true, Tracer: trips,
				Config: func(c *config.Config) { c.HTTP.CacheMaxBytes = tc.cache }})
			e := envOf(t, k)
			admin := e.withSupply("acme")
			rev := e.commit("acme", "main", admin, commitBody("a", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
			reader := e.token("acme", "reader", "reader")
			path := branchPath("acme", "main") + strings.ReplaceAll(tc.path, "REV", rev)
			// The first call resolves the token and keeps the answer.
			first := e.must(http.StatusOK, "GET", path, reader, nil)
			etag := first.Header.Get("ETag")
			require.NotEmpty(t, etag)
			var headers []string
			switch tc.tag {
			case "":
			case "same":
				headers = []string{"If-None-Match", etag}
			default:
				headers = []string{"If-None-Match", tc.tag}
			}

			trips.record(true)
			r := e.must(tc.status, "GET", path, reader, nil, headers...)
			batches, alone := trips.record(false)
			require.Equal(t, etag, r.Header.Get("ETag"), "the same tag whichever way the head was read")
			if tc.status == http.StatusOK {
				require.Equal(t, first.String(), r.String())
			}
			require.Empty(t, alone, "every request statement travels in a batch")
			var sizes []int
			for _, b := range batches {
				sizes = append(sizes, len(b))
			}
			require.Equal(t, tc.batches, sizes, "round trips and their statements: %q", batches)
		})
	}
}

// TestETagsReadWithTheRead: with the response cache off, every cacheable
// read answers an ETag read in its own transaction, equal to the one the
// head read beforehand gives (If-None-Match with it is 304); the tag moves
// with a commit, except for a read as of a Revision; errors carry none.
func TestETagsReadWithTheRead(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.HTTP.CacheMaxBytes = 0 })
	admin := e.withSupply("acme")
	e.commit("acme", "main", admin, commitBody("a", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	rev := e.commit("acme", "main", admin, commitBody("b", put("Supplier", "S-2", map[string]any{"name": "Beta"})))
	bp := branchPath("acme", "main")
	paths := []struct {
		path  string
		moves bool // a commit moves the tag
	}{
		{bp + "/records/S-1", true},
		{bp + "/records/S-1?at=" + rev, false},
		{bp + "/records?kind=Supplier", true},
		{bp + "/records?kind=Supplier&count=true", true},
		{bp + "/records/S-1/links", true},
		{bp + "/records/S-1/neighborhood", true},
		{bp + "/records/S-1/history", true},
		{bp + "/records/S-1/lineage", true},
		{bp + "/search?q=acme", true},
		{bp + "/resolve?mention=acme", true},
		{bp + "/revisions", true},
		{"/v1/domains/acme/revisions/" + rev, false},
	}
	tags := map[string]string{}
	for _, p := range paths {
		r := e.must(http.StatusOK, "GET", p.path, admin, nil)
		tag := r.Header.Get("ETag")
		require.NotEmpty(t, tag, p.path)
		require.Equal(t, tag, e.must(http.StatusOK, "GET", p.path, admin, nil).Header.Get("ETag"), p.path)
		nm := e.must(http.StatusNotModified, "GET", p.path, admin, nil, "If-None-Match", tag)
		require.Equal(t, tag, nm.Header.Get("ETag"), p.path)
		tags[p.path] = tag
	}
	e.commit("acme", "main", admin, commitBody("c", map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "DE"}}))
	for _, p := range paths {
		tag := e.must(http.StatusOK, "GET", p.path, admin, nil).Header.Get("ETag")
		if p.moves {
			require.NotEqual(t, tags[p.path], tag, p.path)
			e.must(http.StatusOK, "GET", p.path, admin, nil, "If-None-Match", tags[p.path])
		} else {
			require.Equal(t, tags[p.path], tag, p.path)
		}
	}
	for _, p := range []string{bp + "/records/none", branchPath("acme", "nobranch") + "/records/S-1", bp + "/records/S-1?at=" + strings.Repeat("Z", 26)} {
		r := e.do("GET", p, admin, nil)
		require.GreaterOrEqual(t, r.Status, 400, p)
		require.Empty(t, r.Header.Get("ETag"), p)
	}
}

// TestInterleavedDomainsOnFewConnections: two Domains hold the same key
// with other values; readers of both, and requests that fail inside their
// batch (an unknown Revision) or are refused (a token reading the other
// Domain), run interleaved over a request pool of two connections. Every
// answer is its own Domain's, with its own Domain's ETag, and no pooled
// connection is left with a Domain or the app role set.
func TestInterleavedDomainsOnFewConnections(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.HTTP.CacheMaxBytes, c.Database.MaxConns = 0, 2 })
	domains := []string{"acme", "other"}
	readers := map[string]string{}
	tags := map[string]string{}
	for _, d := range domains {
		admin := e.withSupply(d)
		e.commit(d, "main", admin, commitBody("a", put("Supplier", "S-1", map[string]any{"name": "name of " + d})))
		readers[d] = e.token(d, "reader", "reader")
		tags[d] = e.must(http.StatusOK, "GET", branchPath(d, "main")+"/records/S-1", readers[d], nil).Header.Get("ETag")
	}
	require.NotEqual(t, tags["acme"], tags["other"])

	const clients, calls = 6, 40
	var wg sync.WaitGroup
	errs := make(chan error, clients*calls)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range calls {
				d := domains[(c+i)%2]
				other := domains[(c+i+1)%2]
				var r *response
				switch i % 4 {
				case 0, 1:
					r = e.doNoFail("GET", branchPath(d, "main")+"/records/S-1", readers[d], nil)
					if r.Status != http.StatusOK || !strings.Contains(r.String(), `"name of `+d+`"`) || r.Header.Get("ETag") != tags[d] {
						errs <- fmt.Errorf("%s read %d: %d %s, ETag %s (want %s)", d, i, r.Status, r.Body, r.Header.Get("ETag"), tags[d])
					}
				case 2:
					r = e.doNoFail("GET", branchPath(d, "main")+"/records/S-1?at="+strings.Repeat("Z", 26), readers[d], nil)
					if r.Status != http.StatusNotFound || r.Header.Get("ETag") != "" {
						errs <- fmt.Errorf("%s unknown Revision %d: %d %s", d, i, r.Status, r.Body)
					}
				case 3:
					r = e.doNoFail("GET", branchPath(other, "main")+"/records/S-1", readers[d], nil)
					if r.Status != http.StatusNotFound || strings.Contains(r.String(), "name of") {
						errs <- fmt.Errorf("%s reading %s %d: %d %s", d, other, i, r.Status, r.Body)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}

	// Every pooled request connection is back to no Domain and its login
	// role.
	ctx := context.Background()
	conns := e.Store.Requests.Stat().TotalConns()
	require.Positive(t, conns)
	var held []interface{ Release() }
	for range conns {
		c, err := e.Store.Requests.Acquire(ctx)
		require.NoError(t, err)
		held = append(held, c)
		var domain, role string
		require.NoError(t, c.QueryRow(ctx, `SELECT coalesce(current_setting('lorebase.domain_id', true), ''), current_user`).Scan(&domain, &role))
		require.Empty(t, domain, "a pooled connection carries no Domain")
		require.NotEqual(t, "lorebase_app", role, "a pooled connection is back to its login role")
	}
	for _, c := range held {
		c.Release()
	}
}
