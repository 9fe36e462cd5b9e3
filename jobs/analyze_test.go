package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

// TestAnalyzeJobPutsANewDomainInTheStatistics: a Domain created in the
// partition of a larger one, whose 50,000 Records and Links filled it
// before the statistics were taken (autovacuum off, as a partition whose
// share of changed rows stays under autovacuum's threshold), commits 21,499
// Parts. Its commits queue store.analyze once in the period: a commit of
// 999 Records and Links none, one of 1,000 Records a job, a second of
// 40,000 Records and Links no other. Until the job runs, an overlay's read of 5 of its Records
// (lb_state_records as lorebase_app) scans main's range of another index
// for each key; after it, every node that ran on main is a lookup by key.
func TestAnalyzeJobPutsANewDomainInTheStatistics(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	big, err := s.CreateDomain(ctx, "big")
	require.NoError(t, err)
	d := pgtest.DomainBeside(t, s.Pool, big.ID, func(name string) (*store.Domain, int32) {
		n, err := s.CreateDomain(ctx, name)
		require.NoError(t, err)
		return n, n.ID
	})
	names := pgtest.AutovacuumOff(t, s.Pool, "mat_records", "mat_links", "mat_history", "mat_link_history", "mat_search_words", "mat_lexicon")
	var bigMain int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, big.ID).Scan(&bigMain))
	_, err = s.Pool.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq, versions)
		SELECT $1, $2, 'P-' || i, 'Part', 'part ' || i, jsonb_build_object('name', 'part ' || i), to_tsvector('simple', 'part'),
		       jsonb_build_object('name', 1), 1, 1, 1 FROM generate_series(1, 50000) i`, big.ID, bigMain)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq)
		SELECT $1, $2, 'P-' || i, 'stocked_at', 'W-' || (i % 97), 'l', 1 FROM generate_series(1, 50000) i`, big.ID, bigMain)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)

	client, err := jobs.NewClient(s.Pool, jobs.NewWorkers(s), nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	pipe := commit.New(s, commit.Config{MaxChanges: 50000, AnalyzeJobs: jobs.QueueAnalyze(func() *river.Client[pgx.Tx] { return client })})
	_, err = pipe.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Author: "t", Message: "schema", Document: json.RawMessage(`{"kinds": [
		{"name": "Part", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]},
		{"name": "Warehouse", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]}],
		"relations": [{"name": "stocked_at", "from": "Part", "to": "Warehouse", "cardinality": "one"}]}`)})
	require.NoError(t, err)
	jobsQueued := func() int { return analyzeJobs(t, s, d.ID) }
	// parts3 puts n Parts from number from, each with its Link when linked.
	parts3 := func(from, n int, linked bool) []commit.Change {
		var cs []commit.Change
		for i := from; i < from+n; i++ {
			cs = append(cs, commit.Change{Op: "put", Kind: "Part", Key: fmt.Sprintf("P-%d", i), Values: json.RawMessage(fmt.Sprintf(`{"name": "Part %d"}`, i))})
			if linked {
				cs = append(cs, commit.Change{Op: "link", Relation: "stocked_at", From: fmt.Sprintf("P-%d", i), To: "W-1"})
			}
		}
		return cs
	}
	commitAll := func(cs []commit.Change) {
		_, err := pipe.Commit(ctx, d.ID, "main", &commit.Request{Author: "t", Message: "m", Changes: cs}, "")
		require.NoError(t, err)
	}
	commitAll(append(parts3(0, 499, true), commit.Change{Op: "put", Kind: "Warehouse", Key: "W-1", Values: json.RawMessage(`{"name": "North"}`)}))
	require.Zero(t, jobsQueued(), "a commit of 999 Records and Links")
	// River's unique period is a window of the clock (AnalyzePeriod
	// from each multiple of it), not the period after the first job: the
	// two large commits must fall in one window.
	waitOutWindowEnd(t, jobs.AnalyzePeriod, time.Minute)
	commitAll(parts3(499, 1000, false))
	require.Equal(t, 1, jobsQueued(), "a commit of 1,000 Records")
	commitAll(parts3(1499, 20000, true))
	require.Equal(t, 1, jobsQueued(), "a second large commit in the period")

	_, err = s.CreateBranch(ctx, d.ID, store.CreateBranchRequest{Name: "agent", From: "main", Mode: store.ModeOverlay}, store.BranchJobs{})
	require.NoError(t, err)
	var overlay int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'agent'`, d.ID).Scan(&overlay))
	conn, plans := pgtest.AutoExplain(t, s.Requests, true)
	_, err = conn.Exec(ctx, `SET auto_explain.log_format = json`)
	require.NoError(t, err)
	var mainID int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&mainID))
	onMain := fmt.Sprintf("(branch_id = %d)", mainID)
	// problems reads 5 of the Domain's Records on the overlay and returns
	// what in the plans that ran on main, the overlay's base, was not a
	// lookup by key. (The overlay's own rows, none here, may be read by a
	// scan of its range: the statistics say it is empty, and it is.)
	problems := func() []string {
		var got []string
		require.NoError(t, pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if err := store.Scope(ctx, tx, d.ID); err != nil {
				return err
			}
			plans()
			rows, err := tx.Query(ctx, `SELECT key FROM lb_state_records($1, $2)`, overlay, []string{"P-5", "P-50", "P-500", "P-5000", "P-15000"})
			if err != nil {
				return err
			}
			keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.Len(t, keys, 5)
			return err
		}))
		for _, p := range plans() {
			e, err := pgtest.ParseExplained(p)
			require.NoError(t, err)
			for _, p := range pgtest.KeyProbeProblems(e.Plan) {
				if strings.Contains(p, onMain) {
					got = append(got, p)
				}
			}
		}
		return got
	}
	require.NotEmpty(t, problems(), "before the job: the statistics do not know the Domain")

	done, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	require.NoError(t, client.Start(ctx))
	defer func() { require.NoError(t, client.Stop(context.WithoutCancel(ctx))) }()
	select {
	case ev := <-done:
		require.Equal(t, river.EventKindJobCompleted, ev.Kind, "%+v", ev.Job.Errors)
		require.Equal(t, jobkind.Analyze, ev.Job.Kind)
	case <-time.After(60 * time.Second):
		t.Fatal("the analyze job did not finish")
	}
	require.Empty(t, problems(), "after the job")
	var analyzed int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_user_tables WHERE relname = ANY ($1) AND last_analyze > now() - interval '1 minute'`,
		names).Scan(&analyzed))
	require.GreaterOrEqual(t, analyzed, 5, "the Domain's partitions of the five tables analyzed")
}

// TestAnalyzeQueuedEveryRevisionsOfSmallCommits: a Domain that grows by
// small commits queues store.analyze with the commit whose Revision number
// is a multiple of AnalyzeEveryRevisions (4 here) when that commit creates a
// Record, and not with one that only changes one.
func TestAnalyzeQueuedEveryRevisionsOfSmallCommits(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	d, err := s.CreateDomain(ctx, "small")
	require.NoError(t, err)
	client, err := jobs.NewClient(s.Pool, nil, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	pipe := commit.New(s, commit.Config{AnalyzeEveryRevisions: 4, AnalyzeJobs: jobs.QueueAnalyze(func() *river.Client[pgx.Tx] { return client })})
	res, err := pipe.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Author: "t", Message: "schema", Document: json.RawMessage(`{"kinds": [
		{"name": "Part", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]}]}`)})
	require.NoError(t, err)
	number := res.Number
	queued := func() int { return analyzeJobs(t, s, d.ID) }
	for i := 0; number < 8; i++ {
		c := commit.Change{Op: "put", Kind: "Part", Key: fmt.Sprintf("P-%d", i), Values: json.RawMessage(fmt.Sprintf(`{"name": "Part %d"}`, i))}
		if number+1 == 4 {
			c = commit.Change{Op: "patch", Key: "P-0", Values: json.RawMessage(`{"name": "Part zero"}`)}
		}
		res, err := pipe.Commit(ctx, d.ID, "main", &commit.Request{Author: "t", Message: "m", Changes: []commit.Change{c}}, "")
		require.NoError(t, err)
		require.Equal(t, number+1, res.Number)
		number = res.Number
		want := 0
		if number >= 8 {
			want = 1
		}
		require.Equal(t, want, queued(), "after Revision %d (%s)", number, c.Op)
	}
}

// analyzeJobs counts the store.analyze jobs queued for a Domain.
func analyzeJobs(t *testing.T, s *store.Store, domainID int32) int {
	t.Helper()
	var n int
	require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT count(*) FROM river_job WHERE kind = $1 AND args->>'domain_id' = $2`,
		jobkind.Analyze, fmt.Sprint(domainID)).Scan(&n))
	return n
}

// waitOutWindowEnd sleeps past the end of the clock's current window of
// length period (windows start at multiples of it, as River's unique
// periods do) when less than margin of it is left.
func waitOutWindowEnd(t *testing.T, period, margin time.Duration) {
	t.Helper()
	now := time.Now()
	if left := now.Truncate(period).Add(period).Sub(now); left < margin {
		t.Logf("waiting %s for the next window of %s", left.Round(time.Second), period)
		time.Sleep(left + time.Second)
	}
}
