package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/rivertype"

	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/store"
)

// ErrDomainDeleted is the reason a job of a deleted Domain (or one being
// deleted) is cancelled: it can never succeed.
var ErrDomainDeleted = errors.New("the job's Domain is deleted")

// domainGate is River worker middleware that ends the jobs of a Domain
// that is deleted or being deleted: before a job whose arguments name a
// domain_id runs, it reads the Domain's state, and a Domain gone or
// deleting cancels the job (river.JobCancel, which River documents as
// never running the job again, whatever attempts are left). A job that
// fails while its Domain is being deleted (the deletion began while it
// ran) is cancelled the same way instead of retried. store.domain_delete
// jobs, which do the deleting, pass through. Whatever a job wrote to a
// Domain before the deletion reached it, the deletion removes.
type domainGate struct {
	river.MiddlewareDefaults
	pool *pgxpool.Pool
	log  *slog.Logger
}

var _ rivertype.WorkerMiddleware = (*domainGate)(nil)

// Work runs the job unless its Domain is deleted or being deleted.
func (g *domainGate) Work(ctx context.Context, job *rivertype.JobRow, doInner func(context.Context) error) error {
	if job.Kind == jobkind.DomainDelete {
		return doInner(ctx)
	}
	var a struct {
		DomainID *int32 `json:"domain_id"`
	}
	if err := json.Unmarshal(job.EncodedArgs, &a); err != nil || a.DomainID == nil {
		return doInner(ctx)
	}
	live, err := g.live(ctx, *a.DomainID)
	if err != nil {
		return fmt.Errorf("%s job %d: %w", job.Kind, job.ID, err)
	}
	if !live {
		return g.cancel(ctx, job, *a.DomainID, nil)
	}
	err = doInner(ctx)
	if err == nil || riverControl(err) {
		return err
	}
	if live, lerr := g.live(context.WithoutCancel(ctx), *a.DomainID); lerr == nil && !live {
		return g.cancel(ctx, job, *a.DomainID, err)
	}
	return err
}

// live reports whether the Domain exists and is not being deleted.
func (g *domainGate) live(ctx context.Context, domainID int32) (bool, error) {
	var state string
	err := g.pool.QueryRow(ctx, `SELECT state FROM domains WHERE id = $1`, domainID).Scan(&state)
	if errors.Is(err, pgx.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fmt.Errorf("read state of domain %d: %w", domainID, err)
	}
	return state == store.StateDomainReady, nil
}

// cancel ends the job for good, logging why (cause: the error the job
// failed with, nil when it did not run).
func (g *domainGate) cancel(ctx context.Context, job *rivertype.JobRow, domainID int32, cause error) error {
	attrs := []any{"job_id", job.ID, "kind", job.Kind, "domain_id", domainID}
	if cause != nil {
		attrs = append(attrs, "err", cause)
	}
	g.log.InfoContext(ctx, "job cancelled: its Domain is deleted or being deleted", attrs...)
	if cause != nil {
		return river.JobCancel(fmt.Errorf("domain %d: %w (the run failed with: %w)", domainID, ErrDomainDeleted, cause))
	}
	return river.JobCancel(fmt.Errorf("domain %d: %w", domainID, ErrDomainDeleted))
}

// riverControl reports whether err asks River to snooze or cancel the job.
func riverControl(err error) bool {
	var snooze *rivertype.JobSnoozeError
	var cancel *rivertype.JobCancelError
	return errors.As(err, &snooze) || errors.As(err, &cancel)
}
