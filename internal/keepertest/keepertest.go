package keepertest

import (
	"cmp"
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/internal/assembly"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// AdminToken is the bootstrap admin token of a Keeper whose Options name
// none.
const AdminToken = "keepertest-bootstrap-admin-token-0123456789"

// stopJobsTimeout bounds how long closing a Keeper waits for running jobs.
const stopJobsTimeout = 30 * time.Second

// Options shape a test Keeper. The zero value is a Keeper with jobs, served
// over plain HTTP without any handler in front.
type Options struct {
	// AdminToken is the bootstrap admin token ("" means AdminToken).
	AdminToken string
	// Config changes the configuration after the defaults and the admin
	// token are set and before the database URLs are: a database.app_url it
	// sets is kept.
	Config func(*config.Config)
	// Log receives Keeper's and River's log. nil: New writes warnings and
	// errors to the test's log; Start discards it.
	Log *slog.Logger
	// NoJobs starts no River client: no job runs and the branch routes
	// have no queue (merges past merge.job_threshold are queued and wait).
	NoJobs bool
	// Handler wraps Keeper's handler before it is served (an OpenAPI check,
	// say); nil serves it as is.
	Handler func(http.Handler) http.Handler
	// Serve starts the HTTP server; nil means httptest.NewServer.
	Serve func(http.Handler) *httptest.Server
	// Database, when set, is the owner's connection to an existing
	// database New migrates, uses and keeps (a benchmark's dataset loaded once,
	// measured run after run) instead of a fresh one dropped at the end.
	Database string
	// Tracer sees every statement of both of the store's pools (tests
	// count a request's round trips with it); nil: none.
	Tracer pgx.QueryTracer
}

// Keeper is a running test Keeper.
type Keeper struct {
	// URL is the HTTP server's base URL (no trailing slash).
	URL string
	// Admin is the bootstrap admin token.
	Admin string
	// Config is Keeper's configuration, database URLs included.
	Config config.Config
	// Store is Keeper's store (Store.Pool connects as the owner).
	Store *store.Store
	// Server is the Keeper under test.
	Server *keeper.Server
	// Jobs is the River client running the jobs (nil with NoJobs).
	Jobs *river.Client[pgx.Tx]
	// HTTP is the server in front of Server.
	HTTP *httptest.Server

	log       *slog.Logger
	closers   []func()
	closeOnce sync.Once
}

// New starts a Keeper over a fresh migrated database (pgtest.NewDatabase;
// opts.Database: that one, kept), its requests connecting as the request
// role, and closes it when the test ends.
func New(t testing.TB, opts Options) *Keeper {
	t.Helper()
	url := opts.Database
	if url == "" {
		url = pgtest.NewDatabase(t)
	} else {
		pgtest.AdminURL(t) // the request role exists on the server
		// The kept database gets this tree's migrations and functions.
		if err := store.Migrate(context.Background(), url); err != nil {
			t.Fatalf("keepertest: migrate %s: %v", opts.Database, err)
		}
	}
	if opts.Log == nil {
		opts.Log = Logger(t, slog.LevelWarn)
	}
	k, err := Start(context.Background(), url, pgtest.AppURL(t, url), opts)
	if err != nil {
		t.Fatalf("keepertest: %v", err)
	}
	t.Cleanup(k.Close)
	return k
}

// Start starts a Keeper over a migrated database: ownerURL is the owner's
// connection (database.url), appURL the request role's (database.app_url,
// unless opts.Config sets one). The caller closes it with Close; on error
// whatever was started is closed.
func Start(ctx context.Context, ownerURL, appURL string, opts Options) (_ *Keeper, err error) {
	cfg := config.Default()
	cfg.AdminToken = cmp.Or(opts.AdminToken, AdminToken)
	if opts.Config != nil {
		opts.Config(&cfg)
	}
	cfg.Database.URL = ownerURL
	if cfg.Database.AppURL == "" {
		cfg.Database.AppURL = appURL
	}
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("test configuration: %w", err)
	}
	k := &Keeper{Admin: cfg.AdminToken, Config: cfg, log: cmp.Or(opts.Log, slog.New(slog.DiscardHandler))}
	defer func() {
		if err != nil {
			k.Close()
		}
	}()
	sc := store.ConfigFrom(cfg)
	sc.Tracer = opts.Tracer
	if k.Store, err = store.Open(ctx, ownerURL, sc); err != nil {
		return nil, fmt.Errorf("open store: %w", err)
	}
	k.closers = append(k.closers, k.Store.Close)
	p, err := assembly.Build(cfg, k.Store, assembly.Options{Log: k.log, TuneRiver: func(rc *river.Config) {
		// Tests wait little for their jobs.
		rc.FetchCooldown = 10 * time.Millisecond
		rc.FetchPollInterval = 50 * time.Millisecond
	}})
	if err != nil {
		return nil, err
	}
	parts := p.Keeper(k.log)
	if opts.NoJobs {
		parts.Jobs = store.BranchJobs{}
	} else {
		if err := k.startJobs(ctx, p.River); err != nil {
			return nil, err
		}
		k.Jobs = p.River
	}
	k.Server = keeper.New(cfg, parts)
	k.closers = append(k.closers, k.Server.Close)
	h := k.Server.Handler()
	if opts.Handler != nil {
		h = opts.Handler(h)
	}
	serve := opts.Serve
	if serve == nil {
		serve = httptest.NewServer
	}
	k.HTTP = serve(h)
	k.closers = append(k.closers, k.HTTP.Close)
	k.URL = k.HTTP.URL
	return k, nil
}

// startJobs starts the River client (every worker; the merge worker
// commits through Keeper's pipeline) and stops it on Close.
func (k *Keeper) startJobs(ctx context.Context, client *river.Client[pgx.Tx]) error {
	// The jobs outlive the caller's context: Close stops them.
	if err := client.Start(context.WithoutCancel(ctx)); err != nil {
		return fmt.Errorf("start jobs: %w", err)
	}
	k.closers = append(k.closers, func() {
		stopCtx, cancel := context.WithTimeout(context.Background(), stopJobsTimeout)
		defer cancel()
		if err := client.Stop(stopCtx); err != nil {
			k.log.Warn("stop jobs", "err", err)
		}
	})
	return nil
}

// Close stops the HTTP server, Keeper, the jobs and the store, in that
// order. Calling it again does nothing.
func (k *Keeper) Close() {
	k.closeOnce.Do(func() {
		for i := len(k.closers) - 1; i >= 0; i-- {
			k.closers[i]()
		}
	})
}

// Logger is a logger writing records at level and above to the test's log.
func Logger(t testing.TB, level slog.Level) *slog.Logger {
	return slog.New(slog.NewTextHandler(testLog{t}, &slog.HandlerOptions{Level: level}))
}

// testLog writes each log line to the test's log.
type testLog struct{ t testing.TB }

func (l testLog) Write(p []byte) (int, error) {
	l.t.Log(strings.TrimSpace(string(p)))
	return len(p), nil
}
