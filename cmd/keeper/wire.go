package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/embed"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// parts are Keeper's working pieces over one store: the one River client of
// the process (it runs the jobs, and the pipeline and the branch routes
// queue jobs through it in their own transactions), the commit pipeline
// and the reads.
type parts struct {
	river    *river.Client[pgx.Tx]
	pipeline *commit.Pipeline
	reader   *reads.Reader
	merges   *merge.Engine
	log      *slog.Logger
	stop     time.Duration // jobs.stop_timeout
	sweeper  *jobs.Sweeper
	sweepInt time.Duration
}

// assemble builds the River client that runs the jobs (index builds,
// branch copies and deletions, batches sized by jobs.batch_target and
// jobs.batch_contended, and the merge.proposal job), logging through log,
// rescuing jobs stuck past jobs.rescue_stuck_after; the pipeline, whose
// schema changes queue the per-Attribute index builds in the same
// transaction; the merge engine, which queues merges past
// merge.job_threshold through the same client; and the sweeper of stuck
// branches and expired idempotency keys.
func assemble(cfg config.Config, s *store.Store, log *slog.Logger) (*parts, error) {
	embedders, err := embed.FromConfig(cfg.Embeddings)
	if err != nil {
		return nil, fmt.Errorf("configure embeddings: %w", err)
	}
	jc := jobs.ConfigFrom(cfg)
	jc.Embedders = embedders
	workers := jobs.NewWorkersWith(s, jc)
	// The hooks below call client once it exists: it is created after the
	// merge worker, which needs the pipeline, is registered.
	var client *river.Client[pgx.Tx]
	cc := commit.ConfigFrom(cfg)
	cc.OnSchemaChange = func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, old, new *schema.Schema) error {
		if err := jobs.EnqueueIndexBuilds(ctx, client, tx, domainID, branchID, old, new); err != nil {
			return err
		}
		return jobs.EnqueueReembeds(ctx, client, tx, domainID, branchID, old, new)
	}
	cc.KnownModel = embedders.Known
	cc.EmbedJobs = jobs.QueueEmbed(func() *river.Client[pgx.Tx] { return client })
	cc.IndexBuilds = func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, kind string, attributes []string) error {
		return jobs.EnqueueKindIndexes(ctx, client, tx, domainID, branchID, kind, attributes)
	}
	cc.IndexName = jobs.IndexName
	pipeline := commit.New(s, cc)
	jobs.AddMergeWorker(workers, merge.New(s, pipeline))
	if client, err = jobs.NewClientWith(s.Pool, workers, nil, jc, log); err != nil {
		return nil, fmt.Errorf("create job client: %w", err)
	}
	merges := merge.NewWith(s, pipeline, merge.Config{JobThreshold: cfg.Merge.JobThreshold, Enqueue: jobs.QueueMerge(client)})
	return &parts{river: client, pipeline: pipeline, reader: reads.New(s, readsConfig(cfg, embedders)), merges: merges,
		log: log, stop: cfg.Jobs.StopTimeout,
		sweeper:  &jobs.Sweeper{Store: s, Client: client, IdempotencyTTL: cfg.Write.IdempotencyTTL, Log: log},
		sweepInt: cfg.Jobs.SweepInterval}, nil
}

// server is the HTTP server over the parts, queueing branch jobs and big
// merges through the same River client.
func (p *parts) server(cfg config.Config, s *store.Store) *keeper.Server {
	return keeper.New(cfg, keeper.Parts{Store: s, Pipeline: p.pipeline, Reader: p.reader, Merges: p.merges,
		Jobs: jobs.Queue(p.river), Log: p.log})
}

// serveWith starts the job client, serves HTTP until ctx ends, then stops
// the jobs. The client runs on a context the signal does not cancel, so
// the HTTP server drains first; then Stop lets running jobs finish within
// jobs.stop_timeout, after which they are cancelled (a job cut short rolls
// back its batch and is retried by the next Keeper).
func (p *parts) serveWith(ctx context.Context, serve func(context.Context) error) error {
	jobsCtx := context.WithoutCancel(ctx)
	if err := p.river.Start(jobsCtx); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	// The sweep re-queues the job of any branch left copying or deleting
	// without one (at start, then every jobs.sweep_interval).
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		p.sweeper.Run(sweepCtx, p.sweepInt)
	}()
	err := serve(ctx)
	stopSweep()
	<-swept
	stopCtx, cancel := context.WithTimeout(jobsCtx, p.stop)
	defer cancel()
	if serr := p.river.Stop(stopCtx); serr != nil {
		p.log.Warn("jobs did not finish within jobs.stop_timeout; cancelling them (they will be retried)", "err", serr)
		hardCtx, hardCancel := context.WithTimeout(jobsCtx, 5*time.Second)
		defer hardCancel()
		if herr := p.river.StopAndCancel(hardCtx); herr != nil {
			p.log.Error("jobs did not stop after cancellation", "err", herr)
		}
	}
	return err
}

// readsConfig is the reads' configuration with the embedders of query
// texts.
func readsConfig(cfg config.Config, e *embed.Set) reads.Config {
	rc := reads.ConfigFrom(cfg)
	rc.Embedders = e
	return rc
}
