package store

import (
	"bytes"
	"context"
	"crypto/sha256"
	"errors"
	"fmt"
	"io/fs"
	"path"
	"regexp"
	"sort"
	"strconv"
	"strings"

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

// Migrate applies every Lorebase migration, then River's, then the function
// files and the after/ files (see package migrations). It is safe to run
// twice and from several processes (golang-migrate holds an advisory lock;
// River's step and the function step run under one too).
func Migrate(ctx context.Context, url string) error {
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return fmt.Errorf("parse database URL: %w", err)
	}
	db := stdlib.OpenDB(*cfg)
	defer db.Close() //nolint:errcheck // the migration driver closes the connections; nothing to recover
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
	if err := applyFunctions(ctx, conn.Conn()); err != nil {
		return err
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
	// FunctionsPending counts the function files not applied as they are.
	FunctionsPending int `json:"functions_pending"`
}

// UpToDate reports whether nothing is left to apply.
func (m MigrationState) UpToDate() bool {
	return !m.Dirty && m.Current >= m.Latest && m.RiverCurrent >= m.RiverLatest && m.FunctionsPending == 0
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
	pending, err := s.functionsPending(ctx)
	if err != nil {
		return st, err
	}
	st.FunctionsPending = pending
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

// applyFunctions applies, in one transaction under an advisory lock, every
// functions/*.sql file whose checksum differs from the one recorded in
// lorebase_functions (or whose function is missing), then every after/*.sql
// file.
func applyFunctions(ctx context.Context, conn *pgx.Conn) error {
	files, err := FunctionFiles()
	if err != nil {
		return err
	}
	after, err := fs.Glob(migrations.FS, "after/*.sql")
	if err != nil {
		return fmt.Errorf("list after/ files: %w", err)
	}
	sort.Strings(after)
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('lorebase.functions'))`); err != nil {
			return fmt.Errorf("lock function files: %w", err)
		}
		if _, err := tx.Exec(ctx, `SET LOCAL check_function_bodies = off`); err != nil {
			return fmt.Errorf("load function files: %w", err)
		}
		applied, err := checksums(ctx, tx, `SELECT f.name, f.checksum FROM lorebase_functions f
 WHERE EXISTS (SELECT 1 FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace AND p.proname = f.name)`)
		if err != nil {
			return fmt.Errorf("read applied function files: %w", err)
		}
		for _, f := range files {
			if bytes.Equal(applied[f.Name], f.Checksum[:]) {
				continue
			}
			if _, err := tx.Exec(ctx, f.SQL); err != nil {
				return fmt.Errorf("apply functions/%s.sql: %w", f.Name, err)
			}
			if _, err := tx.Exec(ctx, `INSERT INTO lorebase_functions (name, checksum) VALUES ($1, $2)
ON CONFLICT (name) DO UPDATE SET checksum = excluded.checksum, applied_at = now()`, f.Name, f.Checksum[:]); err != nil {
				return fmt.Errorf("record functions/%s.sql: %w", f.Name, err)
			}
		}
		names := make([]string, len(files))
		for i, f := range files {
			names[i] = f.Name
		}
		if _, err := tx.Exec(ctx, `DELETE FROM lorebase_functions WHERE name <> ALL($1)`, names); err != nil {
			return fmt.Errorf("forget removed function files: %w", err)
		}
		for _, name := range after {
			text, err := fs.ReadFile(migrations.FS, name)
			if err != nil {
				return fmt.Errorf("read %s: %w", name, err)
			}
			if _, err := tx.Exec(ctx, string(text)); err != nil {
				return fmt.Errorf("apply %s: %w", name, err)
			}
		}
		return nil
	})
}

// FunctionFile is one migrations/functions/<Name>.sql file.
type FunctionFile struct {
	Name     string
	SQL      string
	Checksum [sha256.Size]byte
}

// FunctionFiles reads every embedded function file, in name order.
func FunctionFiles() ([]FunctionFile, error) {
	paths, err := fs.Glob(migrations.FS, "functions/*.sql")
	if err != nil {
		return nil, fmt.Errorf("list function files: %w", err)
	}
	sort.Strings(paths)
	files := make([]FunctionFile, 0, len(paths))
	for _, p := range paths {
		text, err := fs.ReadFile(migrations.FS, p)
		if err != nil {
			return nil, fmt.Errorf("read %s: %w", p, err)
		}
		files = append(files, FunctionFile{
			Name:     strings.TrimSuffix(path.Base(p), ".sql"),
			SQL:      string(text),
			Checksum: sha256.Sum256(text),
		})
	}
	return files, nil
}

// functionsPending counts the embedded function files whose checksum is not
// the one recorded as applied.
func (s *Store) functionsPending(ctx context.Context) (int, error) {
	files, err := FunctionFiles()
	if err != nil {
		return 0, err
	}
	var exists bool
	if err := s.Pool.QueryRow(ctx, `SELECT to_regclass('lorebase_functions') IS NOT NULL`).Scan(&exists); err != nil {
		return 0, fmt.Errorf("read function state: %w", err)
	}
	if !exists {
		return len(files), nil
	}
	applied, err := checksums(ctx, s.Pool, `SELECT name, checksum FROM lorebase_functions`)
	if err != nil {
		return 0, fmt.Errorf("read function state: %w", err)
	}
	pending := 0
	for _, f := range files {
		if !bytes.Equal(applied[f.Name], f.Checksum[:]) {
			pending++
		}
	}
	return pending, nil
}

// checksums reads the recorded checksum of each function file: sql selects
// name and checksum from lorebase_functions.
func checksums(ctx context.Context, q interface {
	Query(context.Context, string, ...any) (pgx.Rows, error)
}, sql string) (map[string][]byte, error) {
	rows, err := q.Query(ctx, sql)
	if err != nil {
		return nil, err
	}
	out := map[string][]byte{}
	var name string
	var sum []byte
	_, err = pgx.ForEachRow(rows, []any{&name, &sum}, func() error {
		out[name] = sum
		return nil
	})
	return out, err
}
