package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
	"github.com/lorebase/lorebase/store/schema"
)

// shutdownJobs bounds how long running jobs get to finish on shutdown.
const shutdownJobs = 30 * time.Second

// parts are Keeper's working pieces over one store: the River client that
// runs the jobs, the commit pipeline (which queues jobs in its own
// transactions) and the reads.
type parts struct {
	river    *river.Client[pgx.Tx]
	pipeline *commit.Pipeline
	reader   *reads.Reader
}

// assemble builds the River client that runs the jobs (index builds,
// branch copies and deletions, batches sized by jobs.batch_target and
// jobs.batch_contended) and the pipeline whose schema changes queue the
// per-Attribute index builds in the same transaction. Branch creation and
// deletion queue their jobs through Keeper's own insert-only client, in the
// request's transaction.
func assemble(cfg config.Config, s *store.Store) (*parts, error) {
	workers := jobs.NewWorkersWith(s, jobs.ConfigFrom(cfg))
	client, err := jobs.NewClient(s.Pool, workers, nil)
	if err != nil {
		return nil, fmt.Errorf("create job client: %w", err)
	}
	cc := commit.ConfigFrom(cfg)
	cc.OnSchemaChange = func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, old, new *schema.Schema) error {
		return jobs.EnqueueIndexBuilds(ctx, client, tx, domainID, branchID, old, new)
	}
	cc.IndexBuilds = func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, kind string, attributes []string) error {
		return jobs.EnqueueKindIndexes(ctx, client, tx, domainID, branchID, kind, attributes)
	}
	cc.IndexName = jobs.IndexName
	return &parts{river: client, pipeline: commit.New(s, cc), reader: reads.New(s, reads.ConfigFrom(cfg))}, nil
}

// serveWith starts the job client, serves HTTP until ctx ends, then stops
// the jobs (a job cut short is retried by the next Keeper).
func (p *parts) serveWith(ctx context.Context, log *slog.Logger, serve func(context.Context) error) error {
	if err := p.river.Start(ctx); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	err := serve(ctx)
	stopCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), shutdownJobs)
	defer cancel()
	if serr := p.river.Stop(stopCtx); serr != nil {
		log.Warn("jobs did not stop in time; they will be retried", "err", serr)
	}
	return err
}
