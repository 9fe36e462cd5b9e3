package perf

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/store"
)

// Server is the PostgreSQL server the harness creates its databases in.
type Server struct {
	// AdminURL connects as a role that may create databases.
	AdminURL string
	cluster  *pgcluster.Cluster
}

// ServerOptions choose the server.
type ServerOptions struct {
	// URL of a running server (any database on it); empty: the environment
	// (LOREBASE_TEST_DATABASE_URL, then LOREBASE_DATABASE_URL), else a
	// throwaway cluster.
	URL string
	// Settings are postgresql.conf lines of a throwaway cluster
	// (DefaultSettings when nil).
	Settings map[string]string
	// Durable keeps fsync on in a throwaway cluster, as a real server has it.
	Durable bool
}

// DefaultSettings are the throwaway cluster's settings for measurements,
// sized for the machine's memory (a quarter as shared buffers, at most 8 GB).
func DefaultSettings() map[string]string {
	mem := memoryBytes()
	sb := min(max(mem/4, 256<<20), 8<<30)
	return map[string]string{
		"shared_buffers":       fmt.Sprintf("%dMB", sb>>20),
		"effective_cache_size": fmt.Sprintf("%dMB", max(mem/2, 512<<20)>>20),
		"work_mem":             "16MB",
		"maintenance_work_mem": "1GB",
		"max_wal_size":         "8GB",
		"checkpoint_timeout":   "30min",
		"random_page_cost":     "1.1",
		"jit":                  "off",
	}
}

// OpenServer picks the server: the URL given, the environment, or a new
// throwaway cluster (stopped and removed by Close).
func OpenServer(ctx context.Context, opts ServerOptions) (*Server, error) {
	url := opts.URL
	if url == "" {
		url = os.Getenv("LOREBASE_TEST_DATABASE_URL")
	}
	if url == "" {
		url = os.Getenv("LOREBASE_DATABASE_URL")
	}
	if url != "" {
		return &Server{AdminURL: url}, nil
	}
	settings := opts.Settings
	if settings == nil {
		settings = DefaultSettings()
	}
	c, err := pgcluster.Start(ctx, pgcluster.StartOptions{Durable: opts.Durable, Settings: settings})
	if err != nil {
		return nil, fmt.Errorf("start a throwaway PostgreSQL: %w", err)
	}
	return &Server{AdminURL: c.URL, cluster: c}, nil
}

// Throwaway reports whether the server is a cluster the harness started.
func (s *Server) Throwaway() bool { return s.cluster != nil }

// Close stops a throwaway cluster.
func (s *Server) Close() error {
	if s.cluster == nil {
		return nil
	}
	return s.cluster.Stop()
}

// URL is the connection to a database of the server.
func (s *Server) URL(database string) (string, error) {
	return pgcluster.WithDatabase(s.AdminURL, database)
}

// Fixture is a loaded database to measure.
type Fixture struct {
	// URL connects to the database as the owner.
	URL string
	// Database is its name.
	Database string
	// Load is what loading did (nothing but checks on a kept seed database).
	Load *LoadResult
	// Replicate is what the replication of a replicated dataset did (nil
	// when the dataset has no replicas).
	Replicate *ReplicateResult
	// LoadDuration is the time to create, migrate and load the database.
	LoadDuration time.Duration
	// FromSeed names the seed database the fixture was copied from.
	FromSeed string
	drop     func(context.Context) error
}

// Drop removes the fixture's database (not the seed it was copied from).
func (f *Fixture) Drop(ctx context.Context) error {
	if f.drop == nil {
		return nil
	}
	return f.drop(ctx)
}

// FixtureOptions choose how the fixture is made.
type FixtureOptions struct {
	Load LoadOptions
	// SeedDatabase, when set, is loaded once (resuming an interrupted load)
	// and kept; each fixture is a fresh copy of it (CREATE DATABASE ...
	// TEMPLATE), so a later run does not load again.
	SeedDatabase string
	// Database names the measured database (default: a new random name).
	Database string
	// Keep leaves the measured database in place after Drop.
	Keep bool
	// InPlace measures the seed database itself instead of a copy (for
	// fixtures too large to copy); it is never dropped.
	InPlace bool
	// Profile, when set, is the storage profile applied to the loaded
	// database after migrating it (ApplyProfile).
	Profile string
	// Log receives what is being done (nil: nothing).
	Log io.Writer
}

// Fixture creates the database to measure: loaded into a new database, or
// copied from a kept seed database that is loaded first when needed.
func (s *Server) Fixture(ctx context.Context, opts FixtureOptions) (*Fixture, error) {
	logf := func(format string, args ...any) {
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, format+"\n", args...)
		}
	}
	name := opts.Database
	if name == "" {
		name = "lorebase_perf_" + randomSuffix()
	}
	f := &Fixture{Database: name}
	start := time.Now()
	target := name
	if opts.SeedDatabase != "" {
		target = opts.SeedDatabase
	}
	logf("perf: database %s", target)
	if err := EnsureDatabase(ctx, s, target); err != nil {
		return nil, err
	}
	url, err := s.URL(target)
	if err != nil {
		return nil, err
	}
	if opts.Profile != "" {
		if err := ApplyProfile(ctx, url, opts.Profile, opts.Log); err != nil {
			return nil, err
		}
	}
	load := opts.Load
	if load.Progress == nil {
		load.Progress = opts.Log
	}
	res, err := LoadDatabase(ctx, url, load)
	if err != nil {
		return nil, err
	}
	if !res.Complete {
		return nil, fmt.Errorf("load of %s stopped after %d of %d batches", target, res.Skipped+res.Committed, res.Batches)
	}
	f.Load = res
	if opts.Load.Supply.Replicas > 1 {
		logf("perf: replicating %s %d times", target, opts.Load.Supply.Replicas)
		if f.Replicate, err = ReplicateDatabase(ctx, url, opts.Load.Supply, opts.Log); err != nil {
			return nil, err
		}
	}
	if opts.SeedDatabase != "" && opts.InPlace {
		f.FromSeed, f.Database, f.URL = opts.SeedDatabase, opts.SeedDatabase, url
		f.LoadDuration = time.Since(start)
		return f, nil
	}
	if opts.SeedDatabase != "" {
		f.FromSeed = opts.SeedDatabase
		logf("perf: copying %s to %s", opts.SeedDatabase, name)
		if err := s.copyDatabase(ctx, opts.SeedDatabase, name); err != nil {
			return nil, err
		}
		if url, err = s.URL(name); err != nil {
			return nil, err
		}
	}
	f.URL = url
	f.LoadDuration = time.Since(start)
	if !opts.Keep {
		f.drop = func(ctx context.Context) error {
			return s.exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)")
		}
	}
	return f, nil
}

// EnsureDatabase creates the database when the server lacks it and applies
// every migration (a no-op on a migrated database).
func EnsureDatabase(ctx context.Context, s *Server, name string) error {
	exists, err := s.databaseExists(ctx, name)
	if err != nil {
		return err
	}
	if !exists {
		if err := s.exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
			return fmt.Errorf("create database %s: %w", name, err)
		}
	}
	url, err := s.URL(name)
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx, url); err != nil {
		return fmt.Errorf("migrate %s: %w", name, err)
	}
	return nil
}

// LoadDatabase opens the database (no statement timeout) and loads it.
func LoadDatabase(ctx context.Context, url string, opts LoadOptions) (*LoadResult, error) {
	st, err := store.Open(ctx, url, store.Config{MaxConns: 4})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return Load(ctx, st, opts)
}

// ReplicateDatabase opens the database and replicates its dataset (Replicate).
func ReplicateDatabase(ctx context.Context, url string, cfg supply.Config, log io.Writer) (*ReplicateResult, error) {
	st, err := store.Open(ctx, url, store.Config{MaxConns: 2})
	if err != nil {
		return nil, err
	}
	defer st.Close()
	return Replicate(ctx, st, cfg, log)
}

func (s *Server) databaseExists(ctx context.Context, name string) (bool, error) {
	conn, err := pgx.Connect(ctx, s.AdminURL)
	if err != nil {
		return false, fmt.Errorf("connect to server: %w", err)
	}
	defer conn.Close(ctx)
	var ok bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_database WHERE datname = $1)`, name).Scan(&ok); err != nil {
		return false, fmt.Errorf("look up database %s: %w", name, err)
	}
	return ok, nil
}

func (s *Server) exec(ctx context.Context, stmt string) error {
	conn, err := pgx.Connect(ctx, s.AdminURL)
	if err != nil {
		return fmt.Errorf("connect to server: %w", err)
	}
	defer conn.Close(ctx)
	_, err = conn.Exec(ctx, stmt)
	return err
}

// copyDatabase creates dst from the template src, waiting for connections
// to src to go away (CREATE DATABASE refuses a template in use).
func (s *Server) copyDatabase(ctx context.Context, src, dst string) error {
	stmt := "CREATE DATABASE " + pgx.Identifier{dst}.Sanitize() + " TEMPLATE " + pgx.Identifier{src}.Sanitize()
	deadline := time.Now().Add(30 * time.Second)
	for {
		err := s.exec(ctx, stmt)
		if err == nil {
			return nil
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.ObjectInUse || time.Now().After(deadline) {
			return fmt.Errorf("copy database %s to %s: %w", src, dst, err)
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
