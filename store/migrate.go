package store

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"sort"
	"strconv"

	"github.com/golang-migrate/migrate/v4"
	migratepgx "github.com/golang-migrate/migrate/v4/database/pgx/v5"
	"github.com/golang-migrate/migrate/v4/source/iofs"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivermigrate"

	"github.com/lorebase/lorebase/migrations"
)

// Migrate applies every Lorebase migration, then River's, then grants the
// application role what River's tables need. It is safe to run twice and
// from several processes (golang-migrate holds an advisory lock; River's
// step runs under one too).
func Migrate(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse database URL: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close()
	drv, err := migratepgx.WithInstance(db, &migratepgx.Config{})
	if err != nil {
		return fmt.Errorf("open migration driver: %w", err)
	}
	src, err := iofs.New(migrations.FS, ".")
	if err != nil {
		return fmt.Errorf("open embedded migrations: %w", err)
	}
	m, err := migrate.NewWithInstance("iofs", src, "postgres", drv)
	if err != nil {
		return fmt.Errorf("prepare migrations: %w", err)
	}
	defer m.Close() //nolint:errcheck // closes the driver's connection; nothing to recover
	if err := m.Up(); err != nil && !errors.Is(err, migrate.ErrNoChange) {
		return fmt.Errorf("apply migrations: %w", err)
	}

	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return fmt.Errorf("connect for River migrations: %w", err)
	}
	defer pool.Close()
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("connect for River migrations: %w", err)
	}
	defer conn.Release()
	// River's migrator takes no lock of its own: serialize concurrent runs.
	if _, err := conn.Exec(ctx, "SELECT pg_advisory_lock(hashtext('lorebase.river_migrate'))"); err != nil {
		return fmt.Errorf("lock River migrations: %w", err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), "SELECT pg_advisory_unlock(hashtext('lorebase.river_migrate'))") //nolint:errcheck // released with the session anyway
	rm, err := rivermigrate.New(riverpgxv5.New(pool), nil)
	if err != nil {
		return fmt.Errorf("prepare River migrations: %w", err)
	}
	if _, err := rm.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("apply River migrations: %w", err)
	}
	if _, err := conn.Exec(ctx, `DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'river\_%' LOOP
        EXECUTE format('GRANT SELECT, INSERT, UPDATE, DELETE ON %I TO lorebase_app', t);
    END LOOP;
END $$`); err != nil {
		return fmt.Errorf("grant River tables: %w", err)
	}
	if _, err := conn.Exec(ctx, `DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT sequencename FROM pg_sequences WHERE schemaname = current_schema() AND sequencename LIKE 'river\_%' LOOP
        EXECUTE format('GRANT USAGE, SELECT ON SEQUENCE %I TO lorebase_app', t);
    END LOOP;
END $$`); err != nil {
		return fmt.Errorf("grant River sequences: %w", err)
	}
	// lorebase_app inserts jobs in the transactions that need them (and
	// River's insert reads the rows back), so it keeps its grants on
	// river_job; the policy limits it to the jobs of its Domain, which
	// every Lorebase job names in its args. River's own client runs as the
	// owner and sees every job.
	if _, err := conn.Exec(ctx, `DO $$
BEGIN
    ALTER TABLE river_job ENABLE ROW LEVEL SECURITY;
    IF NOT EXISTS (SELECT 1 FROM pg_policy WHERE polrelid = 'river_job'::regclass AND polname = 'domain_isolation') THEN
        CREATE POLICY domain_isolation ON river_job
            USING ((args ->> 'domain_id')::int = lb_domain())
            WITH CHECK ((args ->> 'domain_id')::int = lb_domain());
    END IF;
END $$`); err != nil {
		return fmt.Errorf("isolate river_job by Domain: %w", err)
	}
	return nil
}

// MigrationState says how far a database's migrations are.
type MigrationState struct {
	Current      int  `json:"current"`
	Latest       int  `json:"latest"`
	Dirty        bool `json:"dirty"`
	RiverCurrent int  `json:"river_current"`
	RiverLatest  int  `json:"river_latest"`
}

// UpToDate reports whether nothing is left to apply.
func (m MigrationState) UpToDate() bool {
	return !m.Dirty && m.Current >= m.Latest && m.RiverCurrent >= m.RiverLatest
}

var migrationName = regexp.MustCompile(`^(\d+)_.*\.up\.sql$`)

// LatestMigration is the highest migration version this build embeds.
func LatestMigration() (int, error) {
	entries, err := fs.ReadDir(migrations.FS, ".")
	if err != nil {
		return 0, fmt.Errorf("read embedded migrations: %w", err)
	}
	var versions []int
	for _, e := range entries {
		if m := migrationName.FindStringSubmatch(e.Name()); m != nil {
			v, _ := strconv.Atoi(m[1])
			versions = append(versions, v)
		}
	}
	sort.Ints(versions)
	if len(versions) == 0 {
		return 0, nil
	}
	return versions[len(versions)-1], nil
}

// Migrations reads the migration state of the database.
func (s *Store) Migrations(ctx context.Context) (MigrationState, error) {
	var st MigrationState
	latest, err := LatestMigration()
	if err != nil {
		return st, err
	}
	st.Latest = latest
	var exists bool
	if err := s.Pool.QueryRow(ctx, `SELECT to_regclass('schema_migrations') IS NOT NULL`).Scan(&exists); err != nil {
		return st, fmt.Errorf("read migration state: %w", err)
	}
	if exists {
		err := s.Pool.QueryRow(ctx, `SELECT version, dirty FROM schema_migrations LIMIT 1`).Scan(&st.Current, &st.Dirty)
		if err != nil && !errors.Is(err, pgx.ErrNoRows) {
			return st, fmt.Errorf("read migration state: %w", err)
		}
	}
	rm, err := rivermigrate.New(riverpgxv5.New(s.Pool), nil)
	if err != nil {
		return st, fmt.Errorf("prepare River migrations: %w", err)
	}
	all := rm.AllVersions()
	if len(all) > 0 {
		st.RiverLatest = all[len(all)-1].Version
	}
	var riverExists bool
	if err := s.Pool.QueryRow(ctx, `SELECT to_regclass('river_migration') IS NOT NULL`).Scan(&riverExists); err != nil {
		return st, fmt.Errorf("read River migration state: %w", err)
	}
	if riverExists {
		existing, err := rm.ExistingVersions(ctx)
		if err != nil {
			return st, fmt.Errorf("read River migration state: %w", err)
		}
		if len(existing) > 0 {
			st.RiverCurrent = existing[len(existing)-1].Version
		}
	}
	return st, nil
}
