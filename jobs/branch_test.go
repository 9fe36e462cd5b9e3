package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

// noJobs queues nothing: the tests run the jobs themselves.
var noJobs = store.BranchJobs{
	Copy:   func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil },
	Delete: func(context.Context, pgx.Tx, int32, int32) error { return nil },
}

// thingSchema is the compiled schema of the fixtures: Kind Thing titled by
// its name, with an indexed Attribute.
const thingSchema = `{"kinds":{"Thing":{"name":"Thing","title":"name","attributes":[
 {"name":"name","type":"text","required":true,"search":true},
 {"name":"n","type":"integer","indexed":true}]}},"relations":{}}`

// fixture is a Domain whose main holds n Records and their Links, with
// history, forked at seq 100.
type fixture struct {
	s      *store.Store
	domain int32
	main   int32
	n      int
}

func newFixture(t testing.TB, n int) *fixture {
	t.Helper()
	ctx := context.Background()
	s := pgtest.Store(t)
	d, err := s.CreateDomain(ctx, "d")
	require.NoError(t, err)
	f := &fixture{s: s, domain: d.ID, n: n}
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&f.main))
	f.exec(t, `UPDATE schemas SET compiled = $3, seq = 1 WHERE domain_id = $1 AND branch_id = $2`, f.domain, f.main, thingSchema)
	f.seedBeforeFork(t)
	return f
}

func (f *fixture) exec(t testing.TB, sql string, args ...any) {
	t.Helper()
	_, err := f.s.Pool.Exec(context.Background(), sql, args...)
	require.NoError(t, err, sql)
}

// seedBeforeFork writes main as of seq 100, by i % 10 for Records R-i:
// 0-4 put at 10; 5 put at 10 and patched at 60; 6 and 8 put at 10 (changed
// after the fork: patched, deleted); 7 put at 10, deleted at 50; 9 has no
// row yet (created after the fork). Links next R-i -> R-(i+1) by i % 5: 0, 1
// and 3 linked at 10; 2 linked at 10 and unlinked at 50; 4 linked after.
func (f *fixture) seedBeforeFork(t testing.TB) {
	t.Helper()
	f.exec(t, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values)
		SELECT $1, $2, 'R-' || lpad(i::text, 6, '0'), 10, 'REV10', 'put', 'Thing', 'Name ' || i,
		       jsonb_build_object('name', 'Name ' || i, 'n', i)
		  FROM generate_series(1, $3) i WHERE i % 10 <> 9`, f.domain, f.main, f.n)
	f.exec(t, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values)
		SELECT $1, $2, 'R-' || lpad(i::text, 6, '0'), 60, 'REV60', 'patch', 'Thing', 'Name ' || i,
		       jsonb_build_object('name', 'Name ' || i, 'n', -i)
		  FROM generate_series(1, $3) i WHERE i % 10 = 5`, f.domain, f.main, f.n)
	f.exec(t, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values)
		SELECT $1, $2, 'R-' || lpad(i::text, 6, '0'), 50, 'REV50', 'delete', 'Thing', '', NULL
		  FROM generate_series(1, $3) i WHERE i % 10 = 7`, f.domain, f.main, f.n)
	f.exec(t, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, search, lineage, created_seq, seq, versions, deleted)
		SELECT $1, $2, h.key, h.kind, h.title, coalesce(h.values, '{}'),
		       CASE WHEN h.op = 'delete' THEN ''::tsvector
		            ELSE setweight(to_tsvector('simple', h.title), 'A') || setweight(to_tsvector('simple', ''), 'B') END,
		       CASE WHEN h.seq = 60 THEN '{"name": 10, "n": 60}' ELSE '{"name": 10, "n": 10}' END::jsonb,
		       10, h.seq, (SELECT count(*) FROM mat_history c WHERE c.domain_id = $1 AND c.branch_id = $2 AND c.key = h.key),
		       h.op = 'delete'
		  FROM (SELECT DISTINCT ON (key) * FROM mat_history WHERE domain_id = $1 AND branch_id = $2 ORDER BY key, seq DESC) h`,
		f.domain, f.main)
	f.exec(t, `INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op)
		SELECT $1, $2, 'R-' || lpad(i::text, 6, '0'), 'next', 'R-' || lpad((i + 1)::text, 6, '0'), 10, 'link'
		  FROM generate_series(1, $3) i WHERE i % 5 <> 4`, f.domain, f.main, f.n)
	f.exec(t, `INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op)
		SELECT $1, $2, 'R-' || lpad(i::text, 6, '0'), 'next', 'R-' || lpad((i + 1)::text, 6, '0'), 50, 'unlink'
		  FROM generate_series(1, $3) i WHERE i % 5 = 2`, f.domain, f.main, f.n)
	f.exec(t, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, seq, deleted)
		SELECT $1, $2, from_key, relation, to_key, seq, op = 'unlink'
		  FROM (SELECT DISTINCT ON (from_key, relation, to_key) * FROM mat_link_history
		         WHERE domain_id = $1 AND branch_id = $2 ORDER BY from_key, relation, to_key, seq DESC) h`, f.domain, f.main)
	f.exec(t, `UPDATE refs SET head = 'REV100', head_seq = 100 WHERE domain_id = $1 AND id = $2`, f.domain, f.main)
	// The expected state of a fork at 100: a snapshot of the present rows.
	f.exec(t, `CREATE TABLE expected_records AS SELECT key, kind, title, values, search, lineage, created_seq, seq, versions
		FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted`, f.domain, f.main)
	f.exec(t, `CREATE TABLE expected_links AS SELECT from_key, relation, to_key, origin, seq
		FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted`, f.domain, f.main)
}

// changeAfterFork commits on main after the fork (seq 150): patches i%10=6,
// deletes i%10=8, creates i%10=9, unlinks i%5=3, links i%5=4.
func (f *fixture) changeAfterFork(t testing.TB) {
	t.Helper()
	f.exec(t, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values)
		SELECT $1, $2, 'R-' || lpad(i::text, 6, '0'), 150, 'REV150', CASE i % 10 WHEN 6 THEN 'patch' WHEN 8 THEN 'delete' ELSE 'put' END,
		       'Thing', CASE WHEN i % 10 = 8 THEN '' ELSE 'New ' || i END,
		       CASE WHEN i % 10 = 8 THEN NULL ELSE jsonb_build_object('name', 'New ' || i, 'n', i * 100) END
		  FROM generate_series(1, $3) i WHERE i % 10 IN (6, 8, 9)`, f.domain, f.main, f.n)
	f.exec(t, `INSERT INTO mat_records AS m (domain_id, branch_id, key, kind, title, values, search, lineage, created_seq, seq, versions, deleted)
		SELECT $1, $2, h.key, h.kind, h.title, coalesce(h.values, '{}'), to_tsvector('simple', h.title),
		       '{"name": 150, "n": 150}', 150, 150, 1, h.op = 'delete'
		  FROM mat_history h WHERE h.domain_id = $1 AND h.branch_id = $2 AND h.seq = 150
		ON CONFLICT (domain_id, branch_id, key) DO UPDATE SET title = EXCLUDED.title, values = EXCLUDED.values,
		   search = EXCLUDED.search, seq = 150, versions = m.versions + 1, deleted = EXCLUDED.deleted,
		   lineage = CASE WHEN EXCLUDED.deleted THEN m.lineage ELSE EXCLUDED.lineage END`, f.domain, f.main)
	f.exec(t, `INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op)
		SELECT $1, $2, 'R-' || lpad(i::text, 6, '0'), 'next', 'R-' || lpad((i + 1)::text, 6, '0'), 150,
		       CASE WHEN i % 5 = 3 THEN 'unlink' ELSE 'link' END
		  FROM generate_series(1, $3) i WHERE i % 5 IN (3, 4)`, f.domain, f.main, f.n)
	f.exec(t, `INSERT INTO mat_links AS l (domain_id, branch_id, from_key, relation, to_key, seq, deleted)
		SELECT $1, $2, from_key, relation, to_key, 150, op = 'unlink' FROM mat_link_history
		 WHERE domain_id = $1 AND branch_id = $2 AND seq = 150
		ON CONFLICT (domain_id, branch_id, from_key, relation, to_key) DO UPDATE SET seq = 150, deleted = EXCLUDED.deleted`, f.domain, f.main)
	f.exec(t, `UPDATE refs SET head = 'REV150', head_seq = 150 WHERE domain_id = $1 AND id = $2`, f.domain, f.main)
}

// createBranch forks main (no jobs queued).
func (f *fixture) createBranch(t testing.TB, name, mode string) int32 {
	t.Helper()
	b, err := f.s.CreateBranch(context.Background(), f.domain, store.CreateBranchRequest{Name: name, From: "main", Mode: mode}, noJobs)
	require.NoError(t, err)
	return b.ID
}

// count runs a count query.
func (f *fixture) count(t testing.TB, sql string, args ...any) int {
	t.Helper()
	var n int
	require.NoError(t, f.s.Pool.QueryRow(context.Background(), sql, args...).Scan(&n), sql)
	return n
}

// requireCopied checks that branch b holds exactly the expected rows, plus
// the rows listed in except (keys the branch changed itself).
func (f *fixture) requireCopied(t testing.TB, b int32) {
	t.Helper()
	diff := `SELECT count(*) FROM ((SELECT key, kind, title, values, search, lineage, created_seq, seq, versions FROM expected_records
		EXCEPT ALL SELECT key, kind, title, values, search, lineage, created_seq, seq, versions FROM mat_records
		 WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted AND seq <= 100)
		UNION ALL (SELECT key, kind, title, values, search, lineage, created_seq, seq, versions FROM mat_records
		 WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted AND seq <= 100
		EXCEPT ALL SELECT key, kind, title, values, search, lineage, created_seq, seq, versions FROM expected_records)) x`
	require.Zero(t, f.count(t, diff, f.domain, b), "records differ")
	diff = `SELECT count(*) FROM ((SELECT from_key, relation, to_key, origin, seq FROM expected_links
		EXCEPT ALL SELECT from_key, relation, to_key, origin, seq FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND seq <= 100)
		UNION ALL (SELECT from_key, relation, to_key, origin, seq FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND seq <= 100
		EXCEPT ALL SELECT from_key, relation, to_key, origin, seq FROM expected_links)) x`
	require.Zero(t, f.count(t, diff, f.domain, b), "links differ")
	for _, tbl := range []string{"mat_history", "mat_link_history"} {
		cols := "key, seq, revision_id, op, kind, title, values"
		if tbl == "mat_link_history" {
			cols = "from_key, relation, to_key, seq, op, origin"
		}
		diff = fmt.Sprintf(`SELECT count(*) FROM ((SELECT %[2]s FROM %[1]s WHERE domain_id = $1 AND branch_id = $3 AND seq <= 100
			EXCEPT ALL SELECT %[2]s FROM %[1]s WHERE domain_id = $1 AND branch_id = $2 AND seq <= 100)
			UNION ALL (SELECT %[2]s FROM %[1]s WHERE domain_id = $1 AND branch_id = $2 AND seq <= 100
			EXCEPT ALL SELECT %[2]s FROM %[1]s WHERE domain_id = $1 AND branch_id = $3 AND seq <= 100)) x`, tbl, cols)
		require.Zero(t, f.count(t, diff, f.domain, b, f.main), "%s differs", tbl)
	}
}

// progress reads a branch's state and progress.
func (f *fixture) progress(t testing.TB, b int32) (string, map[string]any) {
	t.Helper()
	var state string
	var p map[string]any
	require.NoError(t, f.s.Pool.QueryRow(context.Background(), `SELECT state, progress FROM refs WHERE domain_id = $1 AND id = $2`,
		f.domain, b).Scan(&state, &p))
	return state, p
}

// settleLanes waits for the copy's lanes' batches still committing: a run
// stopped by one lane cancels the other's context, and a COMMIT the server
// had begun ends after the client gave up on it (the lane's rows and its
// progress together, one transaction). Each batch holds its lane's
// advisory lock until it ends; taking both locks waits for them.
func (f *fixture) settleLanes(t testing.TB, b int32) {
	t.Helper()
	_, err := f.s.Pool.Exec(context.Background(), `SELECT pg_advisory_xact_lock(hashtextextended('lorebase.copy:' || $1::int || ':' || $2::int || ':' || l, 0))
		FROM unnest(ARRAY['records', 'tables']) l`, f.domain, b)
	require.NoError(t, err)
}

// expectedRows is the number of rows a copy of the fixture copies.
func (f *fixture) expectedRows(t testing.TB) int {
	t.Helper()
	return f.count(t, `SELECT (SELECT count(*) FROM expected_records) + (SELECT count(*) FROM expected_links)
		+ (SELECT count(*) FROM mat_history WHERE domain_id = $1 AND branch_id = $2 AND seq <= 100)
		+ (SELECT count(*) FROM mat_link_history WHERE domain_id = $1 AND branch_id = $2 AND seq <= 100)`, f.domain, f.main)
}

// TestCopyWritesTheBaseIndexedValues: a copy made before its own index
// jobs ran writes the values of the Attributes its base indexes into
// ivals, so the build that follows has nothing to rewrite.
func TestCopyWritesTheBaseIndexedValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 60)
	f.exec(t, `INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute, name) VALUES ($1, $2, 'Thing', 'n', 'thing_n_main')`, f.domain, f.main)
	// An indexed Attribute no Record has stays out of ivals.
	f.exec(t, `INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute, name) VALUES ($1, $2, 'Thing', 'color', 'thing_color_main')`, f.domain, f.main)
	b := f.createBranch(t, "copy", store.ModeCopy)
	require.NoError(t, (&jobs.Copier{Store: f.s, BatchRows: 17}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.requireCopied(t, b)
	require.Positive(t, f.count(t, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2`, f.domain, b))
	require.Zero(t, f.count(t, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
		AND ivals IS DISTINCT FROM jsonb_build_object('n', "values" -> 'n')`, f.domain, b))
}

func TestCopyCopiesTheBaseAsOfTheForkOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 200)
	b := f.createBranch(t, "copy", store.ModeCopy)
	state, p := f.progress(t, b)
	require.Equal(t, store.StateCopying, state)
	require.Equal(t, "records", p["phase"])
	// main moves on after the fork, before the job runs.
	f.changeAfterFork(t)
	// The copy's index of Thing.n is recorded (its build backfills what
	// the copy wrote before): the copy writes n into ivals.
	f.exec(t, `INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute, name) VALUES ($1, $2, 'Thing', 'n', 'thing_n')`, f.domain, b)

	var batches []jobs.BatchStats
	c := &jobs.Copier{Store: f.s, BatchRows: 17, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		batches = append(batches, st)
		return nil
	}}
	require.NoError(t, c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.requireCopied(t, b)
	require.Zero(t, f.count(t, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND seq > 100`, f.domain, b))
	require.Zero(t, f.count(t, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND deleted`, f.domain, b))
	require.Zero(t, f.count(t, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2
		AND ivals IS DISTINCT FROM jsonb_build_object('n', "values" -> 'n')`, f.domain, b))
	state, p = f.progress(t, b)
	require.Equal(t, store.StateReady, state)
	require.Equal(t, jobs.PhaseDone, p["phase"])
	require.EqualValues(t, f.expectedRows(t), p["copied"])
	require.NotEmpty(t, batches)
	for _, st := range batches {
		require.LessOrEqual(t, st.Rows, 17)
	}
	// The copied Records feed the copy's word lexicon.
	require.Positive(t, f.count(t, `SELECT count(*) FROM mat_lexicon WHERE domain_id = $1 AND branch_id = $2`, f.domain, b))
	// A second run of a finished copy does nothing.
	require.NoError(t, c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.requireCopied(t, b)
}

func TestCopyKeepsRowsTheCopyWroteDuringTheCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 100)
	b := f.createBranch(t, "copy", store.ModeCopy)
	c := &jobs.Copier{Store: f.s, BatchRows: 10, AfterBatch: func(ctx context.Context, st jobs.BatchStats) error {
		if st.Batch != 2 {
			return nil
		}
		// A commit on the copy between batches: it takes the branch lock,
		// changes a Record not copied yet, deletes another, links.
		return pgx.BeginFunc(ctx, f.s.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, f.domain, b); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, created_seq, seq, versions, deleted)
				VALUES ($1, $2, 'R-000090', 'Thing', 'Mine', '{"name": "Mine"}', 10, 300, 2, false),
				       ($1, $2, 'R-000091', 'Thing', '', '{}', 10, 300, 2, true)`, f.domain, b); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, seq, deleted)
				VALUES ($1, $2, 'R-000090', 'next', 'R-000091', 300, true)`, f.domain, b)
			return err
		})
	}}
	require.NoError(t, c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	var title string
	var deleted bool
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT title FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = 'R-000090'`, f.domain, b).Scan(&title))
	require.Equal(t, "Mine", title)
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT deleted FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = 'R-000091'`, f.domain, b).Scan(&deleted))
	require.True(t, deleted)
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT deleted FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND from_key = 'R-000090'`, f.domain, b).Scan(&deleted))
	require.True(t, deleted)
	// Every other row is the base's.
	f.exec(t, `DELETE FROM expected_records WHERE key IN ('R-000090', 'R-000091')`)
	f.exec(t, `DELETE FROM expected_links WHERE from_key = 'R-000090'`)
	f.exec(t, `DELETE FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key IN ('R-000090', 'R-000091')`, f.domain, b)
	f.exec(t, `DELETE FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND from_key = 'R-000090'`, f.domain, b)
	f.requireCopied(t, b)
}

// TestCopyLooksForItsOwnRowsAhead: a batch inserts without ON CONFLICT
// only when the copy holds no row of the table after the batch's cursor;
// rows of another Domain of the same partition under the same branch id
// do not count.
func TestCopyLooksForItsOwnRowsAhead(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 60)
	b := f.createBranch(t, "copy", store.ModeCopy)
	// Another Domain in the copy's partition, holding rows under the
	// copy's branch id ahead of every cursor below.
	var part int
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT r FROM generate_series(0, 7) r
		WHERE satisfies_hash_partition('mat_records'::regclass, 8, r, $1::int)`, f.domain).Scan(&part))
	var other int32
	for i := 0; other == 0; i++ {
		require.Less(t, i, 64, "no Domain in the copy's partition")
		d, err := f.s.CreateDomain(ctx, fmt.Sprintf("other-%d", i))
		require.NoError(t, err)
		var same bool
		require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT satisfies_hash_partition('mat_records'::regclass, 8, $1, $2::int)`, part, d.ID).Scan(&same))
		if same {
			other = d.ID
		}
	}
	f.exec(t, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, created_seq, seq)
		VALUES ($1, $2, 'R-000099', 'Thing', 'Other', 1, 1)`, other, b)
	f.exec(t, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, seq)
		VALUES ($1, $2, 'R-000099', 'next', 'R-000100', 1)`, other, b)
	ahead := func(tbl string, after []string) bool {
		t.Helper()
		own, err := jobs.OwnRowsAhead(ctx, f.s, f.domain, b, tbl, after)
		require.NoError(t, err)
		return own
	}
	for _, tbl := range []string{"mat_records", "mat_links"} {
		require.False(t, ahead(tbl, nil), "%s: nothing of the copy's own yet", tbl)
	}
	// A commit on the copy writes R-000030 and its Link.
	f.exec(t, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, created_seq, seq)
		VALUES ($1, $2, 'R-000030', 'Thing', 'Mine', 300, 300)`, f.domain, b)
	f.exec(t, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, seq)
		VALUES ($1, $2, 'R-000030', 'next', 'R-000031', 300)`, f.domain, b)
	for _, c := range []struct {
		table string
		after []string
		want  bool
	}{
		{"mat_records", nil, true},
		{"mat_records", []string{"R-000020"}, true},
		{"mat_records", []string{"R-000030"}, false},
		{"mat_records", []string{"R-000040"}, false},
		{"mat_links", nil, true},
		{"mat_links", []string{"R-000030", "next", "R-000030"}, true},
		{"mat_links", []string{"R-000030", "next", "R-000031"}, false},
		{"mat_links", []string{"R-000031", "", ""}, false},
	} {
		require.Equal(t, c.want, ahead(c.table, c.after), "%s after %v", c.table, c.after)
	}
}

func TestCopyResumesAfterAStop(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 150)
	b := f.createBranch(t, "copy", store.ModeCopy)
	f.changeAfterFork(t)
	stop := errors.New("stopped")
	for _, k := range []int{3, 9, 20} {
		c := &jobs.Copier{Store: f.s, BatchRows: 13, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
			if st.Batch == k {
				return stop
			}
			return nil
		}}
		require.ErrorIs(t, c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}), stop)
		state, p := f.progress(t, b)
		require.Equal(t, store.StateCopying, state)
		// The other lane may have committed one batch more before it
		// stopped.
		require.GreaterOrEqual(t, p["batches"], float64(k))
		require.LessOrEqual(t, p["batches"], float64(k+1))
	}
	// A cancelled context stops a run too, before its batch commits.
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	require.Error(t, (&jobs.Copier{Store: f.s}).Run(cctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))

	require.NoError(t, (&jobs.Copier{Store: f.s, BatchRows: 29}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.requireCopied(t, b)
	state, p := f.progress(t, b)
	require.Equal(t, store.StateReady, state)
	require.EqualValues(t, f.expectedRows(t), p["copied"], "every row copied exactly once")
}

// TestCopyLanesStopAndResume: the Records and the other tables are copied
// side by side; a run stopped with both lanes in flight keeps each lane's
// position, and the next run resumes both: every row copied exactly once,
// with its postings. On a busy machine one lane can run far ahead of the
// other (each has run out first once), so a lane two batches ahead is
// held back, and a round in which a lane finished is accepted: at least
// one stop must find both lanes in flight.
func TestCopyLanesStopAndResume(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 300)
	b := f.createBranch(t, "copy", store.ModeCopy)
	f.changeAfterFork(t)
	stop := errors.New("stopped")
	inFlight := 0
	for round := 0; round < 3; round++ {
		seen := map[string]int{}
		c := &jobs.Copier{Store: f.s, BatchRows: 5, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
			seen[st.Phase]++
			recs, tabs := seen["records"], seen["links"]+seen["history"]+seen["link_history"]
			if recs >= 2 && tabs >= 2 {
				return stop
			}
			// A lane two batches ahead waits a little (AfterBatch runs one
			// lane at a time: the other lane's batch goes on meanwhile).
			if st.Phase == "records" && recs >= 2 || st.Phase != "records" && tabs >= 2 {
				time.Sleep(20 * time.Millisecond)
			}
			return nil
		}}
		err := c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b})
		if err == nil {
			// Both lanes ran out within the round.
			break
		}
		require.ErrorIs(t, err, stop)
		f.settleLanes(t, b)
		state, p := f.progress(t, b)
		require.Equal(t, store.StateCopying, state)
		lanes, ok := p["lanes"].(map[string]any)
		require.True(t, ok, "progress %v", p)
		rec, tab := lanes["records"].(map[string]any), lanes["tables"].(map[string]any)
		require.Contains(t, []any{"records", jobs.PhaseDone}, rec["phase"])
		require.Contains(t, []any{"links", "history", "link_history", jobs.PhaseDone}, tab["phase"])
		if rec["phase"] == "records" {
			require.NotNil(t, rec["after"], "the Records lane's position")
			if tab["phase"] != jobs.PhaseDone {
				inFlight++
			}
		}
		require.Positive(t, f.count(t, `SELECT count(*) FROM mat_links WHERE domain_id = $1 AND branch_id = $2`, f.domain, b))
		// The counts are the rows the copy holds.
		require.EqualValues(t, f.count(t, `SELECT (SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2)
			+ (SELECT count(*) FROM mat_links WHERE domain_id = $1 AND branch_id = $2)
			+ (SELECT count(*) FROM mat_history WHERE domain_id = $1 AND branch_id = $2)
			+ (SELECT count(*) FROM mat_link_history WHERE domain_id = $1 AND branch_id = $2)`, f.domain, b), p["copied"])
	}
	require.Positive(t, inFlight, "no run stopped with both lanes in flight")
	require.NoError(t, (&jobs.Copier{Store: f.s, BatchRows: 11}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.requireCopied(t, b)
	state, p := f.progress(t, b)
	require.Equal(t, store.StateReady, state)
	require.Equal(t, jobs.PhaseDone, p["phase"])
	require.EqualValues(t, f.expectedRows(t), p["copied"], "every row copied exactly once")
	require.NotContains(t, p, "levels")
	f.requirePostingsAsComputed(t, b)
}

// TestCopyBegunBeforeTheLanesResumes: a copy whose progress holds one
// position (the copy of before the lanes) resumes its table there, with
// the tables before it done and those after it from the start.
func TestCopyBegunBeforeTheLanesResumes(t *testing.T) {
	t.Parallel()
	require.Equal(t, map[string][2]any{"records": {"records", 1}, "tables": {"links", 0}}, jobs.CopyLanesOf("records", 1))
	require.Equal(t, map[string][2]any{"records": {"done", 0}, "tables": {"links", 1}}, jobs.CopyLanesOf("links", 1))
	require.Equal(t, map[string][2]any{"records": {"done", 0}, "tables": {"history", 0}}, jobs.CopyLanesOf("history", 0))
	require.Equal(t, map[string][2]any{"records": {"done", 0}, "tables": {"link_history", 2}}, jobs.CopyLanesOf("link_history", 2))

	ctx := context.Background()
	f := newFixture(t, 150)
	b := f.createBranch(t, "copy", store.ModeCopy)
	f.changeAfterFork(t)
	stop := errors.New("stopped")
	n := 0
	c := &jobs.Copier{Store: f.s, BatchRows: 13, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		if st.Phase == "records" {
			if n++; n == 3 {
				return stop
			}
		}
		return nil
	}}
	require.ErrorIs(t, c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}), stop)
	f.settleLanes(t, b)
	// As the copy of before the lanes left it: in the Records at the
	// Records lane's position, no other table copied yet.
	for _, tbl := range []string{"mat_links", "mat_history", "mat_link_history"} {
		f.exec(t, `DELETE FROM `+tbl+` WHERE domain_id = $1 AND branch_id = $2`, f.domain, b)
	}
	f.exec(t, `UPDATE refs SET progress = (progress - 'lanes') || jsonb_build_object('phase', 'records',
		'level', progress -> 'lanes' -> 'records' -> 'level', 'after', progress -> 'lanes' -> 'records' -> 'after',
		'copied', (SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2))
		WHERE domain_id = $1 AND id = $2`, f.domain, b)
	require.NoError(t, (&jobs.Copier{Store: f.s, BatchRows: 7}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.requireCopied(t, b)
	state, p := f.progress(t, b)
	require.Equal(t, store.StateReady, state)
	require.EqualValues(t, f.expectedRows(t), p["copied"], "every row copied exactly once")
}

// TestCommitsDuringALanedCopyWin: commits on the copy while both lanes
// copy (each takes the ref lock FOR UPDATE, as a commit does) wait for
// the lanes' batches, the batches for them, and their rows win.
func TestCommitsDuringALanedCopyWin(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 400)
	b := f.createBranch(t, "copy", store.ModeCopy)
	var contended atomic.Bool
	started := make(chan struct{})
	var once sync.Once
	c := &jobs.Copier{Store: f.s, BatchRows: 5, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		once.Do(func() { close(started) })
		if st.Contended {
			contended.Store(true)
		}
		return nil
	}}
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}) }()
	<-started
	// Commits on the copy, each on a Record and a Link ahead of the lanes.
	for i := 390; i >= 300; i -= 10 {
		key, next := fmt.Sprintf("R-%06d", i), fmt.Sprintf("R-%06d", i+1)
		t0 := time.Now()
		require.NoError(t, pgx.BeginFunc(ctx, f.s.Pool, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, f.domain, b); err != nil {
				return err
			}
			if _, err := tx.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, created_seq, seq, versions, deleted)
				VALUES ($1, $2, $3, 'Thing', 'Mine', '{"name": "Mine"}', 10, 300, 2, false)
				ON CONFLICT (domain_id, branch_id, key) DO UPDATE SET title = 'Mine', values = '{"name": "Mine"}', seq = 300, versions = 2`,
				f.domain, b, key); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, seq, deleted)
				VALUES ($1, $2, $3, 'next', $4, 300, true)
				ON CONFLICT (domain_id, branch_id, from_key, relation, to_key) DO UPDATE SET seq = 300, deleted = true`, f.domain, b, key, next)
			return err
		}))
		require.Less(t, time.Since(t0), 10*time.Second, "a commit waited for the lanes")
	}
	require.NoError(t, <-done)
	for i := 390; i >= 300; i -= 10 {
		key := fmt.Sprintf("R-%06d", i)
		require.Equal(t, 1, f.count(t, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = $3
			AND title = 'Mine' AND seq = 300`, f.domain, b, key), key)
		require.Equal(t, 1, f.count(t, `SELECT count(*) FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND from_key = $3
			AND deleted AND seq = 300`, f.domain, b, key), key)
		f.exec(t, `DELETE FROM expected_records WHERE key = $1`, key)
		f.exec(t, `DELETE FROM expected_links WHERE from_key = $1`, key)
		f.exec(t, `DELETE FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = $3`, f.domain, b, key)
		f.exec(t, `DELETE FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND from_key = $3`, f.domain, b, key)
	}
	f.requireCopied(t, b)
	state, _ := f.progress(t, b)
	require.Equal(t, store.StateReady, state)
	t.Logf("a commit waited for a batch: %v", contended.Load())
}

// TestACommitDoesNotWaitForEveryBatchOfTheLanes: the lanes' batches
// overlap (each holds the copy's ref lock FOR KEY SHARE), so one of them
// holds the lock at almost every moment; a commit on the copy (FOR UPDATE)
// waits only for the batches under way when it came, not for batch after
// batch: once a commit waited, the lanes lock as commits do.
func TestACommitDoesNotWaitForEveryBatchOfTheLanes(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 200)
	b := f.createBranch(t, "copy", store.ModeCopy)
	const hold = 20 * time.Millisecond
	var batches atomic.Int32
	c := &jobs.Copier{Store: f.s, BatchRows: 5}
	jobs.SetCopyInBatch(c, func(string) { batches.Add(1); time.Sleep(hold) })
	done := make(chan error, 1)
	go func() { done <- c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}) }()
	for batches.Load() < 4 {
		time.Sleep(5 * time.Millisecond)
	}
	for range 3 {
		// The batches counted are those begun once the server shows the
		// commit waiting for a lock, not while a busy machine handed out
		// a connection or sent the statement.
		var waited int32
		require.NoError(t, pgx.BeginFunc(ctx, f.s.Pool, func(tx pgx.Tx) error {
			pid := tx.Conn().PgConn().PID()
			seen := make(chan int32, 1)
			locked := make(chan struct{})
			go func() {
				defer close(seen)
				for {
					var waiting bool
					if err := f.s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
						WHERE pid = $1 AND wait_event_type = 'Lock')`, pid).Scan(&waiting); err != nil {
						t.Error(err)
						return
					}
					if waiting {
						seen <- batches.Load()
						return
					}
					select {
					case <-locked:
						return
					case <-time.After(time.Millisecond):
					}
				}
			}()
			_, err := tx.Exec(ctx, `SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, f.domain, b)
			after := batches.Load()
			close(locked)
			if before, ok := <-seen; ok {
				waited = after - before
			}
			return err
		}))
		// The batches counted while the commit waited: those under way
		// whose count came late (one a lane), and at most one more a lane,
		// begun before either lane saw the commit waiting.
		require.LessOrEqual(t, waited, int32(4), "the commit waited for batch after batch: %d", waited)
	}
	require.NoError(t, <-done)
	f.requireCopied(t, b)
}

func TestCopyOfAnOverlayReadsTheWholeChain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 60)
	o := f.createBranch(t, "overlay", store.ModeOverlay)
	f.changeAfterFork(t)
	// The overlay's own commits: R-000001 changed, R-000002 deleted,
	// R-NEW created; the Link from R-000001 unlinked.
	f.exec(t, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values) VALUES
		($1, $2, 'R-000001', 120, 'O120', 'put', 'Thing', 'Mine', '{"name": "Mine"}'),
		($1, $2, 'R-000002', 120, 'O120', 'delete', 'Thing', '', NULL),
		($1, $2, 'R-NEW', 125, 'O125', 'put', 'Thing', 'New', '{"name": "New"}')`, f.domain, o)
	f.exec(t, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, created_seq, seq, versions, deleted) VALUES
		($1, $2, 'R-000001', 'Thing', 'Mine', '{"name": "Mine"}', 10, 120, 2, false),
		($1, $2, 'R-000002', 'Thing', '', '{}', 10, 120, 2, true),
		($1, $2, 'R-NEW', 'Thing', 'New', '{"name": "New"}', 125, 125, 1, false)`, f.domain, o)
	f.exec(t, `INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op)
		VALUES ($1, $2, 'R-000001', 'next', 'R-000002', 120, 'unlink')`, f.domain, o)
	f.exec(t, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, seq, deleted)
		VALUES ($1, $2, 'R-000001', 'next', 'R-000002', 120, true)`, f.domain, o)
	f.exec(t, `UPDATE refs SET head = 'O125', head_seq = 125 WHERE domain_id = $1 AND id = $2`, f.domain, o)

	cp, err := f.s.CreateBranch(ctx, f.domain, store.CreateBranchRequest{Name: "copy", From: "overlay", Mode: store.ModeCopy}, noJobs)
	require.NoError(t, err)
	require.NoError(t, (&jobs.Copier{Store: f.s, BatchRows: 11}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: cp.ID}))

	rows, err := f.s.Pool.Query(ctx, `SELECT key, title FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted ORDER BY key`, f.domain, cp.ID)
	require.NoError(t, err)
	got := map[string]string{}
	var k, title string
	_, err = pgx.ForEachRow(rows, []any{&k, &title}, func() error {
		got[k] = title
		return nil
	})
	require.NoError(t, err)
	want := map[string]string{}
	erows, err := f.s.Pool.Query(ctx, `SELECT key, title FROM expected_records`)
	require.NoError(t, err)
	_, err = pgx.ForEachRow(erows, []any{&k, &title}, func() error {
		want[k] = title
		return nil
	})
	require.NoError(t, err)
	want["R-000001"] = "Mine"
	delete(want, "R-000002")
	want["R-NEW"] = "New"
	require.Equal(t, want, got)
	require.Zero(t, f.count(t, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND deleted`, f.domain, cp.ID))
	require.Zero(t, f.count(t, `SELECT count(*) FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND from_key = 'R-000001'`, f.domain, cp.ID))
	require.Equal(t, f.count(t, `SELECT count(*) FROM expected_links`)-1,
		f.count(t, `SELECT count(*) FROM mat_links WHERE domain_id = $1 AND branch_id = $2`, f.domain, cp.ID))
	// History: the overlay's own rows and main's up to the fork.
	require.Equal(t, f.count(t, `SELECT count(*) FROM mat_history WHERE domain_id = $1 AND branch_id = $2 AND seq <= 100`, f.domain, f.main)+3,
		f.count(t, `SELECT count(*) FROM mat_history WHERE domain_id = $1 AND branch_id = $2`, f.domain, cp.ID))
}

func TestDeleteRemovesEveryRowAndFreesTheName(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 80)
	b := f.createBranch(t, "gone", store.ModeCopy)
	require.NoError(t, (&jobs.Copier{Store: f.s, BatchRows: 500}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.exec(t, `INSERT INTO idempotency_keys (domain_id, key, branch_id, request_hash, status, response)
		VALUES ($1, 'k1', $2, '\x00', 201, '{}'), ($1, 'k2', $2, '\x00', 201, '{}'), ($1, 'k3', $3, '\x00', 201, '{}')`, f.domain, b, f.main)
	require.NoError(t, jobs.BuildIndex(ctx, f.s, jobs.IndexArgs{DomainID: f.domain, BranchID: b, KindName: "Thing", Attribute: "n"}))
	index := jobs.IndexName(f.domain, b, "Thing", "n")
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM pg_class WHERE relname = $1`, index))
	require.Positive(t, f.count(t, `SELECT count(*) FROM mat_lexicon WHERE domain_id = $1 AND branch_id = $2`, f.domain, b))
	mainRows := f.rowsOf(t, f.main)

	require.NoError(t, f.s.DeleteBranch(ctx, f.domain, "gone", noJobs))
	state, _ := f.progress(t, b)
	require.Equal(t, store.StateDeleting, state)
	_, err := f.s.GetBranch(ctx, f.domain, "gone")
	require.ErrorIs(t, err, store.ErrNotFound)
	// The name stays taken until the job is done.
	_, err = f.s.CreateBranch(ctx, f.domain, store.CreateBranchRequest{Name: "gone", From: "main"}, noJobs)
	require.ErrorIs(t, err, store.ErrConflict)

	stop := errors.New("stopped")
	d := &jobs.Deleter{Store: f.s, BatchRows: 9, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		if st.Batch == 4 {
			return stop
		}
		return nil
	}}
	require.ErrorIs(t, d.Run(ctx, jobs.BranchDeleteArgs{DomainID: f.domain, BranchID: b}), stop)
	require.NoError(t, (&jobs.Deleter{Store: f.s, BatchRows: 9}).Run(ctx, jobs.BranchDeleteArgs{DomainID: f.domain, BranchID: b}))

	require.Equal(t, map[string]int{}, f.rowsOf(t, b))
	require.Equal(t, mainRows, f.rowsOf(t, f.main))
	require.Zero(t, f.count(t, `SELECT count(*) FROM refs WHERE domain_id = $1 AND id = $2`, f.domain, b))
	require.Zero(t, f.count(t, `SELECT count(*) FROM pg_class WHERE relname = $1`, index))
	// Idempotent: a second run finds nothing to do.
	require.NoError(t, (&jobs.Deleter{Store: f.s}).Run(ctx, jobs.BranchDeleteArgs{DomainID: f.domain, BranchID: b}))
	_, err = f.s.CreateBranch(ctx, f.domain, store.CreateBranchRequest{Name: "gone", From: "main"}, noJobs)
	require.NoError(t, err)
}

// rowsOf counts a branch's rows in every table holding branch rows.
func (f *fixture) rowsOf(t testing.TB, b int32) map[string]int {
	t.Helper()
	out := map[string]int{}
	for _, tbl := range []string{"mat_records", "mat_links", "mat_history", "mat_link_history", "mat_lexicon", "idempotency_keys", "schemas",
		"mat_counts", "mat_count_changes"} {
		if n := f.count(t, `SELECT count(*) FROM `+tbl+` WHERE domain_id = $1 AND branch_id = $2`, f.domain, b); n > 0 {
			out[tbl] = n
		}
	}
	return out
}

func TestDeletingACopyStopsItsCopy(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 100)
	b := f.createBranch(t, "copy", store.ModeCopy)
	stop := errors.New("stopped")
	c := &jobs.Copier{Store: f.s, BatchRows: 10, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		if st.Batch == 2 {
			return stop
		}
		return nil
	}}
	require.ErrorIs(t, c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}), stop)
	f.settleLanes(t, b)
	copied := f.count(t, `SELECT (SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2)
		+ (SELECT count(*) FROM mat_links WHERE domain_id = $1 AND branch_id = $2)`, f.domain, b)
	require.Positive(t, copied)
	require.NoError(t, f.s.DeleteBranch(ctx, f.domain, "copy", noJobs))
	// The copy job finds the branch deleting and stops without writing.
	before := f.rowsOf(t, b)
	require.NoError(t, (&jobs.Copier{Store: f.s}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	require.Equal(t, before, f.rowsOf(t, b))
	require.NoError(t, (&jobs.Deleter{Store: f.s}).Run(ctx, jobs.BranchDeleteArgs{DomainID: f.domain, BranchID: b}))
	require.Equal(t, map[string]int{}, f.rowsOf(t, b))
	// main is never deletable.
	require.ErrorIs(t, f.s.DeleteBranch(ctx, f.domain, "main", noJobs), store.ErrConflict)
}

// TestRecordCountersThroughCopyAndDelete: a copy job, stopped and resumed,
// leaves the copy's Record counters saying what it holds (the counters
// start from the base's as of the fork; copying changes no Record the
// branch reads), and a delete job stopped in either counter phase and
// resumed removes every counter row of the branch and none of main's.
func TestRecordCountersThroughCopyAndDelete(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 100)
	// main's counters as migration 0014 fills them (the fixture writes
	// its rows in SQL, not through the commit pipeline).
	f.exec(t, `INSERT INTO mat_counts (domain_id, branch_id, kind, records)
		SELECT domain_id, branch_id, kind, count(*) FROM mat_records
		 WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted GROUP BY 1, 2, 3`, f.domain, f.main)
	b := f.createBranch(t, "copy", store.ModeCopy)
	stop := errors.New("stopped")
	c := &jobs.Copier{Store: f.s, BatchRows: 10, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		if st.Batch == 3 {
			return stop
		}
		return nil
	}}
	require.ErrorIs(t, c.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}), stop)
	require.NoError(t, (&jobs.Copier{Store: f.s, BatchRows: 10}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	held := f.count(t, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted`, f.domain, b)
	require.Positive(t, held)
	require.Equal(t, held, f.count(t, `SELECT sum(records)::int FROM mat_counts WHERE domain_id = $1 AND branch_id = $2`, f.domain, b))

	// More counter rows than a batch, in both tables.
	f.exec(t, `INSERT INTO mat_counts (domain_id, branch_id, kind, records)
		SELECT $1, $2, 'K' || i, i FROM generate_series(1, 30) i`, f.domain, b)
	f.exec(t, `INSERT INTO mat_count_changes (domain_id, branch_id, kind, seq, delta)
		SELECT $1, $2, 'K' || (i % 30 + 1), 1000 + i, 1 FROM generate_series(1, 60) i`, f.domain, b)
	mainRows := f.rowsOf(t, f.main)
	require.NoError(t, f.s.DeleteBranch(ctx, f.domain, "copy", noJobs))
	for _, phase := range []string{"counts", "count_changes"} {
		d := &jobs.Deleter{Store: f.s, BatchRows: 9, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
			if st.Phase == phase {
				return stop
			}
			return nil
		}}
		require.ErrorIs(t, d.Run(ctx, jobs.BranchDeleteArgs{DomainID: f.domain, BranchID: b}), stop, phase)
		_, p := f.progress(t, b)
		require.Equal(t, phase, p["phase"], "stopped within the phase")
	}
	require.NoError(t, (&jobs.Deleter{Store: f.s, BatchRows: 9}).Run(ctx, jobs.BranchDeleteArgs{DomainID: f.domain, BranchID: b}))
	require.Equal(t, map[string]int{}, f.rowsOf(t, b))
	require.Equal(t, mainRows, f.rowsOf(t, f.main))
}

// TestCopyAnalyzeYieldsToAnIndexBuild: a CREATE INDEX CONCURRENTLY on the
// partition holds its lock while it waits for a writer, the finished copy's
// ANALYZE queues behind it, and the index build then waits for the
// ANALYZE's transaction (it holds a snapshot): a deadlock, which aborted a
// copy's ANALYZE or the index build. The ANALYZE gives up its wait before
// a deadlock is looked for and tries again, so both complete.
func TestCopyAnalyzeYieldsToAnIndexBuild(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 100)
	b := f.createBranch(t, "copy", store.ModeCopy)
	part := f.recordsPartition(t)

	// A writer on the partition, its transaction open.
	writer, err := f.s.Pool.Begin(ctx)
	require.NoError(t, err)
	defer writer.Rollback(ctx) //nolint:errcheck // committed below
	_, err = writer.Exec(ctx, `UPDATE mat_records SET title = title WHERE domain_id = $1 AND branch_id = $2 AND key = 'R-000001'`, f.domain, f.main)
	require.NoError(t, err)

	waiting := func(prefix string) func() bool {
		return func() bool {
			return f.count(t, `SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()
				AND wait_event_type = 'Lock' AND query LIKE $1`, prefix+"%") > 0
		}
	}
	built := make(chan error, 1)
	go func() {
		_, err := f.s.Pool.Exec(ctx, `CREATE INDEX CONCURRENTLY mat_records_analyze_test ON `+pgx.Identifier{part}.Sanitize()+` (title)`)
		built <- err
	}()
	require.Eventually(t, waiting("CREATE INDEX"), time.Minute, 10*time.Millisecond, "the index build waits for the writer")

	copied := make(chan error, 1)
	go func() {
		copied <- (&jobs.Copier{Store: f.s, AnalyzeWait: 5 * time.Minute}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b})
	}()
	require.Eventually(t, waiting("ANALYZE"), time.Minute, 10*time.Millisecond, "the copy's ANALYZE waits for the index build")
	require.NoError(t, writer.Commit(ctx))

	require.NoError(t, <-built, "the index build completes")
	require.NoError(t, <-copied, "the copy completes")
	f.requireCopied(t, b)
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM pg_index WHERE indexrelid = 'mat_records_analyze_test'::regclass AND indisvalid`))
	require.Equal(t, 1, f.count(t, `SELECT count(*) FROM pg_stat_user_tables WHERE relid = $1::regclass AND last_analyze IS NOT NULL`, part),
		"the copy analyzed the partition once the index was built")
}

// TestCopyLeavesAnalyzeToAutovacuumWhenLocked: a lock on the partition held
// past the copy's AnalyzeWait does not fail the finished copy.
func TestCopyLeavesAnalyzeToAutovacuumWhenLocked(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 100)
	b := f.createBranch(t, "copy", store.ModeCopy)
	part := f.recordsPartition(t)
	holder, err := f.s.Pool.Begin(ctx)
	require.NoError(t, err)
	defer holder.Rollback(ctx) //nolint:errcheck // rolled back at the end
	_, err = holder.Exec(ctx, `LOCK TABLE `+pgx.Identifier{part}.Sanitize()+` IN SHARE UPDATE EXCLUSIVE MODE`)
	require.NoError(t, err)

	require.NoError(t, (&jobs.Copier{Store: f.s, AnalyzeWait: time.Second}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.requireCopied(t, b)
	state, _ := f.progress(t, b)
	require.Equal(t, store.StateReady, state)
	require.Zero(t, f.count(t, `SELECT count(*) FROM pg_stat_user_tables WHERE relid = $1::regclass AND last_analyze IS NOT NULL`, part))
}

// recordsPartition is the mat_records partition holding the fixture's Domain.
func (f *fixture) recordsPartition(t testing.TB) string {
	t.Helper()
	var part string
	require.NoError(t, f.s.Pool.QueryRow(context.Background(), `SELECT tableoid::regclass::text FROM mat_records WHERE domain_id = $1 LIMIT 1`, f.domain).Scan(&part))
	return part
}

// TestCopyAnalyzesItsPostingsAndLexicon: the Records' triggers write the
// copy's search postings and lexicon words, and the copy refreshes their
// statistics too once its Records are copied.
func TestCopyAnalyzesItsPostingsAndLexicon(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 100)
	b := f.createBranch(t, "copy", store.ModeCopy)
	var start time.Time
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT clock_timestamp()`).Scan(&start))
	require.NoError(t, (&jobs.Copier{Store: f.s}).Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
	f.requireCopied(t, b)
	var words string
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT tableoid::regclass::text FROM mat_search_words WHERE domain_id = $1 LIMIT 1`, f.domain).Scan(&words))
	for _, rel := range []string{words, "mat_lexicon"} {
		require.Equal(t, 1, f.count(t, `SELECT count(*) FROM pg_stat_user_tables WHERE relid = $1::regclass AND last_analyze >= $2`, rel, start), rel)
	}
}
