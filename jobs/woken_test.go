package jobs_test

import (
	"context"
	"errors"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/jobs"
)

// TestAWokenCommitShowsUntilItRuns: the premise of a copy's batch waiting
// for the commits it woke. A session waiting for the ref lock a batch
// holds is granted the batch's transaction id lock when the batch ends,
// and keeps it until it runs again: wokenSQL sees it from then until it
// has run. The waiting backend is stopped (SIGSTOP) so that "not yet
// run" lasts; where the test cannot signal the server's processes (a
// server of another user), it is skipped.
func TestAWokenCommitShowsUntilItRuns(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 5)
	holder, err := f.s.Pool.Begin(ctx)
	require.NoError(t, err)
	defer holder.Rollback(ctx) //nolint:errcheck // committed below
	_, err = holder.Exec(ctx, `SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 FOR KEY SHARE`, f.domain, f.main)
	require.NoError(t, err)

	waiter, err := f.s.Pool.Acquire(ctx)
	require.NoError(t, err)
	defer waiter.Release()
	pid := int32(waiter.Conn().PgConn().PID())
	locked := make(chan error, 1)
	go func() {
		locked <- pgx.BeginFunc(ctx, waiter, func(tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, f.domain, f.main)
			return err
		})
	}()
	woken := func() bool {
		var w bool
		require.NoError(t, f.s.Pool.QueryRow(ctx, jobs.WokenSQL, []int32{pid}).Scan(&w))
		return w
	}
	// Waiting for the holder: not woken.
	holderPID := int32(holder.Conn().PgConn().PID())
	require.Eventually(t, func() bool {
		var n int
		err := f.s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_stat_activity
			WHERE pid = $1 AND $2::int = ANY (pg_blocking_pids(pid))`, pid, holderPID).Scan(&n)
		return err == nil && n == 1
	}, 10*time.Second, 5*time.Millisecond)
	require.False(t, woken(), "a commit still waiting counted as woken")

	if err := syscall.Kill(int(pid), syscall.SIGSTOP); err != nil {
		if errors.Is(err, syscall.EPERM) {
			t.Skipf("cannot stop the server's backend %d: %v", pid, err)
		}
		require.NoError(t, err)
	}
	stopped := true
	defer func() {
		if stopped {
			_ = syscall.Kill(int(pid), syscall.SIGCONT)
		}
	}()
	require.NoError(t, holder.Commit(ctx))
	// Granted, not run: woken, and it stays so while the backend is stopped.
	require.True(t, woken(), "a commit granted its lock but not yet run was not seen")
	time.Sleep(50 * time.Millisecond)
	require.True(t, woken(), "a stopped commit stopped being seen")

	require.NoError(t, syscall.Kill(int(pid), syscall.SIGCONT))
	stopped = false
	require.NoError(t, <-locked)
	require.False(t, woken(), "a commit that ran is still seen as woken")
}
