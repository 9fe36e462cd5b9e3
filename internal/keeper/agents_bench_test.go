package keeper_test

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/internal/keepertest"
)

// benchKeeper starts Keeper without the OpenAPI check (which would time
// the validator) over a Domain of 1,000 Suppliers and 1,000 Parts, each
// Part linked to a Supplier.
func benchKeeper(b *testing.B, opts ...func(*config.Config)) (base, token string) {
	b.Helper()
	e := envOf(b, keepertest.New(b, keepertest.Options{AdminToken: testAdminToken, Config: all(opts),
		Log: slog.New(slog.DiscardHandler), NoJobs: true}))
	admin := e.withSupply("bench")
	var changes []map[string]any
	for i := range 1000 {
		changes = append(changes,
			put("Supplier", fmt.Sprintf("S-%04d", i), map[string]any{"name": fmt.Sprintf("Supplier %s %d", words[i%len(words)], i)}),
			put("Part", fmt.Sprintf("P-%04d", i), map[string]any{"name": fmt.Sprintf("Part %s %d", words[(i*7)%len(words)], i),
				"maker": fmt.Sprintf("S-%04d", i%1000)}),
			map[string]any{"op": "link", "relation": "supplied_by", "from": fmt.Sprintf("P-%04d", i), "to": fmt.Sprintf("S-%04d", (i*13)%1000)})
	}
	e.commit("bench", "main", admin, commitBody("load", changes...))
	return e.URL, admin
}

var words = []string{"bolt", "nut", "washer", "gear", "spring", "valve", "bearing", "flange", "gasket", "rivet"}

// variant is one way of sending a read: to which Keeper, with which
// headers.
type variant struct {
	name, base, token string
	header            []string
}

// benchReads times one kind of read under several variants over loopback
// HTTP, one request at a time, the variants taking turns request by
// request so that the load of a shared machine falls on all of them
// alike. It reports each variant's p50 and p95.
func benchReads(b *testing.B, path func(i int) string, variants ...variant) {
	b.Helper()
	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 4}}
	get := func(v variant, i int) time.Duration {
		req, _ := http.NewRequest(http.MethodGet, v.base+path(i), nil)
		req.Header.Set("Authorization", "Bearer "+v.token)
		for j := 0; j+1 < len(v.header); j += 2 {
			req.Header.Set(v.header[j], v.header[j+1])
		}
		start := time.Now()
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		d := time.Since(start)
		if resp.StatusCode != http.StatusOK {
			b.Fatalf("%s: %d", path(i), resp.StatusCode)
		}
		return d
	}
	for i := range 200 { // warm up: plans, pools, cache
		for _, v := range variants {
			get(v, i)
		}
	}
	durations := make([][]time.Duration, len(variants))
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		for k := range variants {
			k := (k + i) % len(variants) // each goes first in turn
			durations[k] = append(durations[k], get(variants[k], i))
		}
	}
	b.StopTimer()
	for k, v := range variants {
		ds := durations[k]
		slices.Sort(ds)
		pct := func(p float64) float64 { return float64(ds[int(float64(len(ds)-1)*p)].Microseconds()) / 1000 }
		b.ReportMetric(pct(0.50), v.name+"-p50-ms")
		b.ReportMetric(pct(0.95), v.name+"-p95-ms")
	}
}

// BenchmarkAgentReads measures what traces and the response cache do to
// get, search and neighborhood over loopback HTTP. Two Keepers over one
// loaded Domain each: "plain" has the cache off; "traced" is the same
// Keeper with every request a step of a trace; "cached" is the Keeper with
// the cache on, reading the same 200 keys or queries again and again (so
// after warm-up its answers come from the cache). The three take turns
// request by request.
//
//	go test ./internal/keeper -run '^$' -bench BenchmarkAgentReads -benchtime 2000x
func BenchmarkAgentReads(b *testing.B) {
	plainURL, plainToken := benchKeeper(b, func(c *config.Config) { c.HTTP.CacheMaxBytes = 0 })
	cachedURL, cachedToken := benchKeeper(b)
	reads := map[string]func(i int) string{
		"get": func(i int) string {
			return "/v1/domains/bench/branches/main/records/" + fmt.Sprintf("S-%04d", (i*37)%200)
		},
		"search": func(i int) string {
			return "/v1/domains/bench/branches/main/search?q=" + words[i%len(words)] + "+" + fmt.Sprint(i%20)
		},
		"neighborhood": func(i int) string {
			return fmt.Sprintf("/v1/domains/bench/branches/main/records/P-%04d/neighborhood", (i*37)%200)
		},
	}
	for _, name := range []string{"get", "search", "neighborhood"} {
		b.Run(name, func(b *testing.B) {
			benchReads(b, reads[name],
				variant{name: "plain", base: plainURL, token: plainToken},
				variant{name: "traced", base: plainURL, token: plainToken, header: []string{keeper.TraceHeader, "bench-" + name}},
				variant{name: "cached", base: cachedURL, token: cachedToken})
		})
	}
}
