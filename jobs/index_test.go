package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const compiled = `{"kinds":{"Supplier":{"name":"Supplier","title":"name","attributes":[
 {"name":"name","type":"text","required":true,"search":true},
 {"name":"country","type":"text","indexed":true},
 {"name":"vat","type":"text","unique":true},
 {"name":"tier","type":"text"}]}},"relations":{}}`

func TestIndexBuildsForSchema(t *testing.T) {
	t.Parallel()
	var s schema.Schema
	require.NoError(t, json.Unmarshal([]byte(compiled), &s))
	got := jobs.IndexBuildsForSchema(nil, &s)
	require.Equal(t, []jobs.IndexArgs{{KindName: "Supplier", Attribute: "country"}, {KindName: "Supplier", Attribute: "vat"}}, got)
	require.Empty(t, jobs.IndexBuildsForSchema(&s, &s))
	require.Equal(t, "store.index", jobs.IndexArgs{}.Kind())
	name := jobs.IndexName(1, 2, "Supplier", "country")
	require.True(t, strings.HasPrefix(name, "mat_records_attr_"))
	require.Len(t, name, len("mat_records_attr_")+24)
	require.Equal(t, name, jobs.IndexName(1, 2, "Supplier", "country"))
}

func TestIndexJobBuildsAnIndexTheQueryUses(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	d, err := s.CreateDomain(ctx, "idx")
	require.NoError(t, err)
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1`, d.ID).Scan(&branch))
	_, err = s.Pool.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", created_seq, seq)
		SELECT $1, $2, 'S-' || i, 'Supplier', 'Supplier ' || i,
		       jsonb_build_object('name', 'Supplier ' || i, 'country', 'C' || (i % 500)), 1, 1
		  FROM generate_series(1, 20000) i`, d.ID, branch)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `ANALYZE mat_records`)
	require.NoError(t, err)

	client, err := jobs.NewClient(s.Pool, jobs.NewWorkers(s), nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	done, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	require.NoError(t, client.Start(ctx))
	defer func() { require.NoError(t, client.Stop(context.WithoutCancel(ctx))) }()

	var old, cur schema.Schema
	require.NoError(t, json.Unmarshal([]byte(`{"kinds":{},"relations":{}}`), &old))
	require.NoError(t, json.Unmarshal([]byte(compiled), &cur))
	require.NoError(t, pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		return jobs.EnqueueIndexBuilds(ctx, client, tx, d.ID, branch, &old, &cur)
	}))
	for i := 0; i < 2; i++ {
		select {
		case ev := <-done:
			require.Equal(t, river.EventKindJobCompleted, ev.Kind, "%+v", ev.Job.Errors)
		case <-time.After(60 * time.Second):
			t.Fatal("index jobs did not finish")
		}
	}
	name := jobs.IndexName(d.ID, branch, "Supplier", "country")
	var def string
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT indexdef FROM pg_indexes WHERE indexname = $1`, name).Scan(&def))
	require.Contains(t, def, "(ivals ->> 'country'::text)")
	require.Contains(t, def, "kind = 'Supplier'")

	// The statement lb_query_by_attribute runs (as its definer) uses it.
	plan := explainAsApp(t, s, d.ID, `SELECT lb_query_by_attribute_sql('main', 'Supplier', 'country', 'C7', '', 51)`)
	require.Contains(t, plan, name)
	require.NotContains(t, plan, "Seq Scan")

	// An invalid leftover of an interrupted build is rebuilt.
	_, err = s.Pool.Exec(ctx, `UPDATE pg_index SET indisvalid = false WHERE indexrelid = $1::regclass`, name)
	require.NoError(t, err)
	require.NoError(t, jobs.BuildIndex(ctx, s, jobs.IndexArgs{DomainID: d.ID, BranchID: branch, KindName: "Supplier", Attribute: "country"}))
	var valid bool
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT indisvalid FROM pg_index WHERE indexrelid = $1::regclass`, name).Scan(&valid))
	require.True(t, valid)
	// And a hostile Attribute name is quoted.
	require.NoError(t, jobs.BuildIndex(ctx, s, jobs.IndexArgs{DomainID: d.ID, BranchID: branch, KindName: "Sup'plier", Attribute: "x'); DROP TABLE refs; --"}))
	var n int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM refs`).Scan(&n))
	require.Equal(t, 1, n)
}

// explainAsApp gets a read statement's text from its companion function as
// lorebase_app in the Domain, and EXPLAINs it as the owner: the read
// functions are SECURITY DEFINER, so that is the plan the function runs.
func explainAsApp(t *testing.T, s *store.Store, domainID int32, companion string) string {
	t.Helper()
	ctx := context.Background()
	var plan []string
	require.NoError(t, pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(ctx, tx, domainID); err != nil {
			return err
		}
		var stmt string
		if err := tx.QueryRow(ctx, companion).Scan(&stmt); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `RESET ROLE`); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `EXPLAIN `+stmt)
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return strings.Join(plan, "\n")
}

// TestLateIndexJobForADeletedBranchDoesNothing: a build that runs after its
// branch was deleted (or while it is being deleted) creates no index.
func TestLateIndexJobForADeletedBranchDoesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	d, err := s.CreateDomain(ctx, "late")
	require.NoError(t, err)
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `INSERT INTO refs (domain_id, name, state) VALUES ($1, 'going', 'deleting') RETURNING id`, d.ID).Scan(&branch))
	count := func() int {
		var n int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname = $1`,
			jobs.IndexName(d.ID, branch, "Supplier", "country")).Scan(&n))
		return n
	}
	a := jobs.IndexArgs{DomainID: d.ID, BranchID: branch, KindName: "Supplier", Attribute: "country"}
	require.NoError(t, jobs.BuildIndex(ctx, s, a))
	require.Zero(t, count(), "no index for a branch being deleted")
	_, err = s.Pool.Exec(ctx, `DELETE FROM refs WHERE domain_id = $1 AND id = $2`, d.ID, branch)
	require.NoError(t, err)
	require.NoError(t, jobs.BuildIndex(ctx, s, a))
	require.Zero(t, count(), "no index for a branch that is gone")
	// A live branch gets it (the check above can fail).
	require.NoError(t, s.Pool.QueryRow(ctx, `INSERT INTO refs (domain_id, name) VALUES ($1, 'live') RETURNING id`, d.ID).Scan(&branch))
	a.BranchID = branch
	require.NoError(t, jobs.BuildIndex(ctx, s, a))
	require.Equal(t, 1, count())
}

// TestIndexesAreRecordedAndDropped: a build records its index; an
// Attribute that stops being indexed (or whose Kind goes) has its index
// dropped by store.index_drop, unless the schema indexes it again; a
// deleted branch loses every recorded index.
func TestIndexesAreRecordedAndDropped(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	var withIdx, without, noKind schema.Schema
	require.NoError(t, json.Unmarshal([]byte(compiled), &withIdx))
	require.NoError(t, json.Unmarshal([]byte(strings.ReplaceAll(strings.ReplaceAll(compiled, `,"indexed":true`, ""), `,"unique":true`, "")), &without))
	require.NoError(t, json.Unmarshal([]byte(`{"kinds":{},"relations":{}}`), &noKind))
	require.Equal(t, []jobs.IndexDropArgs{{KindName: "Supplier", Attribute: "country"}, {KindName: "Supplier", Attribute: "vat"}},
		jobs.IndexDropsForSchema(&withIdx, &without))
	require.Len(t, jobs.IndexDropsForSchema(&withIdx, &noKind), 2)
	require.Empty(t, jobs.IndexDropsForSchema(&withIdx, &withIdx))
	require.Empty(t, jobs.IndexDropsForSchema(nil, &withIdx))

	s := pgtest.Store(t)
	d, err := s.CreateDomain(ctx, "rec")
	require.NoError(t, err)
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1`, d.ID).Scan(&branch))
	setSchema := func(c string) {
		_, err := s.Pool.Exec(ctx, `UPDATE schemas SET compiled = $3 WHERE domain_id = $1 AND branch_id = $2`, d.ID, branch, c)
		require.NoError(t, err)
	}
	state := func(attr string) (indexes, records int) {
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM pg_class WHERE relname = $1),
			(SELECT count(*) FROM attribute_indexes WHERE name = $1)`, jobs.IndexName(d.ID, branch, "Supplier", attr)).Scan(&indexes, &records))
		return
	}
	setSchema(compiled)
	for _, attr := range []string{"country", "vat"} {
		require.NoError(t, jobs.BuildIndex(ctx, s, jobs.IndexArgs{DomainID: d.ID, BranchID: branch, KindName: "Supplier", Attribute: attr}))
		i, r := state(attr)
		require.Equal(t, 1, i, attr)
		require.Equal(t, 1, r, attr)
	}
	// Still indexed by the schema: the drop does nothing.
	drop := jobs.IndexDropArgs{DomainID: d.ID, BranchID: branch, KindName: "Supplier", Attribute: "country"}
	require.NoError(t, jobs.DropIndex(ctx, s, drop))
	i, _ := state("country")
	require.Equal(t, 1, i)
	// No longer indexed: dropped and forgotten.
	setSchema(strings.ReplaceAll(compiled, `,"indexed":true`, ""))
	require.NoError(t, jobs.DropIndex(ctx, s, drop))
	i, r := state("country")
	require.Zero(t, i)
	require.Zero(t, r)

	// The branch deleted: the recorded index of vat goes, even though the
	// schema no longer names the Attribute.
	setSchema(`{"kinds":{},"relations":{}}`)
	_, err = s.Pool.Exec(ctx, `UPDATE refs SET state = 'deleting' WHERE domain_id = $1 AND id = $2`, d.ID, branch)
	require.NoError(t, err)
	dl := &jobs.Deleter{Store: s}
	require.NoError(t, dl.Run(ctx, jobs.BranchDeleteArgs{DomainID: d.ID, BranchID: branch}))
	i, r = state("vat")
	require.Zero(t, i, "the recorded index went with its branch")
	require.Zero(t, r)
}

// TestIndexBuildCoversACommitInFlight: a commit that holds the branch lock
// and has written its Records without the Attribute in ivals (it read the
// branch's recorded indexes before the build recorded its own) when the
// build starts: the build waits for it, backfills after it, and the
// attribute query, reading the index once it is ready, finds its Records.
func TestIndexBuildCoversACommitInFlight(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	pipe := commit.New(s, commit.Config{})
	a := countrySuppliers(t, s, pipe, "inflight", 50, 5)
	branch := a.BranchID

	tx, err := s.Requests.Begin(ctx)
	require.NoError(t, err)
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // committed below
	require.NoError(t, store.Scope(ctx, tx, a.DomainID))
	b, err := store.LockBranch(ctx, tx, "main")
	require.NoError(t, err)
	_, err = pipe.CommitLocked(ctx, tx, a.DomainID, b, &commit.Request{Author: "t", Message: "in flight", Changes: []commit.Change{
		{Op: "put", Kind: "Supplier", Key: "S-new", Values: json.RawMessage(`{"name": "Supplier new", "country": "C-new"}`)},
		{Op: "patch", Key: "S-01", Values: json.RawMessage(`{"country": "C-new"}`)}}}, nil, false)
	require.NoError(t, err)

	built := make(chan error, 1)
	go func() {
		built <- jobs.BuildIndex(ctx, s, a)
	}()
	// The build has recorded the index and waits for the branch lock.
	require.Eventually(t, func() bool {
		var waiting bool
		// This test's database only: the tests run in parallel on one cluster.
		err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock'
			  AND query LIKE 'SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE')`).Scan(&waiting)
		return err == nil && waiting
	}, time.Minute, 20*time.Millisecond)
	var ready bool
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT ready FROM attribute_indexes WHERE domain_id = $1`, a.DomainID).Scan(&ready))
	require.False(t, ready, "ready before it is built")
	require.NoError(t, tx.Commit(ctx))
	require.NoError(t, <-built)

	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT ready FROM attribute_indexes WHERE domain_id = $1`, a.DomainID).Scan(&ready))
	require.True(t, ready)
	var stale int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1
		AND (ivals ->> 'country') IS DISTINCT FROM ("values" ->> 'country')`, a.DomainID).Scan(&stale))
	require.Zero(t, stale)
	// The read compares the index's expression (50 Records: the planner
	// scans them; TestIndexJobBuildsAnIndexTheQueryUses has the plan).
	var stmt string
	require.NoError(t, s.InDomain(ctx, a.DomainID, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT lb_query_by_attribute_sql('main', 'Supplier', 'country', 'C-new', '', 51)`).Scan(&stmt)
	}))
	require.Contains(t, stmt, `(m.ivals ->> 'country') = 'C-new'`)
	query := func(value string) []string {
		var keys []string
		require.NoError(t, s.InDomain(ctx, a.DomainID, func(ctx context.Context, tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT key FROM lb_query_by_attribute('main', 'Supplier', 'country', $1, '', 100)`, value)
			if err != nil {
				return err
			}
			keys, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		}))
		return keys
	}
	require.Equal(t, []string{"S-01", "S-new"}, query("C-new"))

	// Updates of the indexed Attribute once the index is ready: found
	// under their new value, no longer under the old one.
	_, err = pipe.Commit(ctx, a.DomainID, "main", &commit.Request{Author: "t", Message: "m", Changes: []commit.Change{
		{Op: "patch", Key: "S-01", Values: json.RawMessage(`{"country": "C0"}`)},
		{Op: "patch", Key: "S-02", Values: json.RawMessage(`{"country": "C-new"}`)},
		{Op: "patch", Key: "S-03", Values: json.RawMessage(`{"name": "Supplier three"}`)}}}, "")
	require.NoError(t, err)
	require.Equal(t, []string{"S-02", "S-new"}, query("C-new"))
	require.Equal(t, []string{"S-00", "S-01", "S-05", "S-10", "S-15", "S-20", "S-25", "S-30", "S-35", "S-40", "S-45"}, query("C0"))
	require.Equal(t, []string{"S-03", "S-08", "S-13", "S-18", "S-23", "S-28", "S-33", "S-38", "S-43", "S-48"}, query("C3"))

	// Another Domain sees none of the recorded indexes, through the table
	// or the functions that read it.
	other, err := s.CreateDomain(ctx, "other")
	require.NoError(t, err)
	for _, tc := range []struct {
		scope int32
		n     int
		expr  string
		ivals *string
	}{
		{a.DomainID, 1, `(m.ivals ->> 'country')`, ptr(`{"country": "x"}`)},
		{other.ID, 0, `(m."values" ->> 'country')`, nil},
	} {
		var n int
		var expr string
		var ivals *string
		require.NoError(t, s.InDomain(ctx, tc.scope, func(ctx context.Context, tx pgx.Tx) error {
			return tx.QueryRow(ctx, `SELECT (SELECT count(*) FROM attribute_indexes), lb_attr_expr($1, ARRAY[$2::int], 'Supplier', 'country', 'm'),
				lb_ivals($1, $2, 'Supplier', '{"country": "x", "name": "y"}')::text`, a.DomainID, branch).Scan(&n, &expr, &ivals)
		}))
		require.Equal(t, tc.n, n, "scope %d", tc.scope)
		require.Equal(t, tc.expr, expr, "scope %d", tc.scope)
		require.Equal(t, tc.ivals, ivals, "scope %d", tc.scope)
	}
}

func ptr(s string) *string { return &s }

// TestIndexBuildsOfTwoDomainsDoNotWaitForEachOther: while one Domain's
// build is between its backfill and its CREATE INDEX (a long backfill of a
// big Kind), another Domain's build runs to its end: the builds share
// only the lock around each CREATE or DROP INDEX CONCURRENTLY statement.
func TestIndexBuildsOfTwoDomainsDoNotWaitForEachOther(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	pipe := commit.New(s, commit.Config{})
	args := map[string]jobs.IndexArgs{}
	for _, name := range []string{"slow", "other"} {
		args[name] = countrySuppliers(t, s, pipe, name, 20, 3)
	}
	state := func(a jobs.IndexArgs) (exists, ready bool) {
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL,
				coalesce((SELECT ready FROM attribute_indexes WHERE domain_id = $2 AND branch_id = $3), false)`,
			jobs.IndexName(a.DomainID, a.BranchID, a.KindName, a.Attribute), a.DomainID, a.BranchID).Scan(&exists, &ready))
		return exists, ready
	}

	parked, resume := make(chan struct{}), make(chan struct{})
	var once sync.Once
	release := func() { once.Do(func() { close(resume) }) }
	// On failure too, before the store closes: the parked build holds a
	// connection.
	defer release()
	slow := make(chan error, 1)
	go func() {
		slow <- jobs.BuildIndexPaused(ctx, s, args["slow"], func(ctx context.Context) error {
			close(parked)
			select {
			case <-resume:
				return nil
			case <-ctx.Done():
				return ctx.Err()
			}
		})
	}()
	select {
	case <-parked:
	case err := <-slow:
		t.Fatalf("the slow build ended before its pause: %v", err)
	}
	exists, ready := state(args["slow"])
	require.False(t, exists, "parked before its index is created")
	require.False(t, ready)

	// The other Domain's build runs to its end meanwhile; a minute is
	// far more than it needs, and it would wait for ever behind a lock
	// held for the whole slow build.
	bounded, cancel := context.WithTimeout(ctx, time.Minute)
	defer cancel()
	require.NoError(t, jobs.BuildIndex(bounded, s, args["other"]))
	exists, ready = state(args["other"])
	require.True(t, exists)
	require.True(t, ready)
	exists, _ = state(args["slow"])
	require.False(t, exists, "still parked")

	release()
	require.NoError(t, <-slow)
	exists, ready = state(args["slow"])
	require.True(t, exists)
	require.True(t, ready)
	var stale int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records
		WHERE (ivals ->> 'country') IS DISTINCT FROM ("values" ->> 'country')`).Scan(&stale))
	require.Zero(t, stale)
}

// countrySuppliers creates a Domain whose schema indexes Supplier.country
// and commits n Suppliers "S-00"... to its main, of countries "C0" to
// "C<countries-1>" in turn; it returns the build of that index.
func countrySuppliers(t *testing.T, s *store.Store, pipe *commit.Pipeline, name string, n, countries int) jobs.IndexArgs {
	t.Helper()
	ctx := context.Background()
	d, err := s.CreateDomain(ctx, name)
	require.NoError(t, err)
	_, err = pipe.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: []byte(`{"kinds": [{"name": "Supplier", "title": "name",
		"attributes": [{"name": "name", "type": "text", "required": true}, {"name": "country", "type": "text", "indexed": true}]}]}`)})
	require.NoError(t, err)
	var cs []commit.Change
	for i := 0; i < n; i++ {
		cs = append(cs, commit.Change{Op: "put", Kind: "Supplier", Key: fmt.Sprintf("S-%02d", i),
			Values: json.RawMessage(fmt.Sprintf(`{"name": "Supplier %d", "country": "C%d"}`, i, i%countries))})
	}
	_, err = pipe.Commit(ctx, d.ID, "main", &commit.Request{Author: "t", Message: "m", Changes: cs}, "")
	require.NoError(t, err)
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&branch))
	return jobs.IndexArgs{DomainID: d.ID, BranchID: branch, KindName: "Supplier", Attribute: "country"}
}
