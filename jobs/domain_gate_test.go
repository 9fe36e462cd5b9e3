package jobs_test

import (
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

// TestJobsOfADeletedDomainEndCancelled: two Domains each queue a merge, a
// branch copy with its index build, and an embedding, all through River.
// One Domain is then deleted (marked deleting; its own deletion job not
// yet queued) and a River client works every job: each job of the deleted
// Domain ends cancelled after one attempt, never retried, and writes
// nothing (every row, index and sequence of the Domain is as before),
// while the other Domain's jobs complete. A sweep then requeues nothing of
// the deleted Domain but its deletion, which completes and leaves nothing.
func TestJobsOfADeletedDomainEndCancelled(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{MaxConns: 16})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	pipe := commit.New(s, commit.Config{})
	workers := jobs.NewWorkers(s)
	jobs.AddMergeWorker(workers, merge.New(s, pipe))
	client, err := jobs.NewClient(s.Pool, workers, nil, slog.New(slog.DiscardHandler))
	require.NoError(t, err)
	engine := merge.NewWith(s, pipe, merge.Config{JobThreshold: 1, Enqueue: jobs.QueueMerge(client)})
	noQueue := store.BranchJobs{Copy: func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil }}

	// seed queues the Domain's jobs and returns its id and the index the
	// copy's job would build.
	seed := func(name string) (int32, []string) {
		d, err := s.CreateDomain(ctx, name)
		require.NoError(t, err)
		_, err = pipe.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: []byte(domainSchema)})
		require.NoError(t, err)
		var changes []commit.Change
		for i := range 20 {
			changes = append(changes, commit.Change{Op: "put", Kind: "Doc", Key: fmt.Sprintf("D-%02d", i),
				Values: []byte(fmt.Sprintf(`{"title": %q, "group": "g%d"}`, docTitle(i), i%3))})
		}
		res, err := pipe.Commit(ctx, d.ID, "main", &commit.Request{Message: "docs", Author: "t", Changes: changes}, "")
		require.NoError(t, err)
		var main int32
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&main))
		_, err = client.Insert(ctx, jobs.EmbedArgs{DomainID: d.ID, BranchID: main, Seq: res.Seq}, nil)
		require.NoError(t, err)
		_, err = s.CreateBranch(ctx, d.ID, store.CreateBranchRequest{Name: "agent/a", From: "main", Mode: store.ModeOverlay}, noQueue)
		require.NoError(t, err)
		_, err = pipe.Commit(ctx, d.ID, "agent/a", &commit.Request{Message: "m", Author: "t", Changes: []commit.Change{
			{Op: "put", Kind: "Doc", Key: "D-98", Values: []byte(`{"title": "brass hinge"}`)},
			{Op: "put", Kind: "Doc", Key: "D-99", Values: []byte(`{"title": "copper hinge"}`)}}}, "")
		require.NoError(t, err)
		p, err := engine.Open(ctx, d.ID, &merge.OpenRequest{Title: "hinge", Source: "agent/a", Target: "main"}, "scout")
		require.NoError(t, err)
		mr, err := engine.MergeProposal(ctx, d.ID, p.ID, &merge.MergeRequest{}, "reviewer")
		require.NoError(t, err)
		require.True(t, mr.Queued)
		cp, err := s.CreateBranch(ctx, d.ID, store.CreateBranchRequest{Name: "copy", From: "main", Mode: store.ModeCopy}, jobs.Queue(client))
		require.NoError(t, err)
		return d.ID, []string{jobs.IndexName(d.ID, cp.ID, "Doc", "group")}
	}
	gone, goneIndexes := seed("gone")
	kept, _ := seed("kept")

	jobStates := func(domainID int32) map[string]string {
		rows, err := s.Pool.Query(ctx, `SELECT kind || ' ' || id, state::text || ' attempt ' || attempt
			|| coalesce(' ' || (errors[cardinality(errors)] ->> 'error'), '')
			FROM river_job WHERE args @> jsonb_build_object('domain_id', $1::int)`, domainID)
		require.NoError(t, err)
		out := map[string]string{}
		var k, v string
		_, err = pgx.ForEachRow(rows, []any{&k, &v}, func() error { out[k] = v; return nil })
		require.NoError(t, err)
		return out
	}
	kinds := func(domainID int32) []string {
		var out []string
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT array_agg(DISTINCT kind ORDER BY kind) FROM river_job
			WHERE args @> jsonb_build_object('domain_id', $1::int)`, domainID).Scan(&out))
		return out
	}
	want := []string{jobkind.Embed, jobkind.Merge, jobkind.Index, jobkind.Materialize}
	require.ElementsMatch(t, want, kinds(gone), "the fixture queues a job of each kind")
	require.ElementsMatch(t, want, kinds(kept))

	_, err = s.DeleteDomain(ctx, "gone", func(context.Context, pgx.Tx, int32) error { return nil })
	require.NoError(t, err)
	before := leftovers(t, s, gone, goneIndexes)

	require.NoError(t, client.Start(ctx))
	t.Cleanup(func() { require.NoError(t, client.Stop(context.WithoutCancel(ctx))) })
	// Every job is finalized: none is left to run or retry.
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE finalized_at IS NULL`).Scan(&n))
		return n == 0
	}, 2*time.Minute, 50*time.Millisecond, "jobs left: %v %v", jobStates(gone), jobStates(kept))

	goneJobs := jobStates(gone)
	require.Len(t, goneJobs, len(want))
	for job, state := range goneJobs {
		require.Regexp(t, `^cancelled attempt 1 JobCancelError: domain \d+: the job's Domain is deleted$`, state, job)
	}
	require.Equal(t, before, leftovers(t, s, gone, goneIndexes), "the cancelled jobs wrote nothing")
	// The other Domain's jobs complete. Two of them may run at once, and a
	// copy's ANALYZE can deadlock with the index build on the same table:
	// River retries it, so a completion at a later attempt counts too.
	for job, state := range jobStates(kept) {
		require.Regexp(t, `^completed attempt \d+`, state, job)
	}
	var merged int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND key = 'D-99'
		AND branch_id = (SELECT id FROM refs WHERE domain_id = $1 AND name = 'main')`, kept).Scan(&merged))
	require.Equal(t, 1, merged, "the other Domain's merge ran")

	// The sweep finds the deleting Domain's copy branch with no live job
	// but leaves it (the deletion removes it), and queues the deletion.
	sw := &jobs.Sweeper{Store: s, Client: client}
	n, err := sw.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, n)
	require.Eventually(t, func() bool {
		var n int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM river_job WHERE finalized_at IS NULL`).Scan(&n))
		return n == 0
	}, 2*time.Minute, 50*time.Millisecond)
	require.Empty(t, leftovers(t, s, gone, goneIndexes))
	var deleted string
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT state::text FROM river_job WHERE kind = $1`, jobkind.DomainDelete).Scan(&deleted))
	require.Equal(t, "completed", deleted)
}
