package web_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"net/http"
	"net/http/httptest"
	"os"
	"sort"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/supply"
)

// BenchmarkPages measures every reading page's server time (the whole
// request through Keeper's handler: the session, the in-process API calls
// and the template) at a supply Domain loaded through the commit pipeline,
// and reports p50 and p95 per page. LOREBASE_WEB_BENCH_SCALE sets the scale
// (about 185 Records per unit; 100 by default). LOREBASE_WEB_BENCH_DATABASE,
// the owner's URL of an existing database on the test server, keeps the
// loaded Domain there: a later run with the same scale measures it again
// without loading it.
func BenchmarkPages(b *testing.B) {
	scale := 100
	if s := os.Getenv("LOREBASE_WEB_BENCH_SCALE"); s != "" {
		n, err := strconv.Atoi(s)
		require.NoError(b, err)
		scale = n
	}
	keep := os.Getenv("LOREBASE_WEB_BENCH_DATABASE")
	e := newEnvOn(b, httptest.NewServer, keep)
	gen, err := supply.New(supply.Config{Seed: 1, Scale: scale, ExtraLinks: 1})
	require.NoError(b, err)
	counts := gen.Counts()
	revs := benchLoaded(b, e, counts.Records())
	if revs == nil {
		e.api(http.StatusCreated, "POST", "/v1/domains", adminToken, map[string]any{"name": "supply"})
	}
	name := "admin"
	if revs != nil {
		name = fmt.Sprintf("admin-%d", time.Now().UnixNano()) // one per run
	}
	admin := e.token("supply", name, "admin")
	if revs == nil {
		e.api(http.StatusOK, "PUT", bpath("supply", "main")+"/schema", admin, supply.Schema)
		start := time.Now()
		for batch := range gen.Batches(5000, 0) {
			m := e.api(http.StatusCreated, "POST", bpath("supply", "main")+"/commits", admin,
				map[string]any{"message": "load", "author": "bench", "changes": batch})
			revs = append(revs, m["revision"].(string))
		}
		// As the perf harness does after a load: fresh statistics.
		// ANALYZE of a 1M-Record database can outlast the pool's
		// statement timeout on a busy machine.
		require.NoError(b, pgx.BeginFunc(context.Background(), e.Store.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(context.Background(), "SET LOCAL statement_timeout = 0"); err != nil {
				return err
			}
			_, err := tx.Exec(context.Background(), "ANALYZE")
			return err
		}))
		b.Logf("loaded %d Records and %d Links in %s", counts.Records(), counts.Links(), time.Since(start).Round(time.Millisecond))
	} else {
		b.Logf("measuring the %d Records loaded before (%d commits)", counts.Records(), len(revs))
	}

	br := e.browser()
	br.signIn(admin)
	rng := rand.New(rand.NewPCG(7, 7))
	part := func() string { return gen.Key(supply.KindPart, rng.IntN(counts.Parts)) }
	supplier := func() string { return gen.Key(supply.KindSupplier, rng.IntN(counts.Suppliers)) }
	words := supply.Vocabulary()
	typo := func() string {
		w := words[rng.IntN(len(words))]
		return w[:len(w)-1] + "x" + w[len(w)-1:]
	}
	pages := []struct {
		name string
		path func() string
	}{
		{"domain", func() string { return "/d/supply/" }},
		{"records of a Kind", func() string { return "/d/supply/records?kind=Part&after=" + part() }},
		{"record", func() string { return "/d/supply/records/" + part() }},
		{"record at a Revision", func() string { return "/d/supply/records/" + supplier() + "?at=" + revs[len(revs)-1] }},
		{"search", func() string { return "/d/supply/search?q=" + words[rng.IntN(len(words))] }},
		{"search with a typo", func() string { return "/d/supply/search?q=" + typo() }},
		{"graph (depth 2)", func() string { return "/d/supply/graph?depth=2&key=" + part() }},
		{"log", func() string { return "/d/supply/revisions" }},
		{"revision", func() string { return "/d/supply/revisions/" + revs[rng.IntN(len(revs))] }},
		{"revision, a later page", func() string { return "/d/supply/revisions/" + revs[rng.IntN(len(revs))] + "?from=4000" }},
		{"schema", func() string { return "/d/supply/schema" }},
	}
	// The API reads behind the slowest pages, for comparison.
	api := []struct {
		name string
		path func() string
	}{
		{"api neighborhood (depth 2)", func() string { return bpath("supply", "main") + "/records/" + part() + "/neighborhood?depth=2" }},
		{"api revision", func() string { return "/v1/domains/supply/revisions/" + revs[rng.IntN(len(revs))] }},
		{"api revision, a later page", func() string {
			return "/v1/domains/supply/revisions/" + revs[rng.IntN(len(revs))] + "?limit=200&after=4000"
		}},
		{"api record at a Revision", func() string { return bpath("supply", "main") + "/records/" + supplier() + "?at=" + revs[len(revs)-1] }},
	}
	// Where the search page's time goes, every read measured under the
	// same load, one after the other, on queries seen once (a random
	// letter at a random place of a word; the response cache keeps answers
	// by request): the API search at limits 20 and 50 (the page's), then
	// the page with the same query (its search then a response-cache hit:
	// the page's own work), the page with a new query (all of it), and
	// the page's other API reads (the branches with and without their
	// own-row counts).
	b.Run("search with a typo, the page and its reads", func(b *testing.B) {
		fresh := func() string {
			w := words[rng.IntN(len(words))]
			i := 1 + rng.IntN(len(w)-1)
			return w[:i] + string(rune('a'+rng.IntN(26))) + w[i:]
		}
		reads := []struct {
			name string
			path func(q string) string
		}{
			{"search20", func(q string) string { return bpath("supply", "main") + "/search?limit=20&q=" + q }},
			{"search50", func(q string) string { return bpath("supply", "main") + "/search?limit=50&q=" + q }},
			{"page-cached-search", func(q string) string { return "/d/supply/search?q=" + q }},
			{"page", func(string) string { return "/d/supply/search?q=" + fresh() }},
			{"whoami", func(string) string { return "/v1/whoami" }},
			{"branches", func(string) string { return "/v1/domains/supply/branches?limit=100" }},
			{"branches-without-own", func(string) string { return "/v1/domains/supply/branches?limit=100&own=false" }},
			{"schema", func(string) string { return bpath("supply", "main") + "/schema" }},
		}
		d := make([][]time.Duration, len(reads))
		for n := 0; b.Loop(); n++ {
			q := fresh()
			order := []int{0, 1, 2, 3, 4, 5, 6, 7}
			if n%2 == 1 {
				// The two API searches of a query in either order: the
				// second finds the pages the first read in memory.
				order[0], order[1] = 1, 0
			}
			for _, i := range order {
				rd := reads[i]
				path := rd.path(q)
				t0 := time.Now()
				var status int
				if path[1] == 'v' {
					status = e.apiStatus("GET", path, admin)
				} else {
					status = br.get(path).Status
				}
				d[i] = append(d[i], time.Since(t0))
				if status != http.StatusOK {
					b.Fatalf("GET %s: %d", path, status)
				}
			}
		}
		for i, rd := range reads {
			p50, p95 := percentiles(d[i])
			b.ReportMetric(p50, rd.name+"-p50-ms")
			b.ReportMetric(p95, rd.name+"-p95-ms")
		}
		b.ReportMetric(0, "ns/op")
	})
	// The Records page's count from main's Record counters, and from the
	// bounded walk it took before them (main made to keep no counters for
	// that request), one after the other on fresh keyset positions.
	b.Run("records of a Kind, counted by the counters and by the walk", func(b *testing.B) {
		ctx := context.Background()
		setWalk := func(walk bool) {
			_, err := e.Store.Pool.Exec(ctx, `UPDATE refs SET counts_from = CASE WHEN $1 THEN NULL ELSE 0 END
				WHERE name = 'main'`, walk)
			require.NoError(b, err)
		}
		b.Cleanup(func() { setWalk(false) })
		var counter, walk []time.Duration
		// Keyset positions used once each: the response cache keeps
		// answers by request, and the counters leave the head unchanged.
		next := rng.IntN(counts.Parts)
		for b.Loop() {
			for _, w := range []bool{false, true} {
				setWalk(w)
				next = (next + 7) % counts.Parts
				path := "/d/supply/records?kind=Part&after=" + gen.Key(supply.KindPart, next)
				t0 := time.Now()
				pg := br.get(path)
				took := time.Since(t0)
				if pg.Status != http.StatusOK {
					b.Fatalf("GET %s: %d", path, pg.Status)
				}
				if w {
					walk = append(walk, took)
					require.Contains(b, pg.Body, "More than 10000 Records")
				} else {
					counter = append(counter, took)
					require.Contains(b, pg.Body, ">"+strconv.Itoa(counts.Parts)+" Records.<")
				}
			}
		}
		p50, p95 := percentiles(counter)
		b.ReportMetric(p50, "counters-p50-ms")
		b.ReportMetric(p95, "counters-p95-ms")
		p50, p95 = percentiles(walk)
		b.ReportMetric(p50, "walk-p50-ms")
		b.ReportMetric(p95, "walk-p95-ms")
		b.ReportMetric(0, "ns/op")
	})
	for _, p := range append(pages, api...) {
		b.Run(p.name, func(b *testing.B) {
			var d []time.Duration
			for b.Loop() {
				path := p.path()
				t0 := time.Now()
				var status int
				if path[1] == 'v' {
					status = e.apiStatus("GET", path, admin)
				} else {
					status = br.get(path).Status
				}
				d = append(d, time.Since(t0))
				if status != http.StatusOK {
					b.Fatalf("GET %s: %d", path, status)
				}
			}
			p50, p95 := percentiles(d)
			b.ReportMetric(p50, "p50-ms")
			b.ReportMetric(p95, "p95-ms")
			b.ReportMetric(0, "ns/op")
		})
	}
}

// percentiles are the p50 and p95 of d in milliseconds (d is sorted).
func percentiles(d []time.Duration) (p50, p95 float64) {
	sort.Slice(d, func(i, j int) bool { return d[i] < d[j] })
	q := func(f float64) float64 { return float64(d[int(f*float64(len(d)-1))].Microseconds()) / 1000 }
	return q(0.5), q(0.95)
}

// benchLoaded is the load's Revisions, oldest first, when the database
// (LOREBASE_WEB_BENCH_DATABASE, kept between runs) holds the complete load
// of Domain supply from a run before; nil when it holds no such Domain.
func benchLoaded(b *testing.B, e *env, records int) []string {
	b.Helper()
	ctx := context.Background()
	var domains, n int
	require.NoError(b, e.Store.Pool.QueryRow(ctx, `SELECT count(DISTINCT d.id)::int, coalesce(sum(c.records), 0)::int FROM domains d
		LEFT JOIN refs r ON r.domain_id = d.id AND r.name = 'main'
		LEFT JOIN mat_counts c ON c.domain_id = d.id AND c.branch_id = r.id
		WHERE d.name = 'supply'`).Scan(&domains, &n))
	if domains == 0 {
		return nil
	}
	require.Equal(b, records, n, "the kept database holds a partial or different load of Domain supply: drop it, or the Domain")
	rows, err := e.Store.Pool.Query(ctx, `SELECT r.id FROM revisions r JOIN domains d ON d.id = r.domain_id
		WHERE d.name = 'supply' AND r.message = 'load' ORDER BY r.seq`)
	require.NoError(b, err)
	revs, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(b, err)
	require.NotEmpty(b, revs)
	return revs
}
