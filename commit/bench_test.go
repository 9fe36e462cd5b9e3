package commit_test

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
)

// benchChanges builds n changes: a quarter Suppliers (unique vat), half
// Parts (a ref to a Supplier), a quarter supplied_by Links.
func benchChanges(round, n int) []commit.Change {
	ns := n / 4
	np := n / 2
	nl := n - ns - np
	changes := make([]commit.Change, 0, n)
	for i := range ns {
		changes = append(changes, put("Supplier", fmt.Sprintf("S-%d-%d", round, i),
			fmt.Sprintf(`{"name": "Supplier %d of round %d", "vat": "VAT-%d-%d", "country": "DE", "tier": "gold"}`, i, round, round, i)))
	}
	for i := range np {
		changes = append(changes, put("Part", fmt.Sprintf("P-%d-%d", round, i),
			fmt.Sprintf(`{"name": "Hex bolt %d", "maker": "S-%d-%d", "weight_kg": %d.5, "sku": %d}`, i, round, i%ns, i%7, round*1_000_000+i)))
	}
	for i := range nl {
		changes = append(changes, lnk("supplied_by", fmt.Sprintf("P-%d-%d", round, i), fmt.Sprintf("S-%d-%d", round, (i+1)%ns)))
	}
	return changes
}

func benchmarkCommit(b *testing.B, n int) {
	bb := setup(b, commit.Config{})
	round := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		round++
		r := &commit.Request{Message: "bench", Author: "bench", Changes: benchChanges(round, n)}
		b.StartTimer()
		res, err := bb.p.Commit(bb.ctx, bb.domain, "main", r, "")
		require.NoError(b, err)
		require.Equal(b, n, res.Changes)
	}
}

func BenchmarkCommit1000(b *testing.B)  { benchmarkCommit(b, 1000) }
func BenchmarkCommit10000(b *testing.B) { benchmarkCommit(b, 10000) }

// countsTriggerSQL keeps the Record counters from statement-level triggers
// on mat_records (transition tables, as the lexicon's), for
// BenchmarkCommit1000Counters. It counts a plain branch's own rows only: an
// overlay's first write of a base Record would need the base's row as of
// the fork, which the commit reads anyway (why the commit writes them).
const countsTriggerSQL = `
CREATE FUNCTION bench_counts_apply() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    WITH d AS (
        SELECT domain_id, branch_id, kind, max(seq) AS seq, sum(n) AS n FROM (
            SELECT domain_id, branch_id, kind, seq, 1 AS n FROM new_rows WHERE NOT deleted
            UNION ALL
            SELECT domain_id, branch_id, kind, NULL, -1 FROM old_rows WHERE NOT deleted) x
         GROUP BY 1, 2, 3 HAVING sum(n) <> 0),
    logged AS (
        INSERT INTO mat_count_changes AS g (domain_id, branch_id, kind, seq, delta)
        SELECT domain_id, branch_id, kind, seq, n FROM d
        ON CONFLICT (domain_id, branch_id, kind, seq) DO UPDATE SET delta = g.delta + EXCLUDED.delta)
    INSERT INTO mat_counts AS c (domain_id, branch_id, kind, records)
    SELECT domain_id, branch_id, kind, n FROM d ORDER BY 1, 2, 3
    ON CONFLICT (domain_id, branch_id, kind) DO UPDATE SET records = c.records + EXCLUDED.records;
    RETURN NULL;
END
$$;
CREATE TABLE bench_counter_ms (ms float8 NOT NULL);
GRANT INSERT ON bench_counter_ms TO lorebase_app;
CREATE FUNCTION bench_counts_insert() RETURNS trigger LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
BEGIN
    WITH d AS (
        SELECT domain_id, branch_id, kind, max(seq) AS seq, count(*) AS n FROM new_rows WHERE NOT deleted GROUP BY 1, 2, 3),
    logged AS (
        INSERT INTO mat_count_changes AS g (domain_id, branch_id, kind, seq, delta)
        SELECT domain_id, branch_id, kind, seq, n FROM d
        ON CONFLICT (domain_id, branch_id, kind, seq) DO UPDATE SET delta = g.delta + EXCLUDED.delta)
    INSERT INTO mat_counts AS c (domain_id, branch_id, kind, records)
    SELECT domain_id, branch_id, kind, n FROM d ORDER BY 1, 2, 3
    ON CONFLICT (domain_id, branch_id, kind) DO UPDATE SET records = c.records + EXCLUDED.records;
    INSERT INTO bench_counter_ms VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000);
    RETURN NULL;
END
$$;
CREATE TRIGGER mat_records_counts_ins AFTER INSERT ON mat_records
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bench_counts_insert();
CREATE TRIGGER mat_records_counts_upd AFTER UPDATE ON mat_records
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION bench_counts_apply();`

// BenchmarkCommit1000Counters measures a commit of 1,000 changes (750
// Records created, 250 Links) three ways, each in a database of its own,
// interleaved commit by commit so the three see the same load: without
// Record counters (the branch keeps none; the commit's counter statement
// writes nothing), with the counters the commit writes (Lorebase's way),
// and with counters kept by statement-level triggers on mat_records
// instead (the commit writing none). It reports the mean, p50 and p95 of
// each.
func BenchmarkCommit1000Counters(b *testing.B) {
	const n = 1000
	variants := []struct {
		name  string
		setup string
		bb    *bundle
	}{
		{"none", `UPDATE refs SET counts_from = NULL`, nil},
		{"commit", ``, nil},
		{"trigger", `UPDATE refs SET counts_from = NULL;` + countsTriggerSQL, nil},
	}
	for i := range variants {
		variants[i].bb = setup(b, commit.Config{})
		if variants[i].setup != "" {
			_, err := variants[i].bb.store.Pool.Exec(variants[i].bb.ctx, variants[i].setup)
			require.NoError(b, err)
		}
	}
	d := make([][]time.Duration, len(variants))
	round := 0
	for b.Loop() {
		round++
		for i, v := range variants {
			r := &commit.Request{Message: "bench", Author: "bench", Changes: benchChanges(round, n)}
			t0 := time.Now()
			res, err := v.bb.p.Commit(v.bb.ctx, v.bb.domain, "main", r, "")
			d[i] = append(d[i], time.Since(t0))
			require.NoError(b, err)
			require.Equal(b, n, res.Changes)
		}
	}
	for i, v := range variants {
		var counted int64
		require.NoError(b, v.bb.store.Pool.QueryRow(v.bb.ctx, `SELECT coalesce(sum(records), 0) FROM mat_counts`).Scan(&counted))
		if v.name == "none" {
			require.Zero(b, counted)
		} else {
			require.Equal(b, int64(round*(n/4+n/2)), counted, v.name)
		}
		var sum time.Duration
		for _, x := range d[i] {
			sum += x
		}
		b.ReportMetric(float64(sum.Microseconds())/float64(len(d[i]))/1000, v.name+"-mean-ms")
		sort.Slice(d[i], func(x, y int) bool { return d[i][x] < d[i][y] })
		q := func(f float64) float64 { return float64(d[i][int(f*float64(len(d[i])-1))].Microseconds()) / 1000 }
		b.ReportMetric(q(0.5), v.name+"-p50-ms")
		b.ReportMetric(q(0.95), v.name+"-p95-ms")
	}
	// The counters' own server time: the trigger's, timed in the trigger
	// on every commit above; the commit's statement (as commit/write.go
	// sends it, for a Supplier and a Part delta), run 200 times in a
	// rolled back transaction of the "commit" database.
	tr := variants[2].bb
	var trigMean, trigP95 float64
	require.NoError(b, tr.store.Pool.QueryRow(tr.ctx, `SELECT avg(ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY ms)
		FROM bench_counter_ms`).Scan(&trigMean, &trigP95))
	b.ReportMetric(trigMean, "trigger-counter-mean-ms")
	b.ReportMetric(trigP95, "trigger-counter-p95-ms")
	cm := variants[1].bb
	tx, err := cm.store.Pool.Begin(cm.ctx)
	require.NoError(b, err)
	defer tx.Rollback(cm.ctx) //nolint:errcheck // the measurement writes nothing
	_, err = tx.Exec(cm.ctx, fmt.Sprintf(`CREATE TEMP TABLE stmt_ms (ms float8);
DO $$
DECLARE
    t0 timestamptz;
BEGIN
    FOR i IN 1..200 LOOP
        t0 := clock_timestamp();
        WITH d AS (SELECT u.kind, u.delta FROM unnest(ARRAY['Part', 'Supplier']::text[], ARRAY[500, 250]::bigint[]) u(kind, delta)),
        counted AS (SELECT 1 FROM refs WHERE domain_id = %[1]d AND id = %[2]d AND counts_from IS NOT NULL),
        logged AS (INSERT INTO mat_count_changes (domain_id, branch_id, kind, seq, delta)
            SELECT %[1]d, %[2]d, d.kind, 1000000000 + i, d.delta FROM d, counted)
        INSERT INTO mat_counts AS c (domain_id, branch_id, kind, records)
        SELECT %[1]d, %[2]d, d.kind, d.delta FROM d, counted ORDER BY d.kind
        ON CONFLICT (domain_id, branch_id, kind) DO UPDATE SET records = c.records + EXCLUDED.records;
        INSERT INTO stmt_ms VALUES (extract(epoch FROM clock_timestamp() - t0) * 1000);
    END LOOP;
END
$$`, cm.domain, mainID(b, cm)))
	require.NoError(b, err)
	var stmtMean, stmtP95 float64
	require.NoError(b, tx.QueryRow(cm.ctx, `SELECT avg(ms), percentile_cont(0.95) WITHIN GROUP (ORDER BY ms) FROM stmt_ms`).Scan(&stmtMean, &stmtP95))
	b.ReportMetric(stmtMean, "commit-counter-mean-ms")
	b.ReportMetric(stmtP95, "commit-counter-p95-ms")
	b.ReportMetric(0, "ns/op")
}

// mainID is the id of the bundle's branch main.
func mainID(b *testing.B, bb *bundle) int32 {
	var id int32
	require.NoError(b, bb.store.Pool.QueryRow(bb.ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, bb.domain).Scan(&id))
	return id
}

// BenchmarkCommitAfterSmallCommit measures a commit of n updates of a value
// that is not searched (a Supplier's tier) through a pool of one
// connection, each after a commit of one such update on that connection:
// the postings trigger's check of an update then first ran for a single
// row on the connection, as on a Keeper whose agents mostly commit a few
// changes.
func BenchmarkCommitAfterSmallCommit(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("changes=%d", n), func(b *testing.B) {
			bb := setupConns(b, commit.Config{}, 1)
			cs := make([]commit.Change, 0, n+1)
			for i := range n {
				cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i), fmt.Sprintf(`{"name": "Supplier %d", "vat": "VAT-%d", "tier": "gold"}`, i, i)))
			}
			bb.commit(b, append(cs, put("Supplier", "S-small", `{"name": "Supplier small", "vat": "VAT-small", "tier": "gold"}`))...)
			tiers := []string{"gold", "silver"}
			round := 0
			for b.Loop() {
				b.StopTimer()
				round++
				tier := fmt.Sprintf(`{"tier": %q}`, tiers[round%2])
				bb.commit(b, patch("S-small", tier))
				cs = cs[:0]
				for i := range n {
					cs = append(cs, patch(fmt.Sprintf("S-%d", i), tier))
				}
				b.StartTimer()
				res, err := bb.p.Commit(bb.ctx, bb.domain, "main", &commit.Request{Message: "bench", Author: "bench", Changes: cs}, "")
				require.NoError(b, err)
				require.Equal(b, n, res.Changes)
			}
		})
	}
}

// BenchmarkCommit10 is a commit small enough that its round trips, not its
// rows, are most of its time.
func BenchmarkCommit10(b *testing.B) { benchmarkCommit(b, 10) }
