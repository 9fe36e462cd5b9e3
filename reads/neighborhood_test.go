package reads_test

import (
	"context"
	"regexp"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestNeighborhoodRecordsByBitmap: on a branch that owns its rows, a
// neighborhood's Links are read by index-only scans and its Records, in a
// statement of their own (lb_neighborhood_records), by a bitmap heap scan of
// the Records' primary key; the answers equal those of an overlay of the
// branch with no rows of its own, read through its levels by another
// statement; lb_neighborhood_records called by lorebase_app with another
// Domain's id, branch or keys reads nothing.
func TestNeighborhoodRecordsByBitmap(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "nb-bitmap")
	generate(t, f, 4000)
	f.fork("ov", "overlay", revInfo{})
	for _, tb := range []string{"mat_records", "mat_links"} {
		_, err := s.Pool.Exec(f.ctx, "ANALYZE "+tb)
		require.NoError(t, err)
	}

	// The plans of a real call, as auto_explain reports them.
	conn, plans := pgtest.AutoExplain(t, s.Pool, false)
	var records int
	require.NoError(t, pgx.BeginFunc(f.ctx, conn, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		return tx.QueryRow(f.ctx, `SELECT count(*) FILTER (WHERE row_type = 'record') FROM lb_neighborhood('main', 'S-7', 2, 200, 20)`).Scan(&records)
	}))
	require.Greater(t, records, 15, "a neighborhood of many Records")
	var recs, links string
	for _, p := range plans() {
		require.NotRegexp(t, `Seq Scan on mat_`, p)
		if regexp.MustCompile(`n\(key, depth\)`).MatchString(p) {
			recs += p
		}
		if regexp.MustCompile(`mat_links_p\d+`).MatchString(p) {
			links += p
		}
	}
	require.Regexp(t, `Bitmap Heap Scan on mat_records_p\d+`, recs)
	require.Regexp(t, `Bitmap Index Scan on mat_records_p\d+_pkey`, recs)
	require.NotRegexp(t, `Index Scan using mat_records`, recs)
	require.Regexp(t, `Index Only Scan using mat_links_p\d+_pkey`, links)
	require.Regexp(t, `Index Only Scan using mat_links_p\d+_domain_id_branch_id_to_key_relation_from_key_o_idx`, links)
	require.NotRegexp(t, `mat_records`, links, "the Records are read by a statement of their own")

	// The same answers through the overlay's levels, nearest first and cut
	// at every limit.
	for _, tc := range []struct {
		key          string
		depth, limit int
	}{{"S-7", 1, 200}, {"S-7", 2, 200}, {"S-7", 2, 37}, {"P-40", 2, 200}, {"P-40", 3, 200}, {"P-40", 3, 45}, {"P-40", 2, 1}, {"S-0", 2, 200}} {
		want, err := f.r.Neighborhood(f.ctx, f.domain, "ov", tc.key, tc.depth, tc.limit)
		require.NoError(t, err)
		got, err := f.r.Neighborhood(f.ctx, f.domain, "main", tc.key, tc.depth, tc.limit)
		require.NoError(t, err)
		require.Equal(t, want, got, "%+v", tc)
		require.NotEmpty(t, got.Records, "%+v", tc)
	}

	// Another Domain with the same keys: its ids and keys, read as lorebase_app in this Domain, give nothing.
	other := newFixture(t, s, "nb-bitmap-other")
	generate(t, other, 400)
	keys := []string{"S-7", "P-40", "P-41"}
	for _, dom := range []struct{ d, br int32 }{{other.domain, other.branch}, {f.domain, other.branch}, {other.domain, f.branch}} {
		var n int
		require.NoError(t, s.InDomain(f.ctx, f.domain, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT count(*) FROM lb_neighborhood_records($1, $2, $3, $4, 10)`,
				dom.d, dom.br, keys, []int32{0, 1, 1}).Scan(&n)
		}))
		require.Zero(t, n, "Domain %d, branch %d read from Domain %d", dom.d, dom.br, f.domain)
	}
	// The same call in the other Domain reads its Records.
	var n int
	require.NoError(t, s.InDomain(f.ctx, other.domain, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT count(*) FROM lb_neighborhood_records($1, $2, $3, $4, 10)`,
			other.domain, other.branch, keys, []int32{0, 1, 1}).Scan(&n)
	}))
	require.Equal(t, len(keys), n, "keys %v", keys)
}
