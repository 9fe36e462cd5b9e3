package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/store"
)

// Sweeper heals what a lost job leaves behind: a branch left copying or
// deleting, or a Domain left deleting, with no live job (its job discarded
// after its attempts, or lost) gets its job again, and idempotency keys past their TTL go. It
// runs as the owner, at start and every interval.
type Sweeper struct {
	Store  *store.Store
	Client *river.Client[pgx.Tx]
	// IdempotencyTTL is write.idempotency_ttl: older keys are deleted.
	IdempotencyTTL time.Duration
	Log            *slog.Logger
}

// stuckSQL lists the refs copying or deleting that no unfinished job of
// their kind serves. A Domain being deleted is left out: its jobs end
// cancelled (domainGate) and its deletion removes its refs.
const stuckSQL = `SELECT r.domain_id, r.id, r.state FROM refs r
 WHERE r.state IN ('copying', 'deleting')
   AND EXISTS (SELECT 1 FROM domains d WHERE d.id = r.domain_id AND d.state = 'ready')
   AND NOT EXISTS (SELECT 1 FROM river_job j
        WHERE j.kind = CASE r.state WHEN 'copying' THEN '` + jobkind.Materialize + `' ELSE '` + jobkind.BranchDelete + `' END
          AND j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled')
          AND j.args @> jsonb_build_object('domain_id', r.domain_id, 'branch_id', r.id))
 ORDER BY r.domain_id, r.id LIMIT 1000`

// stuckDomainsSQL lists the Domains deleting that no unfinished job serves.
const stuckDomainsSQL = `SELECT d.id FROM domains d
 WHERE d.state = 'deleting'
   AND NOT EXISTS (SELECT 1 FROM river_job j
        WHERE j.kind = '` + jobkind.DomainDelete + `'
          AND j.state IN ('available', 'pending', 'running', 'retryable', 'scheduled')
          AND j.args @> jsonb_build_object('domain_id', d.id))
 ORDER BY d.id LIMIT 1000`

// Sweep runs once: it queues the job of every stuck branch and Domain and
// deletes expired idempotency keys (in bounded batches). It returns how
// many branches and Domains it queued a job for.
func (w *Sweeper) Sweep(ctx context.Context) (int, error) {
	rows, err := w.Store.Pool.Query(ctx, stuckSQL)
	if err != nil {
		return 0, fmt.Errorf("find stuck branches: %w", err)
	}
	type stuck struct {
		domain, branch int32
		state          string
	}
	list, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (stuck, error) {
		var s stuck
		err := r.Scan(&s.domain, &s.branch, &s.state)
		return s, err
	})
	if err != nil {
		return 0, fmt.Errorf("find stuck branches: %w", err)
	}
	n := 0
	for _, s := range list {
		var args river.JobArgs = MaterializeArgs{DomainID: s.domain, BranchID: s.branch}
		if s.state == store.StateDeleting {
			args = BranchDeleteArgs{DomainID: s.domain, BranchID: s.branch}
		}
		if _, err := w.Client.Insert(ctx, args, nil); err != nil {
			return n, fmt.Errorf("requeue %s of branch %d of domain %d: %w", args.Kind(), s.branch, s.domain, err)
		}
		n++
		if w.Log != nil {
			w.Log.Warn("branch had no live job; queued it again", "domain_id", s.domain, "branch_id", s.branch, "state", s.state, "job", args.Kind())
		}
	}
	rows, err = w.Store.Pool.Query(ctx, stuckDomainsSQL)
	if err != nil {
		return n, fmt.Errorf("find stuck domains: %w", err)
	}
	domains, err := pgx.CollectRows(rows, pgx.RowTo[int32])
	if err != nil {
		return n, fmt.Errorf("find stuck domains: %w", err)
	}
	for _, d := range domains {
		if _, err := w.Client.Insert(ctx, DomainDeleteArgs{DomainID: d}, nil); err != nil {
			return n, fmt.Errorf("requeue deletion of domain %d: %w", d, err)
		}
		n++
		if w.Log != nil {
			w.Log.Warn("domain deletion had no live job; queued it again", "domain_id", d)
		}
	}
	if w.IdempotencyTTL > 0 {
		for {
			tag, err := w.Store.Pool.Exec(ctx, `DELETE FROM idempotency_keys WHERE ctid = ANY (ARRAY(
				SELECT ctid FROM idempotency_keys WHERE created_at < now() - make_interval(secs => $1) LIMIT 5000))`,
				w.IdempotencyTTL.Seconds())
			if err != nil {
				return n, fmt.Errorf("delete expired idempotency keys: %w", err)
			}
			if tag.RowsAffected() < 5000 {
				break
			}
		}
	}
	return n, nil
}

// Run sweeps at once and then every interval until ctx ends. Errors are
// logged; the next sweep tries again.
func (w *Sweeper) Run(ctx context.Context, interval time.Duration) {
	every(ctx, interval, func() {
		if _, err := w.Sweep(ctx); err != nil && ctx.Err() == nil && w.Log != nil {
			w.Log.Warn("sweep failed; retrying at the next", "err", err)
		}
	})
}

// every runs pass at once and then every interval until ctx ends (a pass
// still running when ctx ends finishes first).
func every(ctx context.Context, interval time.Duration, pass func()) {
	t := time.NewTicker(interval)
	defer t.Stop()
	for {
		pass()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
