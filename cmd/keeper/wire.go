package main

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/lorebase/lorebase/internal/assembly"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/store"
)

// parts are Keeper's working pieces over one store (internal/assembly),
// with what serving them needs: the log and the jobs' stop budget.
type parts struct {
	*assembly.Parts
	log      *slog.Logger
	stop     time.Duration // jobs.stop_timeout
	sweepInt time.Duration // jobs.sweep_interval
	warmInt  time.Duration // jobs.keep_warm_interval
}

// assemble builds the parts (assembly.Build), logging through log.
func assemble(cfg config.Config, s *store.Store, log *slog.Logger) (*parts, error) {
	p, err := assembly.Build(cfg, s, assembly.Options{Log: log})
	if err != nil {
		return nil, err
	}
	return &parts{Parts: p, log: log, stop: cfg.Jobs.StopTimeout, sweepInt: cfg.Jobs.SweepInterval, warmInt: cfg.Jobs.KeepWarmInterval}, nil
}

// server is the HTTP server over the parts, queueing branch jobs and big
// merges through the same River client.
func (p *parts) server(cfg config.Config) *keeper.Server {
	return keeper.New(cfg, p.Keeper(p.log))
}

// serveWith starts the job client, serves HTTP until ctx ends, then stops
// the jobs. The client runs on a context the signal does not cancel, so
// the HTTP server drains first; then Stop lets running jobs finish within
// jobs.stop_timeout, after which they are cancelled (a job cut short rolls
// back its batch and is retried by the next Keeper).
func (p *parts) serveWith(ctx context.Context, serve func(context.Context) error) error {
	jobsCtx := context.WithoutCancel(ctx)
	if err := p.River.Start(jobsCtx); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	// The sweep re-queues the job of any branch left copying or deleting
	// without one (at start, then every jobs.sweep_interval).
	sweepCtx, stopSweep := context.WithCancel(ctx)
	swept := make(chan struct{})
	go func() {
		defer close(swept)
		p.Sweeper.Run(sweepCtx, p.sweepInt)
	}()
	// The write path's primary keys are kept in shared buffers (at start,
	// then every jobs.keep_warm_interval; never at 0).
	warmed := make(chan struct{})
	go func() {
		defer close(warmed)
		if p.warmInt > 0 {
			p.Warmer.Run(sweepCtx, p.warmInt)
		}
	}()
	err := serve(ctx)
	stopSweep()
	<-swept
	<-warmed
	stopCtx, cancel := context.WithTimeout(jobsCtx, p.stop)
	defer cancel()
	if serr := p.River.Stop(stopCtx); serr != nil {
		p.log.Warn("jobs did not finish within jobs.stop_timeout; cancelling them (they will be retried)", "err", serr)
		hardCtx, hardCancel := context.WithTimeout(jobsCtx, 5*time.Second)
		defer hardCancel()
		if herr := p.River.StopAndCancel(hardCtx); herr != nil {
			p.log.Error("jobs did not stop after cancellation", "err", herr)
		}
	}
	return err
}
