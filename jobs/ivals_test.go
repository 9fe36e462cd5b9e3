package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// supplierSchema is a schema of Suppliers indexing the Attributes named.
func supplierSchema(indexed ...string) []byte {
	attrs := `{"name": "name", "type": "text", "required": true}`
	for _, a := range []string{"country", "vat", "tier"} {
		flag := ""
		for _, x := range indexed {
			if x == a {
				flag = `, "indexed": true`
			}
		}
		attrs += fmt.Sprintf(`, {"name": %q, "type": "text"%s}`, a, flag)
	}
	return []byte(`{"kinds": [{"name": "Supplier", "title": "name", "attributes": [` + attrs + `]}]}`)
}

// ivalsFixture is a Domain whose schema changes queue their index builds
// and drops (jobs.EnqueueIndexBuilds in the change's transaction, as the
// Keeper does) with a client that only inserts; the test runs the jobs.
type ivalsFixture struct {
	s      *store.Store
	pipe   *commit.Pipeline
	domain int32
	branch int32
	n      int // Suppliers committed so far
}

func newIvalsFixture(t *testing.T, s *store.Store, name string) *ivalsFixture {
	t.Helper()
	ctx := context.Background()
	client, err := jobs.NewClient(s.Pool, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	f := &ivalsFixture{s: s}
	f.pipe = commit.New(s, commit.Config{OnSchemaChange: func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, old, new *schema.Schema) error {
		return jobs.EnqueueIndexBuilds(ctx, client, tx, domainID, branchID, old, new)
	}})
	d, err := s.CreateDomain(ctx, name)
	require.NoError(t, err)
	f.domain = d.ID
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&f.branch))
	return f
}

func (f *ivalsFixture) putSchema(t *testing.T, indexed ...string) {
	t.Helper()
	_, err := f.pipe.PutSchema(context.Background(), f.domain, "main", &commit.SchemaRequest{Document: supplierSchema(indexed...)})
	require.NoError(t, err)
}

// commit puts n new Suppliers (every third without a VAT number) and
// changes the country and tier of the first ones.
func (f *ivalsFixture) commit(t *testing.T, n int) {
	t.Helper()
	var cs []commit.Change
	for i := f.n; i < f.n+n; i++ {
		v := map[string]any{"name": fmt.Sprintf("Supplier %d", i), "country": fmt.Sprintf("C%d", i%7), "tier": fmt.Sprintf("T%d", i%3)}
		if i%3 != 0 {
			v["vat"] = fmt.Sprintf("VAT%05d", i)
		}
		raw, err := json.Marshal(v)
		require.NoError(t, err)
		cs = append(cs, commit.Change{Op: "put", Kind: "Supplier", Key: fmt.Sprintf("S-%05d", i), Values: raw})
	}
	for i := 0; i < min(f.n, 5); i++ {
		cs = append(cs, commit.Change{Op: "patch", Key: fmt.Sprintf("S-%05d", i),
			Values: json.RawMessage(fmt.Sprintf(`{"country": "X%d", "tier": null}`, f.n))})
	}
	f.n += n
	_, err := f.pipe.Commit(context.Background(), f.domain, "main", &commit.Request{Author: "t", Message: "m", Changes: cs}, "")
	require.NoError(t, err)
}

func (f *ivalsFixture) args(attr string) jobs.IndexArgs {
	return jobs.IndexArgs{DomainID: f.domain, BranchID: f.branch, KindName: "Supplier", Attribute: attr}
}

// build runs the queued index builds and drops of the Domain, in the order
// they were queued, as the workers would.
func (f *ivalsFixture) runJobs(t *testing.T) {
	t.Helper()
	ctx := context.Background()
	rows, err := f.s.Pool.Query(ctx, `SELECT id, kind, args FROM river_job
		WHERE (args ->> 'domain_id')::int = $1 AND kind IN ($2, $3) AND state = 'available' ORDER BY id`,
		f.domain, jobs.IndexKind, jobs.IndexDropArgs{}.Kind())
	require.NoError(t, err)
	type job struct {
		id   int64
		kind string
		args []byte
	}
	var queued []job
	for rows.Next() {
		var j job
		require.NoError(t, rows.Scan(&j.id, &j.kind, &j.args))
		queued = append(queued, j)
	}
	require.NoError(t, rows.Err())
	for _, j := range queued {
		if j.kind == jobs.IndexKind {
			var a jobs.IndexArgs
			require.NoError(t, json.Unmarshal(j.args, &a))
			require.NoError(t, jobs.BuildIndex(ctx, f.s, a))
		} else {
			var a jobs.IndexDropArgs
			require.NoError(t, json.Unmarshal(j.args, &a))
			require.NoError(t, jobs.DropIndex(ctx, f.s, a))
		}
		_, err := f.s.Pool.Exec(ctx, `UPDATE river_job SET state = 'completed', finalized_at = now() WHERE id = $1`, j.id)
		require.NoError(t, err)
	}
}

// xmins answers the row version of each Supplier of main: an update of the
// row changes it.
func (f *ivalsFixture) xmins(t *testing.T) map[string]string {
	t.Helper()
	return pgtest.RowVersions(t, f.s.Pool, `SELECT key, xmin::text FROM mat_records
		WHERE domain_id = $1 AND branch_id = $2 AND kind = 'Supplier'`, f.domain, f.branch)
}

// requireIvals checks that every Record's ivals are its values restricted
// to the Attributes of the indexes main records (NULL for none), and that
// the recorded Attributes are want.
func (f *ivalsFixture) requireIvals(t *testing.T, want ...string) {
	t.Helper()
	f.requireIvalsOf(t, true, want...)
}

// requireIvalsOf is requireIvals of every Record (all) or of those the
// last commit wrote.
func (f *ivalsFixture) requireIvalsOf(t *testing.T, all bool, want ...string) {
	t.Helper()
	ctx := context.Background()
	var recorded []string
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(attribute::text ORDER BY attribute), '{}')
		FROM attribute_indexes WHERE domain_id = $1 AND branch_id = $2`, f.domain, f.branch).Scan(&recorded))
	if want == nil {
		want = []string{}
	}
	require.Equal(t, want, recorded)
	var bad []string
	rows, err := f.s.Pool.Query(ctx, `SELECT key || ': ' || coalesce(ivals::text, 'NULL') FROM mat_records m
		WHERE domain_id = $1 AND branch_id = $2
		  AND ($4 OR seq = (SELECT max(seq) FROM mat_records WHERE domain_id = $1 AND branch_id = $2))
		  AND ivals IS DISTINCT FROM (SELECT jsonb_object_agg(a, m."values" -> a) FROM unnest($3::text[]) a WHERE m."values" ? a)`,
		f.domain, f.branch, recorded, all)
	require.NoError(t, err)
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		bad = append(bad, s)
	}
	require.NoError(t, rows.Err())
	require.Empty(t, bad, "ivals not the values of %v", recorded)
}

// TestSchemaChangeIndexesRewriteEachRecordOnce: a schema change indexing
// two Attributes of a loaded Kind records both with the change, so the
// first build rewrites each Record once, writing both values, and the
// second rewrites none.
func TestSchemaChangeIndexesRewriteEachRecordOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	f := newIvalsFixture(t, s, "once")
	f.putSchema(t)
	f.commit(t, 300)
	f.putSchema(t, "country", "vat")
	var notReady int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM attribute_indexes WHERE domain_id = $1 AND NOT ready`, f.domain).Scan(&notReady))
	require.Equal(t, 2, notReady, "the schema change records its indexes")

	before := f.xmins(t)
	require.NoError(t, jobs.BuildIndex(ctx, s, f.args("country")))
	require.Equal(t, 300, pgtest.Rewritten(before, f.xmins(t)), "the first build rewrites each Supplier")
	f.requireIvals(t, "country", "vat")
	before = f.xmins(t)
	require.NoError(t, jobs.BuildIndex(ctx, s, f.args("vat")))
	require.Zero(t, pgtest.Rewritten(before, f.xmins(t)), "the second build finds nothing stale")
	var ready int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM attribute_indexes WHERE domain_id = $1 AND ready`, f.domain).Scan(&ready))
	require.Equal(t, 2, ready)
}

// TestIvalsFollowTheRecordedIndexes: through schema changes that add and
// drop indexes, their builds and drops, and commits in between, every
// Record's ivals are its values of the recorded Attributes.
func TestIvalsFollowTheRecordedIndexes(t *testing.T) {
	t.Parallel()
	s := pgtest.Store(t)
	f := newIvalsFixture(t, s, "follow")
	f.putSchema(t)
	f.commit(t, 40)
	for _, step := range []struct {
		name     string
		do       func(t *testing.T)
		recorded []string
		lastOnly bool // before the builds: the last commit's Records only
	}{
		{"nothing indexed", func(t *testing.T) {}, nil, false},
		{"two indexes recorded, commits write both before the builds", func(t *testing.T) {
			f.putSchema(t, "country", "vat")
			f.commit(t, 20)
		}, []string{"country", "vat"}, true},
		{"built", func(t *testing.T) { f.runJobs(t) }, []string{"country", "vat"}, false},
		{"vat dropped", func(t *testing.T) { f.putSchema(t, "country"); f.runJobs(t) }, []string{"country"}, false},
		{"commits after the drop", func(t *testing.T) { f.commit(t, 10) }, []string{"country"}, false},
		{"tier and vat added, commits before their builds", func(t *testing.T) {
			f.putSchema(t, "country", "tier", "vat")
			f.commit(t, 10)
			f.runJobs(t)
		}, []string{"country", "tier", "vat"}, false},
		{"country and tier dropped, vat kept", func(t *testing.T) {
			f.putSchema(t, "vat")
			f.commit(t, 5)
			f.runJobs(t)
		}, []string{"vat"}, false},
		{"all dropped", func(t *testing.T) { f.putSchema(t); f.runJobs(t) }, nil, false},
	} {
		t.Run(step.name, func(t *testing.T) {
			step.do(t)
			f.requireIvalsOf(t, !step.lastOnly, step.recorded...)
		})
	}
}

// TestDropDuringABuildOfTheSameKind: a build's backfill batch that read
// the recorded Attributes (vat among them) before the drop of vat forgot
// it does not leave vat in ivals: the drop waits for the batch before it
// clears the values.
func TestDropDuringABuildOfTheSameKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	f := newIvalsFixture(t, s, "race")
	f.putSchema(t)
	f.commit(t, 60)
	f.putSchema(t, "country", "vat")

	parked, resume := make(chan struct{}), make(chan struct{})
	var park, unpark sync.Once
	release := func() { unpark.Do(func() { close(resume) }) }
	defer release()
	built := make(chan error, 1)
	go func() {
		built <- jobs.BuildIndexInBatch(ctx, s, f.args("country"), func(ctx context.Context) error {
			first := false
			park.Do(func() { first = true; close(parked) })
			if !first {
				return nil
			}
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
	case err := <-built:
		t.Fatalf("the build ended before its first batch wrote: %v", err)
	}
	// The schema stops indexing vat and its drop runs while the batch,
	// which read vat as recorded, has not written yet.
	_, err := s.Pool.Exec(ctx, `UPDATE schemas SET compiled = $3 WHERE domain_id = $1 AND branch_id = $2`,
		f.domain, f.branch, `{"kinds":{"Supplier":{"name":"Supplier","title":"name","attributes":[
			{"name":"name","type":"text","required":true},{"name":"country","type":"text","indexed":true},
			{"name":"vat","type":"text"},{"name":"tier","type":"text"}]}},"relations":{}}`)
	require.NoError(t, err)
	dropped := make(chan error, 1)
	go func() {
		dropped <- jobs.DropIndex(ctx, s, jobs.IndexDropArgs{DomainID: f.domain, BranchID: f.branch, KindName: "Supplier", Attribute: "vat"})
	}()
	// Either the drop ends (it did not wait for the batch) or it waits
	// for the batch's lock; then the batch writes.
	var dropErr error
	dropDone := false
	require.Eventually(t, func() bool {
		select {
		case dropErr = <-dropped:
			dropDone = true
			return true
		default:
		}
		var waiting bool
		err := s.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
			WHERE a.datname = current_database() AND l.locktype = 'advisory' AND NOT l.granted)`).Scan(&waiting)
		return err == nil && waiting
	}, time.Minute, 10*time.Millisecond)
	release()
	require.NoError(t, <-built)
	if !dropDone {
		dropErr = <-dropped
	}
	require.NoError(t, dropErr)
	f.requireIvals(t, "country")
	var withVat int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND ivals ? 'vat'`, f.domain).Scan(&withVat))
	require.Zero(t, withVat)
}

// TestRecordIndexesStaysInItsDomain: lorebase_app scoped to one Domain
// cannot record, see, change or forget the indexes of another through the
// schema change's path.
func TestRecordIndexesStaysInItsDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	victim := newIvalsFixture(t, s, "victim")
	victim.putSchema(t, "country")
	hostile := newIvalsFixture(t, s, "hostile")
	hostile.putSchema(t)
	builds := []jobs.IndexArgs{{KindName: "Supplier", Attribute: "vat"}}
	recorded := func() []string {
		var names []string
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(domain_id || '/' || branch_id || '/' || attribute ORDER BY 1), '{}')
			FROM attribute_indexes`).Scan(&names))
		return names
	}
	want := []string{fmt.Sprintf("%d/%d/country", victim.domain, victim.branch)}
	require.Equal(t, want, recorded())
	for _, tc := range []struct {
		name string
		fn   func(tx pgx.Tx) error
		err  string
	}{
		{"record in the other Domain", func(tx pgx.Tx) error {
			return jobs.RecordIndexes(ctx, tx, victim.domain, victim.branch, builds)
		}, ""},
		{"insert a record into the other Domain", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute) VALUES ($1, $2, 'Supplier', 'vat')`,
				victim.domain, victim.branch)
			return err
		}, "row-level security"},
		{"record its own under the name of the other Domain's index", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute, name) VALUES ($1, $2, 'Supplier', 'vat', $3)`,
				hostile.domain, hostile.branch, jobs.IndexName(victim.domain, victim.branch, "Supplier", "country"))
			return err
		}, "permission denied"},
		{"record on the other Domain's branch", func(tx pgx.Tx) error {
			return jobs.RecordIndexes(ctx, tx, hostile.domain, victim.branch, builds)
		}, ""},
		{"read the other Domain's", func(tx pgx.Tx) error {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM attribute_indexes`).Scan(&n); err != nil {
				return err
			}
			if n != 0 {
				return fmt.Errorf("sees %d recorded indexes", n)
			}
			return nil
		}, ""},
		{"forget the other Domain's", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `DELETE FROM attribute_indexes WHERE domain_id = $1`, victim.domain)
			return err
		}, "permission denied"},
		{"mark the other Domain's ready", func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE attribute_indexes SET ready = true WHERE domain_id = $1`, victim.domain)
			return err
		}, "permission denied"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := s.InDomain(ctx, hostile.domain, func(ctx context.Context, tx pgx.Tx) error { return tc.fn(tx) })
			if tc.err == "" {
				require.NoError(t, err)
			} else {
				require.ErrorContains(t, err, tc.err)
			}
			require.Equal(t, want, recorded())
		})
	}
	// The Domain's own, in its scope, is recorded.
	require.NoError(t, s.InDomain(ctx, hostile.domain, func(ctx context.Context, tx pgx.Tx) error {
		return jobs.RecordIndexes(ctx, tx, hostile.domain, hostile.branch, builds)
	}))
	require.Equal(t, append(want, fmt.Sprintf("%d/%d/vat", hostile.domain, hostile.branch)), recorded())
}

// TestIndexNameInSQL: lb_index_name, which names the indexes lorebase_app
// records, computes the name IndexName does, for names that need quoting
// and names beyond ASCII.
func TestIndexNameInSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	for _, tc := range []struct {
		domain, branch  int32
		kind, attribute string
	}{
		{1, 1, "Supplier", "vat"},
		{42, 7, "Part", "weight_kg"},
		{2147483647, 2147483647, "O'Brien \"Kind\"", "a:b"},
		{3, 12, "Größe", "名前"},
	} {
		var got string
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT lb_index_name($1, $2, $3, $4)`, tc.domain, tc.branch, tc.kind, tc.attribute).Scan(&got))
		require.Equal(t, jobs.IndexName(tc.domain, tc.branch, tc.kind, tc.attribute), got, "%+v", tc)
	}
}

// TestOverlayIndexesRewriteEachRecordOnce: an overlay whose own Records of a
// Kind grow past the threshold records that Kind's indexes with the commit
// that queues their builds, so the first build rewrites each of its
// Records once, writing every indexed value, and the second rewrites none.
func TestOverlayIndexesRewriteEachRecordOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	f := newIvalsFixture(t, s, "overlay-once")
	f.putSchema(t, "country", "vat")
	f.runJobs(t)
	f.commit(t, 20)

	client, err := jobs.NewClient(s.Pool, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	pipe := commit.New(s, commit.Config{
		OverlayIndexThreshold: 5,
		IndexBuilds: func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, kind string, attributes []string) error {
			return jobs.EnqueueKindIndexes(ctx, client, tx, domainID, branchID, kind, attributes)
		},
		IndexName: jobs.IndexName,
	})
	noCopy := store.BranchJobs{Copy: func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil }}
	_, err = s.CreateBranch(ctx, f.domain, store.CreateBranchRequest{Name: "agent/1", From: "main"}, noCopy)
	require.NoError(t, err)
	var overlay int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'agent/1'`, f.domain).Scan(&overlay))

	var cs []commit.Change
	for i := 0; i < 12; i++ {
		v := fmt.Sprintf(`{"name": "Own %d", "country": "O%d"}`, i, i%4)
		if i%3 != 0 {
			v = fmt.Sprintf(`{"name": "Own %d", "country": "O%d", "vat": "OV%03d"}`, i, i%4, i)
		}
		cs = append(cs, commit.Change{Op: "put", Kind: "Supplier", Key: fmt.Sprintf("O-%03d", i), Values: json.RawMessage(v)})
	}
	_, err = pipe.Commit(ctx, f.domain, "agent/1", &commit.Request{Author: "t", Message: "past the threshold", Changes: cs}, "")
	require.NoError(t, err)

	var recorded []string
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT coalesce(array_agg(attribute::text ORDER BY attribute), '{}')
		FROM attribute_indexes WHERE domain_id = $1 AND branch_id = $2 AND NOT ready`, f.domain, overlay).Scan(&recorded))
	require.Equal(t, []string{"country", "vat"}, recorded, "the commit that queues the builds records them")

	versions := func() map[string]string {
		return pgtest.RowVersions(t, s.Pool, `SELECT key, xmin::text FROM mat_records
			WHERE domain_id = $1 AND branch_id = $2 AND kind = 'Supplier'`, f.domain, overlay)
	}
	args := func(attr string) jobs.IndexArgs {
		return jobs.IndexArgs{DomainID: f.domain, BranchID: overlay, KindName: "Supplier", Attribute: attr}
	}
	before := versions()
	require.NoError(t, jobs.BuildIndex(ctx, s, args("vat")))
	require.Equal(t, 12, pgtest.Rewritten(before, versions()), "the first build rewrites each own Supplier")
	before = versions()
	require.NoError(t, jobs.BuildIndex(ctx, s, args("country")))
	require.Zero(t, pgtest.Rewritten(before, versions()), "the second build finds nothing stale")
	f.branch = overlay
	f.requireIvals(t, "country", "vat")
}
