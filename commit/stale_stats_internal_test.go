package commit

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestReadsProbeByKeyWithStaleStatistics: the commit's reads of its
// Records and of the Links out of and into them look each key up in the
// index the key leads even when the statistics say the Domain's partition
// holds few of the branch's rows, or none. A plan that trusts them scans
// every row of the branch through an index, filtering by key (or with the
// key as a later column of another index's condition): for the Links 75 to
// 110 ms a call, 16 to 24 s over a 1M load, in five of eight loads. Three
// kinds of statistics, each kept while 100,000 Records and 200,000 Links of
// the branch are written with autovacuum off:
//
//   - taken with 2,000 of the branch's Records (analyzed early in a load);
//   - taken while another Domain's 100,000 Records filled the partition and
//     this Domain had none (a new tenant beside a large one): the Domain is
//     not among the statistics' common values, and a plan for its id as a
//     constant estimates its range at a row;
//   - taken with the partition empty: every read of the Links probes by
//     key, but the Records reads are not held to it: the branch's range of
//     mat_records_iseq_idx is estimated at a few rows and that index, a
//     level shorter than the primary key, costs less to descend, so the
//     planner scans the range whatever the statement's form.
//
// The plans are those of the calls (EXPLAIN ANALYZE; auto_explain for the
// read of 32 Records or more, inside lb_commit_records), as lorebase_app,
// and only the nodes that ran count (the Domain's partition is chosen at
// run time). The answers are the keys' rows.
func TestReadsProbeByKeyWithStaleStatistics(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name         string
		analyzedAt   int  // Records of the branch when analyzed
		other        bool // another Domain of the partition filled it first
		recordsProbe bool // the Records reads' plans are checked
	}{
		{"analyzed at 2,000 Records", 2000, false, true},
		{"analyzed with another Domain's rows", 0, true, true},
		{"analyzed empty", 0, false, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			readsWithStaleStatistics(t, tc.analyzedAt, tc.other, tc.recordsProbe)
		})
	}
}

func readsWithStaleStatistics(t *testing.T, analyzedAt int, other, recordsProbe bool) {
	ctx := context.Background()
	s, d := supplyDomain(t)
	mainOf := func(domainID int32) int32 {
		var id int32
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, domainID).Scan(&id))
		return id
	}
	pgtest.AutovacuumOff(t, s.Pool, "mat_links", "mat_records")
	// fill writes n Records keyed prefix and a number, each with two Links
	// to Records whose keys start with prefix too.
	fill := func(domainID, branch int32, prefix string, n int) {
		_, err := s.Pool.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq, versions)
		SELECT $1, $2, $3 || 'P-' || i, 'Part', 'part ' || i, jsonb_build_object('name', 'part ' || i), to_tsvector('simple', 'part'),
		       jsonb_build_object('name', 1), 1, 1, 1
		  FROM generate_series(1, $4::int) i`, domainID, branch, prefix, n)
		require.NoError(t, err)
		_, err = s.Pool.Exec(ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq)
		SELECT $1, $2, $3 || 'P-' || i, r, $3 || CASE r WHEN 'maker' THEN 'S-' || (i % 500) ELSE 'W-' || (i % 97) END, CASE r WHEN 'maker' THEN 'r' ELSE 'l' END, 1
		  FROM generate_series(1, $4::int) i, unnest(ARRAY['maker', 'stocked_at']) r`, domainID, branch, prefix, n)
		require.NoError(t, err)
	}
	if other {
		// A Domain created later in the same partition is measured; the
		// first fills the partition before the statistics are taken.
		big := d
		d = pgtest.DomainBeside(t, s.Pool, big.ID, func(name string) (*store.Domain, int32) {
			n, err := s.CreateDomain(ctx, name)
			require.NoError(t, err)
			return n, n.ID
		})
		fill(big.ID, mainOf(big.ID), "", 100000)
	}
	branch := mainOf(d.ID)
	fill(d.ID, branch, "Q", analyzedAt)
	_, err := s.Pool.Exec(ctx, `ANALYZE mat_links, mat_records`)
	require.NoError(t, err)
	fill(d.ID, branch, "", 100000)

	from := make([]string, 0, 1000)
	for i := range 1000 {
		from = append(from, fmt.Sprintf("P-%d", 50001+i))
	}
	explain := func(t *testing.T, tx pgx.Tx, q *pgx.QueuedQuery, probes bool) {
		t.Helper()
		var out []byte
		require.NoError(t, tx.QueryRow(ctx, "EXPLAIN (ANALYZE, FORMAT JSON) "+q.SQL, q.Arguments...).Scan(&out))
		var plans []struct {
			Plan pgtest.PlanNode `json:"Plan"`
			Time float64         `json:"Execution Time"`
		}
		require.NoError(t, json.Unmarshal(out, &plans))
		t.Logf("executed in %.2f ms under EXPLAIN ANALYZE", plans[0].Time)
		if probes {
			requireKeyProbes(t, plans[0].Plan, string(out))
		} else {
			t.Log(string(out))
		}
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

	// Records: enough for lb_commit_records' bitmap of their keys.
	conn, plans := pgtest.AutoExplain(t, s.Requests, true)
	_, err = conn.Exec(ctx, `SET auto_explain.log_format = json`)
	require.NoError(t, err)
	st = &state{records: map[string]*record{}}
	batch = &pgx.Batch{}
	queueReadRecords(batch, d.ID, branch, false, st, from[:100], append(from[100:200:200], "P-none"))
	require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if err := store.Scope(ctx, tx, d.ID); err != nil {
			return err
		}
		plans()
		return tx.SendBatch(ctx, batch).Close()
	}))
	require.Len(t, st.records, 200)
	inner := 0
	for _, p := range plans() {
		e, err := pgtest.ParseExplained(p)
		require.NoError(t, err)
		if !strings.Contains(e.Query, "FROM mat_records m") {
			continue
		}
		inner++
		if recordsProbe {
			requireKeyProbes(t, e.Plan, p)
		} else {
			t.Log(p)
		}
	}
	require.Equal(t, 1, inner, "lb_commit_records' statement reported once")

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

// requireKeyProbes requires every node of plan that ran on the tables
// pgtest.KeyProbeProblems checks to look keys up.
func requireKeyProbes(t *testing.T, plan pgtest.PlanNode, all string) {
	t.Helper()
	require.Empty(t, pgtest.KeyProbeProblems(plan), all)
}
