package jobs_test

import (
	"context"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

// TestSweepRequeuesStuckBranches: a copy whose job was never queued and a
// deletion whose job was discarded after its attempts are stuck; the sweep
// queues their jobs again, the workers finish them (the copy holds every
// row exactly once; the deleted branch is gone), and a second sweep finds
// nothing. A Domain marked deleting without a job is swept the same way.
// Expired idempotency keys go too.
func TestSweepRequeuesStuckBranches(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 120)
	cp := f.createBranch(t, "copy", store.ModeCopy) // noJobs: no job queued
	_, err := f.s.CreateBranch(ctx, f.domain, store.CreateBranchRequest{Name: "gone", From: "main"}, noJobs)
	require.NoError(t, err)
	var gone int32
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'gone'`, f.domain).Scan(&gone))
	require.NoError(t, f.s.DeleteBranch(ctx, f.domain, "gone", noJobs))
	// The deletion's job ran out of attempts.
	f.exec(t, `INSERT INTO river_job (kind, args, state, attempt, max_attempts, finalized_at)
		VALUES ($1, jsonb_build_object('domain_id', $2::int, 'branch_id', $3::int), 'discarded', 25, 25, now())`,
		jobkind.BranchDelete, f.domain, gone)
	f.exec(t, `INSERT INTO idempotency_keys (domain_id, scope, key, branch_id, request_hash, status, response, created_at)
		VALUES ($1, 'a', 'old', $2, '\x00', 201, '{}', now() - interval '2 days'),
		       ($1, 'a', 'new', $2, '\x00', 201, '{}', now())`, f.domain, f.main)

	doomed, err := f.s.CreateDomain(ctx, "doomed")
	require.NoError(t, err)
	_, err = f.s.DeleteDomain(ctx, "doomed", func(context.Context, pgx.Tx, int32) error { return nil })
	require.NoError(t, err)

	client, err := jobs.NewClient(f.s.Pool, jobs.NewWorkers(f.s), nil, nil)
	require.NoError(t, err)
	sw := &jobs.Sweeper{Store: f.s, Client: client, IdempotencyTTL: 24 * time.Hour}
	n, err := sw.Sweep(ctx)
	require.NoError(t, err)
	require.Equal(t, 3, n)
	n, err = sw.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n, "queued jobs are live: nothing to sweep")
	require.Equal(t, []string{"new"}, keysOf(t, f))

	done, cancel := client.Subscribe(river.EventKindJobCompleted, river.EventKindJobFailed)
	defer cancel()
	require.NoError(t, client.Start(ctx))
	defer func() { require.NoError(t, client.Stop(context.WithoutCancel(ctx))) }()
	for range 3 {
		select {
		case ev := <-done:
			require.Equal(t, river.EventKindJobCompleted, ev.Kind, "%+v", ev.Job.Errors)
		case <-time.After(60 * time.Second):
			t.Fatal("swept jobs did not finish")
		}
	}
	f.requireCopied(t, cp)
	state, _ := f.progress(t, cp)
	require.Equal(t, store.StateReady, state)
	require.Zero(t, f.count(t, `SELECT count(*) FROM refs WHERE domain_id = $1 AND id = $2`, f.domain, gone))
	require.Zero(t, f.count(t, `SELECT count(*) FROM domains WHERE id = $1`, doomed.ID))
	n, err = sw.Sweep(ctx)
	require.NoError(t, err)
	require.Zero(t, n)
}

func keysOf(t *testing.T, f *fixture) []string {
	t.Helper()
	rows, err := f.s.Pool.Query(context.Background(), `SELECT key FROM idempotency_keys WHERE domain_id = $1 ORDER BY key`, f.domain)
	require.NoError(t, err)
	out, err := pgx.AppendRows([]string(nil), rows, pgx.RowTo[string])
	require.NoError(t, err)
	return out
}
