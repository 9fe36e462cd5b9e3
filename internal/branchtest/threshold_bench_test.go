package branchtest_test

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// BenchmarkOverlayAttributeQuery measures the query by an indexed Attribute
// on an overlay holding N own Records of the Kind, without and with
// per-Attribute indexes of the overlay's own: the measurement behind
// branches.overlay_index_threshold. main holds LOREBASE_BENCH_RECORDS
// Suppliers (default 20000) with its index built.
func BenchmarkOverlayAttributeQuery(b *testing.B) {
	ctx := context.Background()
	total := 20000
	if v := os.Getenv("LOREBASE_BENCH_RECORDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(b, err)
		total = n
	}
	s, err := store.Open(ctx, pgtest.NewDatabase(b), store.Config{MaxConns: 4})
	require.NoError(b, err)
	b.Cleanup(s.Close)
	d, err := s.CreateDomain(ctx, "bench")
	require.NoError(b, err)
	p := commit.New(s, commit.Config{OverlayIndexThreshold: -1})
	_, err = p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(schemaDoc), Author: "b", Message: "schema"})
	require.NoError(b, err)
	countries := []string{"DE", "FR", "NL", "SE", "PL", "IT", "ES", "AT", "BE", "DK"}
	putAll := func(branch string, n int, tag string) {
		for start := 0; start < n; start += 10000 {
			var changes []commit.Change
			for i := start; i < min(n, start+10000); i++ {
				v, _ := json.Marshal(map[string]any{"name": tag + strconv.Itoa(i), "country": countries[i%len(countries)]})
				changes = append(changes, commit.Change{Op: "put", Kind: "Supplier", Key: fmt.Sprintf("S-%07d", i), Values: v})
			}
			_, err := p.Commit(ctx, d.ID, branch, &commit.Request{Message: "load", Author: "b", Changes: changes}, "")
			require.NoError(b, err)
		}
	}
	putAll("main", total, "main ")
	mainID := branchID(b, s, d.ID, "main")
	require.NoError(b, jobs.BuildIndex(ctx, s, jobs.IndexArgs{DomainID: d.ID, BranchID: mainID, KindName: "Supplier", Attribute: "country"}))
	_, err = s.Pool.Exec(ctx, "ANALYZE")
	require.NoError(b, err)
	r := reads.New(s, reads.Config{})
	noJobs := store.BranchJobs{Copy: func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil }}

	for _, own := range []int{500, 2000, 5000, 10000, 20000} {
		if own > total {
			continue
		}
		name := fmt.Sprintf("agent/own-%d", own)
		_, err := s.CreateBranch(ctx, d.ID, store.CreateBranchRequest{Name: name, From: "main"}, noJobs)
		require.NoError(b, err)
		putAll(name, own, "own ")
		_, err = s.Pool.Exec(ctx, "ANALYZE mat_records")
		require.NoError(b, err)
		measure := func(b *testing.B) {
			lat := make([]time.Duration, 0, b.N)
			for i := 0; b.Loop(); i++ {
				t0 := time.Now()
				_, err := r.Page(ctx, d.ID, name, reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: countries[i%len(countries)], Limit: 50})
				lat = append(lat, time.Since(t0))
				require.NoError(b, err)
			}
			slices.Sort(lat)
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50_ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95_ms")
		}
		b.Run(fmt.Sprintf("own=%d/index=no", own), measure)
		require.NoError(b, jobs.BuildIndex(ctx, s, jobs.IndexArgs{DomainID: d.ID, BranchID: branchID(b, s, d.ID, name), KindName: "Supplier", Attribute: "country"}))
		_, err = s.Pool.Exec(ctx, "ANALYZE mat_records")
		require.NoError(b, err)
		b.Run(fmt.Sprintf("own=%d/index=yes", own), measure)
	}
}

func branchID(tb testing.TB, s *store.Store, domain int32, name string) int32 {
	var id int32
	require.NoError(tb, s.Pool.QueryRow(context.Background(), `SELECT id FROM refs WHERE domain_id = $1 AND name = $2`, domain, name).Scan(&id))
	return id
}
