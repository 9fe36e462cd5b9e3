package commit

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/store"
)

// TestReadsProbeByKeyWithStaleStatistics: the commit's reads of the Links
// out of and into its Records look each key up in an index even when the
// statistics say the Domain's partition holds none or few of the branch's
// rows (analyzed empty or early, then filled faster than autovacuum
// analyzes it, as during a load into a new Domain). A plan that trusts them
// scans every row of the branch through an index, filtering by key: for the
// Links 75 to 110 ms a call, 16 to 24 s over a 1M load, in five of eight
// loads. The answers are the keys' rows.
//
// The read of fewer than prefetchRecords Records probes by key when the
// statistics were taken with 2,000 of the branch's Records (so did its
// earlier "key = ANY" form), not when they were taken empty: then the
// branch's range of mat_records_iseq_idx is estimated at a few rows and
// that index, a level shorter than the primary key, costs less to descend,
// so the planner scans the range whichever form the statement takes; only
// its answers are checked in that case.
func TestReadsProbeByKeyWithStaleStatistics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		analyzedAt   int  // Records of the branch when analyzed
		recordsProbe bool // the Records read's plan is checked
	}{
		{"analyzed empty", 0, false},
		{"analyzed at 2,000 Records", 2000, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			readsWithStaleStatistics(t, tc.analyzedAt, tc.recordsProbe)
		})
	}
}

func readsWithStaleStatistics(t *testing.T, analyzedAt int, recordsProbe bool) {
	ctx := context.Background()
	s, d := supplyDomain(t)
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&branch))
	// Statistics of the tables with analyzedAt Records, kept while they fill.
	parts, err := pgx.CollectRows(mustQuery(t, s, `SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent IN ('mat_links'::regclass, 'mat_records'::regclass)`), pgx.RowTo[string])
	require.NoError(t, err)
	for _, p := range parts {
		_, err := s.Pool.Exec(ctx, fmt.Sprintf(`ALTER TABLE %s SET (autovacuum_enabled = off)`, p))
		require.NoError(t, err)
	}
	_, err = s.Pool.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq, versions)
		SELECT $1, $2, 'Q-' || i, 'Part', 'part ' || i, jsonb_build_object('name', 'part ' || i), to_tsvector('simple', 'part'),
		       jsonb_build_object('name', 1), 1, 1, 1
		  FROM generate_series(1, $3::int) i`, d.ID, branch, analyzedAt)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `ANALYZE mat_links, mat_records`)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq, versions)
		SELECT $1, $2, 'P-' || i, 'Part', 'part ' || i, jsonb_build_object('name', 'part ' || i), to_tsvector('simple', 'part'),
		       jsonb_build_object('name', 1), 1, 1, 1
		  FROM generate_series(1, 100000) i`, d.ID, branch)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq)
		SELECT $1, $2, 'P-' || i, r, CASE r WHEN 'maker' THEN 'S-' || (i % 500) ELSE 'W-' || (i % 97) END, CASE r WHEN 'maker' THEN 'r' ELSE 'l' END, 1
		  FROM generate_series(1, 100000) i, unnest(ARRAY['maker', 'stocked_at']) r`, d.ID, branch)
	require.NoError(t, err)

	from := make([]string, 0, 1000)
	for i := range 1000 {
		from = append(from, fmt.Sprintf("P-%d", 50001+i))
	}
	explain := func(t *testing.T, tx pgx.Tx, q *pgx.QueuedQuery, probes bool) {
		t.Helper()
		rows, err := tx.Query(ctx, "EXPLAIN "+q.SQL, q.Arguments...)
		require.NoError(t, err)
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		require.NoError(t, err)
		plan := strings.Join(lines, "\n")
		require.NotContains(t, plan, "Seq Scan", plan)
		if !probes {
			t.Log(plan)
			return
		}
		require.NotRegexp(t, `Filter: .*key = `, plan, "every key looked up by an index:\n%s", plan)
	}
	// Records: a few of them whole, a few by Kind alone.
	st := &state{records: map[string]*record{}}
	batch := &pgx.Batch{}
	queueReadRecords(batch, d.ID, branch, false, st, from[:10], append(from[10:20:20], "P-none"))
	require.NoError(t, s.InDomain(ctx, d.ID, func(ctx context.Context, tx pgx.Tx) error {
		explain(t, tx, batch.QueuedQueries[0], recordsProbe)
		return tx.SendBatch(ctx, batch).Close()
	}))
	require.Len(t, st.records, 20)
	for i, k := range from[:20] {
		r := st.records[k]
		require.NotNil(t, r, k)
		require.Equal(t, "Part", r.kindName)
		require.Equal(t, i < 10, r.oldValues != nil, k)
	}

	for _, tc := range []struct {
		name     string
		from, to []string
		want     int
	}{
		{"out of 1,000 Parts", from, []string{}, 2000},
		{"into two Suppliers", []string{}, []string{"S-7", "S-8"}, 400},
		{"both", from[:10], []string{"W-3"}, 20 + 1031},
	} {
		t.Run(tc.name, func(t *testing.T) {
			st := &state{links: map[linkKey]*link{}}
			batch := &pgx.Batch{}
			queueReadLinks(batch, d.ID, branch, false, st, tc.from, tc.to)
			q := batch.QueuedQueries[0]
			err := s.InDomain(ctx, d.ID, func(ctx context.Context, tx pgx.Tx) error {
				explain(t, tx, q, true)
				return tx.SendBatch(ctx, batch).Close()
			})
			require.NoError(t, err)
			for k := range st.links {
				hit := false
				for _, f := range tc.from {
					hit = hit || k.from == f
				}
				for _, to := range tc.to {
					hit = hit || k.to == to
				}
				require.True(t, hit, "%+v", k)
			}
			require.Len(t, st.links, tc.want)
		})
	}
}

func mustQuery(t *testing.T, s *store.Store, sql string) pgx.Rows {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), sql)
	require.NoError(t, err)
	return rows
}
