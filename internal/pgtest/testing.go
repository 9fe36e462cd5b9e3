package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lorebase/lorebase/store"
)

// shared is the one server and template of this test process. A test
// process is the unit a throwaway cluster lives for, so this is the one
// piece of package state: it is written once, under its Once.
type shared struct {
	once     sync.Once
	err      error
	cluster  *Cluster
	adminURL string
	template string
}

var proc shared

// Main runs the tests of a package and stops the throwaway cluster (if one
// was started) afterwards. Call it from TestMain.
func Main(m *testing.M) {
	code := m.Run()
	proc.shutdown()
	os.Exit(code)
}

func (s *shared) init() {
	ctx := context.Background()
	s.adminURL = os.Getenv("LOREBASE_TEST_DATABASE_URL")
	if s.adminURL == "" {
		c, err := Start(ctx, StartOptions{})
		if err != nil {
			s.err = fmt.Errorf("start a throwaway PostgreSQL (set LOREBASE_TEST_DATABASE_URL to use a running server): %w", err)
			return
		}
		s.cluster = c
		s.adminURL = c.URL
	}
	name := "lorebase_tmpl_" + randomSuffix()
	if err := createDatabase(ctx, s.adminURL, name, ""); err != nil {
		s.err = err
		return
	}
	tmplURL, err := WithDatabase(s.adminURL, name)
	if err != nil {
		s.err = err
		return
	}
	if err := store.Migrate(ctx, tmplURL); err != nil {
		s.err = fmt.Errorf("migrate template database: %w", err)
		return
	}
	s.template = name
}

func (s *shared) shutdown() {
	if s.template != "" {
		_ = dropDatabase(context.Background(), s.adminURL, s.template)
	}
	if s.cluster != nil {
		_ = s.cluster.Stop()
	}
}

// AdminURL is the superuser connection to the test server's postgres
// database, starting a throwaway cluster on first use.
func AdminURL(t testing.TB) string {
	t.Helper()
	proc.once.Do(proc.init)
	if proc.err != nil {
		t.Fatalf("pgtest: %v", proc.err)
	}
	return proc.adminURL
}

// NewDatabase creates a fresh, migrated database for one test (a clone of
// the process's template) and drops it when the test ends. It returns the
// owner's connection URL.
func NewDatabase(t testing.TB) string {
	t.Helper()
	admin := AdminURL(t)
	name := "lorebase_test_" + randomSuffix()
	ctx := context.Background()
	if err := createDatabase(ctx, admin, name, proc.template); err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := dropDatabase(context.Background(), admin, name); err != nil {
			t.Logf("pgtest: drop %s: %v", name, err)
		}
	})
	u, err := WithDatabase(admin, name)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// CreateDatabase creates an empty database (no migrations) and returns its URL.
func CreateDatabase(ctx context.Context, adminURL, name string) (string, error) {
	if err := createDatabase(ctx, adminURL, name, ""); err != nil {
		return "", err
	}
	return WithDatabase(adminURL, name)
}

func createDatabase(ctx context.Context, adminURL, name, template string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to test server: %w", err)
	}
	defer conn.Close(ctx)
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		stmt += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	// A clone fails while anyone is connected to the template; the
	// migration's connections take a moment to go away.
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := conn.Exec(ctx, stmt)
		if err == nil {
			return nil
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.ObjectInUse || time.Now().After(deadline) {
			return fmt.Errorf("create database %s: %w", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func dropDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to test server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
