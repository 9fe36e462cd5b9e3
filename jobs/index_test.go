package jobs_test

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

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
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{})
	require.NoError(t, err)
	defer s.Close()
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
	require.Contains(t, def, "(\"values\" ->> 'country'::text)")
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
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{})
	require.NoError(t, err)
	defer s.Close()
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

	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{})
	require.NoError(t, err)
	defer s.Close()
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
