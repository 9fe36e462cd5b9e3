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

	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/store"
	"go.uber.org/goleak"
)

// shared is the one server and template of this test process. A test
// process is the unit a throwaway cluster lives for, so this is the one
// piece of package state: it is written once, under its Once.
type shared struct {
	once     sync.Once
	err      error
	cluster  *pgcluster.Cluster
	adminURL string
	template string
}

var proc shared

// Main runs the tests of a package, stops the throwaway cluster (if one
// was started) afterwards, and fails the run when the tests left goroutines
// behind (goleak). Call it from TestMain.
func Main(m *testing.M, opts ...goleak.Option) {
	MainCleanup(m, nil, opts...)
}

// MainCleanup is Main with cleanup (when not nil) run after the tests and
// before the cluster stops: fixtures shared by the whole process (a
// Keeper, a job client) stop there.
func MainCleanup(m *testing.M, cleanup func(), opts ...goleak.Option) {
	code := m.Run()
	if cleanup != nil {
		cleanup()
	}
	proc.shutdown()
	if code == 0 {
		if err := goleak.Find(append(LeakOptions(), opts...)...); err != nil {
			fmt.Fprintf(os.Stderr, "goleak: goroutines left behind by the tests: %v\n", err)
			code = 1
		}
	}
	os.Exit(code)
}

// LeakOptions are the goroutines goleak ignores in every package: the
// expirable LRU's cleanup loop (Keeper's token cache) has no way to stop.
func LeakOptions() []goleak.Option {
	return []goleak.Option{
		goleak.IgnoreAnyFunction("github.com/hashicorp/golang-lru/v2/expirable.NewLRU[...].func1"),
	}
}

func (s *shared) init() {
	ctx := context.Background()
	s.adminURL = os.Getenv("LOREBASE_TEST_DATABASE_URL")
	if s.adminURL == "" {
		c, err := pgcluster.Start(ctx, pgcluster.StartOptions{Settings: Settings()})
		if err != nil {
			s.err = fmt.Errorf("start a throwaway PostgreSQL (set LOREBASE_TEST_DATABASE_URL to use a running server): %w", err)
			return
		}
		s.cluster = c
		s.adminURL = c.URL
	}
	name := "lorebase_tmpl_" + randomSuffix()
	if err := pgcluster.CreateDatabaseFrom(ctx, s.adminURL, name, ""); err != nil {
		s.err = err
		return
	}
	tmplURL, err := pgcluster.WithDatabase(s.adminURL, name)
	if err != nil {
		s.err = err
		return
	}
	if err := store.Migrate(ctx, tmplURL); err != nil {
		s.err = fmt.Errorf("migrate template database: %w", err)
		return
	}
	appURL, err := pgcluster.WithUser(tmplURL, RequestRole, RequestPassword)
	if err != nil {
		s.err = err
		return
	}
	if err := store.EnsureRequestRole(ctx, tmplURL, appURL); err != nil {
		s.err = fmt.Errorf("create the request role: %w", err)
		return
	}
	s.template = name
}

func (s *shared) shutdown() {
	if s.template != "" {
		_ = pgcluster.DropDatabase(context.Background(), s.adminURL, s.template)
	}
	if s.cluster != nil {
		_ = s.cluster.Stop()
	}
}

// Settings are the throwaway cluster's settings beyond pgcluster's:
// pg_stat_statements loaded, for the tests that count the statements a
// read plans and runs (.ci/run's cluster sets the same).
func Settings() map[string]string {
	return map[string]string{"shared_preload_libraries": "pg_stat_statements", "pg_stat_statements.max": "10000"}
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
	u, drop, err := Database(context.Background())
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	t.Cleanup(func() {
		if err := drop(); err != nil {
			t.Logf("pgtest: %v", err)
		}
	})
	return u
}

// RequestRole is the login role of request connections in tests (roles
// are cluster-wide: one serves every test database).
const RequestRole = "lorebase_request"

// RequestPassword is RequestRole's password on servers that ask for one.
const RequestPassword = "lorebase-request-test"

// AppURL is the request connection (database.app_url) of a test database
// whose owner's URL is ownerURL: the same database as RequestRole.
func AppURL(t testing.TB, ownerURL string) string {
	t.Helper()
	u, err := pgcluster.WithUser(ownerURL, RequestRole, RequestPassword)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// Database is NewDatabase for code without a testing.TB (runnable
// examples): the caller drops the database with drop.
func Database(ctx context.Context) (url string, drop func() error, err error) {
	proc.once.Do(proc.init)
	if proc.err != nil {
		return "", nil, proc.err
	}
	admin := proc.adminURL
	name := "lorebase_test_" + randomSuffix()
	if err := pgcluster.CreateDatabaseFrom(ctx, admin, name, proc.template); err != nil {
		return "", nil, err
	}
	drop = func() error { return pgcluster.DropDatabase(context.Background(), admin, name) }
	u, err := pgcluster.WithDatabase(admin, name)
	if err != nil {
		return "", nil, errors.Join(err, drop())
	}
	return u, drop, nil
}

func randomSuffix() string {
	var b [6]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
