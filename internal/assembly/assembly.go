package assembly

import (
	"context"
	"fmt"
	"log/slog"

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

// Parts are Keeper's working pieces over one store. River is built, not
// started: the caller starts and stops it.
type Parts struct {
	// River runs every job; the pipeline, the branch routes and the merge
	// engine queue jobs through it in their own transactions.
	River    *river.Client[pgx.Tx]
	Pipeline *commit.Pipeline
	Reader   *reads.Reader
	Merges   *merge.Engine
	// Sweeper re-queues the jobs of stuck branches and removes expired
	// idempotency keys; the caller runs it.
	Sweeper *jobs.Sweeper
	// Warmer keeps the write path's primary keys in shared buffers.
	Warmer *jobs.Warmer
	store  *store.Store
	log    *slog.Logger
}

// Options adjust what Build makes.
type Options struct {
	// Log receives River's and the sweeper's log (nil: slog's default).
	Log *slog.Logger
	// TuneRiver, when not nil, adjusts River's configuration (tests fetch
	// jobs more often).
	TuneRiver func(*river.Config)
}

// Build makes the parts: the River client with every worker (index builds
// and drops, branch copies and deletions in batches sized by
// jobs.batch_target and jobs.batch_contended, embedding, and the
// merge.proposal job committing through the same pipeline), rescuing jobs
// stuck past jobs.rescue_stuck_after; the pipeline, whose schema changes
// queue the per-Attribute index builds and re-embedding in the same
// transaction; the reads with the query embedders; the merge engine, which
// queues merges past merge.job_threshold; and the sweeper.
func Build(cfg config.Config, s *store.Store, opts Options) (*Parts, error) {
	embedders, err := embed.FromConfig(cfg.Embeddings)
	if err != nil {
		return nil, fmt.Errorf("configure embeddings: %w", err)
	}
	jc := jobs.ConfigFrom(cfg)
	jc.Embedders = embedders
	jc.Tune = opts.TuneRiver
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
	cc.AnalyzeJobs = jobs.QueueAnalyze(func() *river.Client[pgx.Tx] { return client })
	cc.IndexBuilds = func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, kind string, attributes []string) error {
		return jobs.EnqueueKindIndexes(ctx, client, tx, domainID, branchID, kind, attributes)
	}
	cc.IndexName = jobs.IndexName
	pipeline := commit.New(s, cc)
	jobs.AddMergeWorker(workers, merge.New(s, pipeline))
	if client, err = jobs.NewClientWith(s.Pool, workers, nil, jc, opts.Log); err != nil {
		return nil, fmt.Errorf("create job client: %w", err)
	}
	rc := reads.ConfigFrom(cfg)
	rc.Embedders = embedders
	return &Parts{
		River:    client,
		Pipeline: pipeline,
		Reader:   reads.New(s, rc),
		Merges:   merge.NewWith(s, pipeline, merge.Config{JobThreshold: cfg.Merge.JobThreshold, Enqueue: jobs.QueueMerge(client)}),
		Sweeper:  &jobs.Sweeper{Store: s, Client: client, IdempotencyTTL: cfg.Write.IdempotencyTTL, Log: opts.Log},
		Warmer:   &jobs.Warmer{Store: s, Log: opts.Log},
		store:    s,
		log:      opts.Log,
	}, nil
}

// Keeper is what keeper.New serves with: these parts, branch jobs queued
// through River, logging to log.
func (p *Parts) Keeper(log *slog.Logger) keeper.Parts {
	return keeper.Parts{Store: p.store, Pipeline: p.Pipeline, Reader: p.Reader, Merges: p.Merges,
		Jobs: jobs.Queue(p.River), Log: log}
}
