package reads_test

import (
	"context"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/jobs"
)

// generate writes a Domain of n Records set-based as the owner: a tenth
// Suppliers ("S-i", country "C<i%50>"), the rest Parts ("P-i", maker a
// Supplier: a foreign-key Link) with a stored supplied_by Link each, one
// history row per Record, titles from a vocabulary of 997 words; then the
// per-Attribute index of Supplier.country and ANALYZE.
func generate(t testing.TB, f *fixture, n int) {
	t.Helper()
	ctx := context.Background()
	rev := f.commit("gen", "", put("Supplier", "S-0", map[string]any{"name": "Generator seed"}))
	ns := n / 10
	stmts := []string{
		`INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq)
		 SELECT $1, $2, 'S-' || i, 'Supplier', t, jsonb_build_object('name', t, 'country', 'C' || (i % 50)),
		        setweight(to_tsvector('simple', t), 'A'), jsonb_build_object('name', $3::bigint, 'country', $3::bigint), $3, $3
		   FROM generate_series(1, $4::int) i, LATERAL (SELECT 'supplier w' || (i * 7 % 997) || ' w' || (i * 13 % 997) AS t) x`,
		`INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq)
		 SELECT $1, $2, 'P-' || i, 'Part', t, jsonb_build_object('name', t, 'maker', 'S-' || (i % $4::int + 1)),
		        setweight(to_tsvector('simple', t), 'A'), jsonb_build_object('name', $3::bigint, 'maker', $3::bigint), $3, $3
		   FROM generate_series(1, $5::int) i, LATERAL (SELECT 'part w' || (i * 11 % 997) || ' w' || (i * 17 % 997) AS t) x`,
		`INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, "values")
		 SELECT domain_id, branch_id, key, seq, $6, 'put', kind, title, "values" FROM mat_records
		  WHERE domain_id = $1 AND branch_id = $2 AND key <> 'S-0' AND $3::bigint > 0 AND $4::int + $5::int > 0`,
		`INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq)
		 SELECT $1::int, $2::int, 'P-' || i, 'maker', 'S-' || (i % $4::int + 1), 'r', $3::bigint FROM generate_series(1, $5::int) i
		 UNION ALL
		 SELECT $1::int, $2::int, 'P-' || i, 'supplied_by', 'S-' || ((i * 31) % $4::int + 1), 'l', $3 FROM generate_series(1, $5::int) i`,
		`INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op, origin)
		 SELECT domain_id, branch_id, from_key, relation, to_key, seq, 'link', origin FROM mat_links
		  WHERE domain_id = $1 AND branch_id = $2`,
	}
	all := []any{f.domain, f.branch, rev.Seq, ns, n - ns, rev.ID}
	for _, st := range stmts {
		used := 0
		for i := range all {
			if strings.Contains(st, "$"+strconv.Itoa(i+1)) {
				used = i + 1
			}
		}
		args := all[:used]
		_, err := f.s.Pool.Exec(ctx, st, args...)
		require.NoError(t, err, st)
	}
	require.NoError(t, jobs.BuildIndex(ctx, f.s, jobs.IndexArgs{DomainID: f.domain, BranchID: f.branch, KindName: "Supplier", Attribute: "country"}))
	for _, tb := range []string{"mat_records", "mat_links", "mat_history", "mat_link_history", "mat_lexicon", "mat_search_words", "revisions"} {
		_, err := f.s.Pool.Exec(ctx, "ANALYZE "+tb)
		require.NoError(t, err)
	}
}

// benchRecords is the size of generated Domains (LOREBASE_BENCH_RECORDS).
func benchRecords() int {
	if n, err := strconv.Atoi(strings.TrimSpace(os.Getenv("LOREBASE_BENCH_RECORDS"))); err == nil && n >= 100 {
		return n
	}
	return 20000
}
