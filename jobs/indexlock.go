package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The advisory locks of the index jobs, both session locks taken by
// sessionLock.
//
// The DDL lock runs one CREATE or DROP INDEX CONCURRENTLY at a time in the
// database, whatever its Domain: each waits for every transaction with an
// older snapshot to end, another such statement's among them, so two at
// once deadlock (the per-Attribute indexes are partial expression
// indexes, which PostgreSQL cannot let skip that wait). It is held for the
// statement alone, so the rest of a build (its waits and backfills) runs
// beside other Domains' builds.
//
// The name lock runs one build or drop of one index name at a time, for
// the whole job: what a job checks of its index (valid, ready, recorded)
// stays true until it ends.
const (
	lockIndexDDL   = `SELECT pg_try_advisory_lock(hashtext('lorebase.store.index'))`
	unlockIndexDDL = `SELECT pg_advisory_unlock(hashtext('lorebase.store.index'))`

	lockIndexName   = `SELECT pg_try_advisory_lock(hashtext('lorebase.store.index.name'), hashtext($1))`
	unlockIndexName = `SELECT pg_advisory_unlock(hashtext('lorebase.store.index.name'), hashtext($1))`
)

// lockRetry is how often sessionLock tries its lock again.
const lockRetry = 100 * time.Millisecond

// sessionLock takes a session advisory lock (lock, a try-lock statement
// returning whether it was granted) on conn, trying every lockRetry until
// ctx ends, so that no statement waits for it holding a snapshot (a CREATE
// INDEX CONCURRENTLY in progress waits for such a statement, which would
// wait for it). release runs unlock with the same arguments; the lock
// goes with the session anyway.
func sessionLock(ctx context.Context, conn *pgxpool.Conn, lock, unlock string, args ...any) (release func(), err error) {
	for {
		var ok bool
		if err := conn.QueryRow(ctx, lock, args...).Scan(&ok); err != nil {
			return nil, fmt.Errorf("lock: %w", err)
		}
		if ok {
			return func() {
				conn.Exec(context.WithoutCancel(ctx), unlock, args...) //nolint:errcheck // released with the session anyway
			}, nil
		}
		select {
		case <-ctx.Done():
			return nil, fmt.Errorf("lock: %w", ctx.Err())
		case <-time.After(lockRetry):
		}
	}
}

// indexDDL runs one CREATE or DROP INDEX CONCURRENTLY statement on conn
// (outside any transaction) under the DDL lock.
func indexDDL(ctx context.Context, conn *pgxpool.Conn, stmt string) error {
	release, err := sessionLock(ctx, conn, lockIndexDDL, unlockIndexDDL)
	if err != nil {
		return err
	}
	defer release()
	_, err = conn.Exec(ctx, stmt)
	return err
}

// dropIndex drops index name, if it exists, concurrently under the DDL
// lock (indexDDL).
func dropIndex(ctx context.Context, conn *pgxpool.Conn, name string) error {
	return indexDDL(ctx, conn, `DROP INDEX CONCURRENTLY IF EXISTS `+pgx.Identifier{name}.Sanitize())
}
