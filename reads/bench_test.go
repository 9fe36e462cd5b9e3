package reads_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// BenchmarkReads times each read as lorebase_app over a generated Domain
// (LOREBASE_BENCH_RECORDS Records, default 20,000) and reports p50/p95.
func BenchmarkReads(b *testing.B) {
	s := newStore(b)
	f := newFixture(b, s, "bench")
	n := benchRecords()
	generate(b, f, n)
	ns := n / 10
	key := func(i int) string {
		if i%10 == 0 {
			return fmt.Sprintf("S-%d", i%ns+1)
		}
		return fmt.Sprintf("P-%d", i%(n-ns)+1)
	}
	for _, bc := range []struct {
		name string
		run  func(i int) error
	}{
		{"get", func(i int) error { _, err := f.r.Get(f.ctx, f.domain, "main", key(i), ""); return err }},
		{"page50", func(i int) error {
			_, err := f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Part", After: key(i*10 + 1), Limit: 50})
			return err
		}},
		{"links", func(i int) error {
			_, err := f.r.Links(f.ctx, f.domain, "main", fmt.Sprintf("S-%d", i%ns+1), reads.LinksQuery{})
			return err
		}},
		{"neighborhood2", func(i int) error {
			_, err := f.r.Neighborhood(f.ctx, f.domain, "main", key(i), 2, 200)
			return err
		}},
		{"query_by_attribute", func(i int) error {
			_, err := f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: fmt.Sprintf("C%d", i%50)})
			return err
		}},
		{"search", func(i int) error {
			_, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: fmt.Sprintf("part w%d", i*11%997)})
			return err
		}},
		{"search_typo", func(i int) error {
			_, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: fmt.Sprintf("suplpier w%d", i*7%997)})
			return err
		}},
		{"search_partial", func(i int) error {
			_, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: fmt.Sprintf("w%d w%d w%d", i%997, (i+5)%997, (i+9)%997)})
			return err
		}},
		{"resolve", func(i int) error { _, err := f.r.Resolve(f.ctx, f.domain, "main", "supplier w7", "", 10); return err }},
		{"history", func(i int) error { _, err := f.r.History(f.ctx, f.domain, "main", key(i), 20, ""); return err }},
		{"lineage", func(i int) error { _, err := f.r.Lineage(f.ctx, f.domain, "main", key(i)); return err }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				if err := bc.run(i); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95_ms")
			}
		})
	}
}

// BenchmarkOverlayReads compares each read on main and on the overlay "ov"
// of overlayDomain (LOREBASE_BENCH_RECORDS Records on main, about a
// hundred own rows on the overlay, main moved on after the fork), as
// lorebase_app, same keys on both, reporting p50/p95 per read and branch.
func BenchmarkOverlayReads(b *testing.B) {
	s := newStore(b)
	n := benchRecords()
	f := overlayDomain(b, s, n)
	ns := n / 10
	key := func(i int) string {
		if i%10 == 0 {
			return fmt.Sprintf("S-%d", i%ns+1)
		}
		return fmt.Sprintf("P-%d", i%(n-ns)+1)
	}
	for _, bc := range []struct {
		name string
		run  func(br string, i int) error
	}{
		{"get", func(br string, i int) error { _, err := f.r.Get(f.ctx, f.domain, br, key(i), ""); return err }},
		{"page50", func(br string, i int) error {
			_, err := f.r.Page(f.ctx, f.domain, br, reads.PageQuery{Kind: "Part", After: key(i*10 + 1), Limit: 50})
			return err
		}},
		{"links", func(br string, i int) error {
			_, err := f.r.Links(f.ctx, f.domain, br, fmt.Sprintf("S-%d", i%ns+1), reads.LinksQuery{})
			return err
		}},
		{"neighborhood2", func(br string, i int) error {
			_, err := f.r.Neighborhood(f.ctx, f.domain, br, key(i), 2, 200)
			return err
		}},
		{"query_by_attribute", func(br string, i int) error {
			_, err := f.r.Page(f.ctx, f.domain, br, reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: fmt.Sprintf("C%d", i%50)})
			return err
		}},
		{"search", func(br string, i int) error {
			_, err := f.r.Search(f.ctx, f.domain, br, reads.SearchQuery{Q: fmt.Sprintf("part w%d", i*11%997)})
			return err
		}},
	} {
		for _, br := range []string{"main", "ov"} {
			b.Run(bc.name+"/"+br, func(b *testing.B) {
				lat := make([]time.Duration, 0, b.N)
				for i := 0; b.Loop(); i++ {
					t0 := time.Now()
					if err := bc.run(br, i); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
				if len(lat) > 0 {
					b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
					b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95_ms")
				}
			})
		}
	}
}

// BenchmarkSearchCommonWord times the search for a word held by a fifth of
// a generated Domain's Records (LOREBASE_BENCH_RECORDS, default 20,000):
// the word "common" is added to the title of every fifth Record.
func BenchmarkSearchCommonWord(b *testing.B) {
	s := newStore(b)
	f := commonWordDomain(b, s, benchRecords())
	for _, bc := range []struct{ name, q string }{
		{"common", "common"},
		{"common_part", "common part"},
		{"common_rare", fmt.Sprintf("common w%d", 7)},
	} {
		b.Run(bc.name, func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for b.Loop() {
				t0 := time.Now()
				if _, err := f.r.Search(f.ctx, f.domain, "main", reads.SearchQuery{Q: bc.q}); err != nil {
					b.Fatal(err)
				}
				lat = append(lat, time.Since(t0))
			}
			sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
			if len(lat) > 0 {
				b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
				b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95_ms")
			}
		})
	}
}

// commonWordDomain generates a Domain of n Records and adds the word
// "common" to the title (and search vector) of every fifth Record, then
// vacuums.
func commonWordDomain(t testing.TB, s *store.Store, n int) *fixture {
	t.Helper()
	f := newFixture(t, s, "common")
	generate(t, f, n)
	_, err := s.Pool.Exec(f.ctx, `UPDATE mat_records SET title = title || ' common',
			"values" = jsonb_set("values", '{name}', to_jsonb(title || ' common')),
			search = setweight(to_tsvector('simple', title || ' common'), 'A')
		WHERE domain_id = $1 AND branch_id = $2 AND key <> 'S-0' AND split_part(key, '-', 2)::int % 5 = 0`, f.domain, f.branch)
	require.NoError(t, err)
	// VACUUM moves the GIN index's pending entries into the index (as
	// autovacuum does), so the search reads the index as it stands in
	// steady state rather than a pending list of fresh rows.
	for _, st := range []string{"VACUUM (ANALYZE) mat_records", "ANALYZE mat_lexicon"} {
		_, err := s.Pool.Exec(f.ctx, st)
		require.NoError(t, err)
	}
	return f
}
