package store

import (
	"context"
	"fmt"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/lorebase/lorebase/internal/config"
)

// Config tunes the pool.
type Config struct {
	// StatementTimeout bounds every statement (database.statement_timeout).
	StatementTimeout time.Duration
	// MaxConns is the pool size; 0 means pgxpool's default.
	MaxConns int32
}

// ConfigFrom is the pool's part of Keeper's configuration.
func ConfigFrom(c config.Config) Config {
	return Config{StatementTimeout: c.Database.StatementTimeout, MaxConns: int32(c.Database.MaxConns)}
}

// Store is the database handle shared by Keeper, the commit pipeline, the
// reads and the jobs.
type Store struct {
	// Pool connects as the owner; scoped calls switch to lorebase_app.
	Pool *pgxpool.Pool
}

// Open creates the pool and checks that the database answers.
func Open(ctx context.Context, url string, cfg Config) (*Store, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	if cfg.MaxConns > 0 {
		pc.MaxConns = cfg.MaxConns
	}
	rp := pc.ConnConfig.RuntimeParams
	if cfg.StatementTimeout > 0 {
		rp["statement_timeout"] = strconv.FormatInt(cfg.StatementTimeout.Milliseconds(), 10)
	}
	rp["jit"] = "off"
	rp["application_name"] = "lorebase"
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("create pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return &Store{Pool: pool}, nil
}

// Close closes the pool.
func (s *Store) Close() { s.Pool.Close() }

// scopeSQL switches the transaction to lorebase_app and names its Domain.
// Both settings are transaction-local (set_config(..., true)), so they end
// with the transaction and a pooled connection never carries them on.
const scopeSQL = `SELECT set_config('lorebase.domain_id', $1::text, true), set_config('role', 'lorebase_app', true)`

// InDomain runs fn in one transaction as lorebase_app scoped to the Domain.
// fn's error rolls the transaction back.
func (s *Store) InDomain(ctx context.Context, domainID int32, fn func(ctx context.Context, tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if err := Scope(ctx, tx, domainID); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// Scope switches an open transaction to lorebase_app and the Domain.
func Scope(ctx context.Context, tx pgx.Tx, domainID int32) error {
	if _, err := tx.Exec(ctx, scopeSQL, strconv.Itoa(int(domainID))); err != nil {
		return fmt.Errorf("scope transaction to domain: %w", err)
	}
	return nil
}

// Read runs one read statement as lorebase_app scoped to the Domain, in one
// round trip: BEGIN READ ONLY, the scope, the statement and COMMIT travel in
// one batch. scan reads the statement's rows.
func (s *Store) Read(ctx context.Context, domainID int32, sql string, args []any, scan func(pgx.Rows) error) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN READ ONLY")
	b.Queue(scopeSQL, strconv.Itoa(int(domainID)))
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		if err := scan(rows); err != nil {
			return err
		}
		return rows.Err()
	})
	b.Queue("COMMIT")
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	err = conn.SendBatch(ctx, b).Close()
	if err != nil {
		// A failed statement leaves the transaction aborted; end it so the
		// connection goes back to the pool clean.
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			conn.Conn().PgConn().Close(context.WithoutCancel(ctx)) //nolint:errcheck // connection is discarded
		}
		return err
	}
	return nil
}
