package keeper_test

import (
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/apispec/specvalidate"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keeper"
)

func TestOpenAPIDocumentsEveryRoute(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	doc := e.must(http.StatusOK, "GET", "/v1/openapi.json", "", nil).JSON(t)
	require.Equal(t, "3.1.0", doc["openapi"])

	v, err := specvalidate.New()
	require.NoError(t, err)
	routes, ok := e.Server.Handler().(chi.Routes)
	require.True(t, ok, "the handler is a chi router")
	param := regexp.MustCompile(`\{[^}]+\}`)
	n := 0
	require.NoError(t, chi.Walk(routes, func(method, route string, _ http.Handler, _ ...func(http.Handler) http.Handler) error {
		path := param.ReplaceAllString(strings.TrimSuffix(route, "/*"), "x")
		if !specvalidate.InAPI(path) {
			return nil // the browser UI's pages
		}
		_, _, ok := v.Operation(method, path)
		if !ok {
			t.Errorf("%s %s is served but not documented in internal/apispec/openapi.yaml", method, route)
		}
		n++
		return nil
	}))
	require.Greater(t, n, 20)
}

// metric reads one sample of /metrics ("" when absent).
func (e *env) metric(name string) float64 {
	e.t.Helper()
	body := e.must(http.StatusOK, "GET", "/metrics", "", nil).String()
	for _, line := range strings.Split(body, "\n") {
		if rest, ok := strings.CutPrefix(line, name+" "); ok {
			f, err := strconv.ParseFloat(strings.TrimSpace(rest), 64)
			require.NoError(e.t, err)
			return f
		}
	}
	return 0
}

// traceSteps polls a trace until it holds n steps (they are written off
// the request path).
func (e *env) traceSteps(domain, token, id string, n int) []keeper.TraceStep {
	e.t.Helper()
	var page struct {
		ID    string             `json:"id"`
		Steps []keeper.TraceStep `json:"steps"`
	}
	require.Eventually(e.t, func() bool {
		r := e.do("GET", "/v1/domains/"+domain+"/traces/"+id, token, nil)
		if r.Status != http.StatusOK {
			return false
		}
		r.Decode(e.t, &page)
		return len(page.Steps) >= n
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(e.t, id, page.ID)
	return page.Steps
}

func TestTraces(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	writer := e.token("acme", "scout-7", "writer", "agent/*")
	e.createDomain("other")
	otherAdmin := e.token("other", "admin", "admin")
	e.must(http.StatusCreated, "POST", "/v1/domains/acme/branches", writer, map[string]any{"name": "agent/scout-7", "from": "main"},
		keeper.TraceHeader, "task-1")
	e.must(http.StatusOK, "GET", branchPath("acme", "agent/scout-7")+"/search?q=acme", writer, nil, keeper.TraceHeader, "task-1")
	body := commitBody("Add Acme", put("Supplier", "S-1", map[string]any{"name": "Acme"}),
		map[string]any{"op": "put", "kind": "Supplier", "key": "S-2", "values": map[string]any{"name": "Bolt Co"},
			"provenance": map[string]any{"source": "https://example.com/bolt"}})
	body["provenance"] = map[string]any{"tool": "web.fetch"}
	rev := e.commit("acme", "agent/scout-7", writer, body)
	_ = rev
	r := e.must(http.StatusCreated, "POST", branchPath("acme", "agent/scout-7")+"/commits", writer,
		commitBody("Patch Acme", map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "DE"}}),
		keeper.TraceHeader, "task-1")
	traced := r.JSON(t)["revision"].(string)
	e.must(http.StatusNotFound, "GET", branchPath("acme", "agent/scout-7")+"/records/nope", writer, nil, keeper.TraceHeader, "task-1")

	steps := e.traceSteps("acme", writer, "task-1", 4)
	require.Len(t, steps, 4)
	want := []struct {
		method, route string
		status        int
	}{
		{"POST", "/v1/domains/{domain}/branches", 201},
		{"GET", "/v1/domains/{domain}/branches/{branch}/search", 200},
		{"POST", "/v1/domains/{domain}/branches/{branch}/commits", 201},
		{"GET", "/v1/domains/{domain}/branches/{branch}/records/{key}", 404},
	}
	for i, w := range want {
		require.Equal(t, int64(i+1), steps[i].Seq)
		require.Equal(t, w.method, steps[i].Method)
		require.Equal(t, w.route, steps[i].Route)
		require.Equal(t, w.status, steps[i].Status)
		require.Equal(t, "scout-7", steps[i].Token)
		require.GreaterOrEqual(t, steps[i].DurationMS, 0.0)
	}
	require.Equal(t, "agent/scout-7", steps[1].Branch)
	require.Equal(t, traced, steps[2].Revision, "the commit step names the Revision it wrote")
	require.Empty(t, steps[1].Revision)

	// The commit names the trace; lineage leads from the value to it.
	var rv struct {
		Provenance map[string]any `json:"provenance"`
	}
	e.must(http.StatusOK, "GET", "/v1/domains/acme/revisions/"+traced, writer, nil).Decode(t, &rv)
	require.Equal(t, "task-1", rv.Provenance["trace"])
	var lin struct {
		Values map[string]struct {
			Revision   string         `json:"revision"`
			Provenance map[string]any `json:"provenance"`
		} `json:"values"`
	}
	e.must(http.StatusOK, "GET", branchPath("acme", "agent/scout-7")+"/records/S-1/lineage", writer, nil).Decode(t, &lin)
	require.Equal(t, traced, lin.Values["country"].Revision)
	require.Equal(t, "task-1", lin.Values["country"].Provenance["trace"])

	// A traced commit with provenance of its own keeps it and adds the trace.
	body["changes"].([]map[string]any)[1]["values"] = map[string]any{"name": "Bolt Company"}
	r = e.must(http.StatusCreated, "POST", branchPath("acme", "agent/scout-7")+"/commits", writer, body, keeper.TraceHeader, "task-2")
	e.must(http.StatusOK, "GET", "/v1/domains/acme/revisions/"+r.JSON(t)["revision"].(string), writer, nil).Decode(t, &rv)
	require.Equal(t, map[string]any{"tool": "web.fetch", "trace": "task-2"}, rv.Provenance)
	e.must(http.StatusOK, "GET", branchPath("acme", "agent/scout-7")+"/records/S-2/lineage", writer, nil).Decode(t, &lin)
	require.Equal(t, map[string]any{"source": "https://example.com/bolt", "trace": "task-2"}, lin.Values["name"].Provenance)

	// Another Domain's token sees no trace of this one, even with the
	// same id; its own trace of that id is its own.
	e.must(http.StatusNotFound, "GET", "/v1/domains/acme/traces/task-1", otherAdmin, nil)
	e.must(http.StatusOK, "GET", "/v1/domains/other", otherAdmin, nil, keeper.TraceHeader, "task-1")
	other := e.traceSteps("other", otherAdmin, "task-1", 1)
	require.Len(t, other, 1)
	require.Len(t, e.traceSteps("acme", admin, "task-1", 4), 4)

	// Pages.
	var page struct {
		Steps []keeper.TraceStep `json:"steps"`
		Next  string             `json:"next"`
	}
	e.must(http.StatusOK, "GET", "/v1/domains/acme/traces/task-1?limit=3", writer, nil).Decode(t, &page)
	require.Len(t, page.Steps, 3)
	require.Equal(t, "3", page.Next)
	page.Next = ""
	e.must(http.StatusOK, "GET", "/v1/domains/acme/traces/task-1?limit=3&after=3", writer, nil).Decode(t, &page)
	require.Len(t, page.Steps, 1)
	require.Empty(t, page.Next)
}

func TestTraceHostileInput(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.withSupply("acme")
	writer := e.token("acme", "w", "writer")
	before := e.rowCounts()
	for name, id := range map[string]string{
		"too long":  strings.Repeat("x", 129),
		"control":   "a\tb",
		"non-ascii": "tâche",
	} {
		t.Run(name, func(t *testing.T) {
			r := e.must(http.StatusBadRequest, "POST", branchPath("acme", "main")+"/commits", writer,
				commitBody("x", put("Supplier", "S-9", map[string]any{"name": "X"})), keeper.TraceHeader, id)
			require.Contains(t, r.String(), keeper.TraceHeader)
		})
	}
	require.Equal(t, before, e.rowCounts(), "nothing written")
	e.must(http.StatusBadRequest, "GET", "/v1/domains/acme/traces/"+strings.Repeat("x", 200), writer, nil)
	e.must(http.StatusNotFound, "GET", "/v1/domains/acme/traces/never", writer, nil)
	e.must(http.StatusBadRequest, "GET", "/v1/domains/acme/traces/never?after=-1", writer, nil)
}

func TestETagsAndResponseCache(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("acme")
	e.commit("acme", "main", admin, commitBody("a", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	// Another Domain with the same key and another value: the cache keeps
	// Domains apart.
	otherAdmin := e.withSupply("other")
	e.commit("other", "main", otherAdmin, commitBody("a", put("Supplier", "S-1", map[string]any{"name": "Other"})))

	paths := []string{
		branchPath("acme", "main") + "/records/S-1",
		branchPath("acme", "main") + "/records?kind=Supplier",
		branchPath("acme", "main") + "/records/S-1/links",
		branchPath("acme", "main") + "/records/S-1/neighborhood",
		branchPath("acme", "main") + "/records/S-1/history",
		branchPath("acme", "main") + "/records/S-1/lineage",
		branchPath("acme", "main") + "/search?q=acme",
		branchPath("acme", "main") + "/resolve?mention=acme",
		branchPath("acme", "main") + "/revisions",
	}
	var log struct {
		Revisions []struct {
			ID string `json:"id"`
		} `json:"revisions"`
	}
	e.must(http.StatusOK, "GET", branchPath("acme", "main")+"/revisions", admin, nil).Decode(t, &log)
	paths = append(paths, "/v1/domains/acme/revisions/"+log.Revisions[0].ID)
	hits := e.metric(`lorebase_response_cache_requests_total{result="hit"}`)
	for _, p := range paths {
		first := e.must(http.StatusOK, "GET", p, admin, nil)
		etag := first.Header.Get("ETag")
		require.NotEmpty(t, etag, p)
		again := e.must(http.StatusOK, "GET", p, admin, nil)
		require.Equal(t, etag, again.Header.Get("ETag"), p)
		require.Equal(t, first.String(), again.String(), p)
		nm := e.must(http.StatusNotModified, "GET", p, admin, nil, "If-None-Match", etag)
		require.Empty(t, nm.Body)
		require.Equal(t, etag, nm.Header.Get("ETag"))
		e.must(http.StatusOK, "GET", p, admin, nil, "If-None-Match", `"something-else"`)
	}
	require.GreaterOrEqual(t, e.metric(`lorebase_response_cache_requests_total{result="hit"}`)-hits, float64(2*len(paths)))
	require.Greater(t, e.metric(`lorebase_response_cache_requests_total{result="not_modified"}`), 0.0)
	require.Greater(t, e.metric(`lorebase_response_cache_bytes`), 0.0)

	// The same path in the other Domain answers its own value.
	var rec struct {
		Values map[string]any `json:"values"`
	}
	e.must(http.StatusOK, "GET", branchPath("other", "main")+"/records/S-1", otherAdmin, nil).Decode(t, &rec)
	require.Equal(t, "Other", rec.Values["name"])
	// A token of acme cannot reach other's entries.
	e.must(http.StatusNotFound, "GET", branchPath("other", "main")+"/records/S-1", admin, nil)

	// A commit moves the head: new ETag, new answer.
	old := e.must(http.StatusOK, "GET", paths[0], admin, nil).Header.Get("ETag")
	e.commit("acme", "main", admin, commitBody("b", map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "DE"}}))
	r := e.must(http.StatusOK, "GET", paths[0], admin, nil, "If-None-Match", old)
	require.NotEqual(t, old, r.Header.Get("ETag"))
	r.Decode(t, &rec)
	require.Equal(t, "DE", rec.Values["country"])

	// A read as of a Revision keeps its ETag whatever the head does.
	var rv struct {
		Revision string `json:"revision"`
	}
	r.Decode(t, &rv)
	at := e.must(http.StatusOK, "GET", paths[0]+"?at="+rv.Revision, admin, nil).Header.Get("ETag")
	e.commit("acme", "main", admin, commitBody("c", map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "FR"}}))
	e.must(http.StatusNotModified, "GET", paths[0]+"?at="+rv.Revision, admin, nil, "If-None-Match", at)
	// A branch deleted and made again under the same name shares nothing.
	e.must(http.StatusCreated, "POST", "/v1/domains/acme/branches", admin, map[string]any{"name": "tmp", "from": "main"})
	tmpTag := e.must(http.StatusOK, "GET", branchPath("acme", "tmp")+"/records/S-1", admin, nil).Header.Get("ETag")
	e.must(http.StatusAccepted, "DELETE", branchPath("acme", "tmp"), admin, nil)
	e.must(http.StatusNotFound, "GET", branchPath("acme", "tmp")+"/records/S-1", admin, nil, "If-None-Match", tmpTag)

	// Errors carry no ETag and are not kept.
	nf := e.must(http.StatusNotFound, "GET", branchPath("acme", "main")+"/records/none", admin, nil)
	require.Empty(t, nf.Header.Get("ETag"))
}

func TestResponseCacheOff(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.HTTP.CacheMaxBytes = 0 })
	admin := e.withSupply("acme")
	e.commit("acme", "main", admin, commitBody("a", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	p := branchPath("acme", "main") + "/records/S-1"
	etag := e.must(http.StatusOK, "GET", p, admin, nil).Header.Get("ETag")
	e.must(http.StatusOK, "GET", p, admin, nil)
	e.must(http.StatusNotModified, "GET", p, admin, nil, "If-None-Match", etag)
	require.Zero(t, e.metric(`lorebase_response_cache_requests_total{result="hit"}`))
}

func TestRateLimits(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) {
		c.HTTP.RateLimit = config.RateLimit{RequestsPerSecond: 5, Burst: 5, HeavyRequestsPerSecond: 1, HeavyBurst: 1}
	})
	e.createDomain("acme")
	a := e.token("acme", "a", "admin")
	b := e.token("acme", "b", "reader")
	// Bootstrap calls above spent the bootstrap's budget, not a's or b's.
	search := branchPath("acme", "main") + "/search?q=x"
	e.must(http.StatusOK, "GET", search, a, nil)
	r := e.must(http.StatusTooManyRequests, "GET", search, a, nil)
	require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
	require.NotEmpty(t, r.Header.Get("Retry-After"))
	n, err := strconv.Atoi(r.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.GreaterOrEqual(t, n, 1)
	require.Contains(t, r.JSON(t)["detail"], "rate limit")
	// The tighter class does not stop cheap reads, and each token has its own.
	e.must(http.StatusOK, "GET", "/v1/domains/acme", a, nil)
	e.must(http.StatusOK, "GET", search, b, nil)
	statuses := map[int]int{}
	for range 8 {
		statuses[e.do("GET", "/v1/domains/acme", b, nil).Status]++
	}
	require.Positive(t, statuses[http.StatusTooManyRequests], "%v", statuses)
	require.Positive(t, e.metric(`lorebase_rate_limited_total{class="general"}`))
	require.Positive(t, e.metric(`lorebase_rate_limited_total{class="search, neighborhood and merge"}`))
}
