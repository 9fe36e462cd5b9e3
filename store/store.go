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

// Config tunes the pools.
type Config struct {
	// StatementTimeout bounds every statement (database.statement_timeout).
	StatementTimeout time.Duration
	// MaxConns is the size of the request pool; 0 means pgxpool's default.
	MaxConns int32
	// OwnerMaxConns is the size of the owner's pool (jobs, token lookups,
	// administration); 0 means pgxpool's default.
	OwnerMaxConns int32
	// AppURL is the connection of request transactions (database.app_url):
	// a login role that is a member of lorebase_app only, so SQL run on it
	// can never become the owner. Empty: requests use the owner's URL and
	// switch to lorebase_app with SET ROLE, a weaker boundary.
	AppURL string
	// AtMaxChanges bounds the changes a read as of a Revision may replay
	// (read.at_max_changes; the session setting lorebase.at_max_changes of
	// request connections); 0 leaves the functions' default (100000).
	AtMaxChanges int
	// Tracer, when set, sees every statement of both pools (diagnostics;
	// tests count a call's round trips with it).
	Tracer pgx.QueryTracer
}

// ConfigFrom is the pool's part of Keeper's configuration.
func ConfigFrom(c config.Config) Config {
	return Config{StatementTimeout: c.Database.StatementTimeout, MaxConns: int32(c.Database.MaxConns),
		OwnerMaxConns: int32(c.Database.OwnerMaxConns), AppURL: c.Database.AppURL, AtMaxChanges: c.Read.AtMaxChanges}
}

// Store is the database handle shared by Keeper, the commit pipeline, the
// reads and the jobs.
type Store struct {
	// Pool connects as the owner: jobs, token lookups, migrations state,
	// the bootstrap admin's calls. Never used for a request's reads or
	// writes of Domain data.
	Pool *pgxpool.Pool
	// Requests carries request transactions (InDomain, Read), each scoped
	// to one Domain as lorebase_app. It logs in as the role of
	// database.app_url when set, else as the owner.
	Requests *pgxpool.Pool
	// SeparateRequestRole is true when Requests logs in as its own role
	// (database.app_url) rather than as the owner.
	SeparateRequestRole bool
}

// Open creates the owner's pool and the request pool and checks that the
// database answers on both.
func Open(ctx context.Context, url string, cfg Config) (*Store, error) {
	owner, err := openPool(ctx, url, cfg.OwnerMaxConns, cfg.StatementTimeout, "lorebase-owner", nil, cfg.Tracer)
	if err != nil {
		return nil, err
	}
	reqURL := url
	if cfg.AppURL != "" {
		reqURL = cfg.AppURL
	}
	var params map[string]string
	if cfg.AtMaxChanges > 0 {
		params = map[string]string{"lorebase.at_max_changes": strconv.Itoa(cfg.AtMaxChanges)}
	}
	requests, err := openPool(ctx, reqURL, cfg.MaxConns, cfg.StatementTimeout, "lorebase", params, cfg.Tracer)
	if err != nil {
		owner.Close()
		return nil, fmt.Errorf("request pool: %w", err)
	}
	return &Store{Pool: owner, Requests: requests, SeparateRequestRole: cfg.AppURL != ""}, nil
}

func openPool(ctx context.Context, url string, maxConns int32, statementTimeout time.Duration, app string, params map[string]string, tracer pgx.QueryTracer) (*pgxpool.Pool, error) {
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	if maxConns > 0 {
		pc.MaxConns = maxConns
	}
	pc.ConnConfig.Tracer = tracer
	rp := pc.ConnConfig.RuntimeParams
	if statementTimeout > 0 {
		rp["statement_timeout"] = strconv.FormatInt(statementTimeout.Milliseconds(), 10)
	}
	rp["jit"] = "off"
	rp["application_name"] = app
	for k, v := range params {
		rp[k] = v
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("create pool: %w", err)
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return pool, nil
}

// Close closes both pools.
func (s *Store) Close() {
	s.Requests.Close()
	s.Pool.Close()
}

// scopeSQL switches the transaction to lorebase_app and names its Domain.
// Both settings are transaction-local (set_config(..., true)), so they end
// with the transaction and a pooled connection never carries them on.
const scopeSQL = `SELECT set_config('lorebase.domain_id', $1::text, true), set_config('role', 'lorebase_app', true)`

// InDomain runs fn in one transaction as lorebase_app scoped to the Domain.
// fn's error rolls the transaction back.
func (s *Store) InDomain(ctx context.Context, domainID int32, fn func(ctx context.Context, tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.Requests, func(tx pgx.Tx) error {
		if err := Scope(ctx, tx, domainID); err != nil {
			return err
		}
		return fn(ctx, tx)
	})
}

// InDomainBatch is InDomain with first's statements sent in one round trip
// with the scope, right after it and before fn runs: a failed statement of
// first rolls the transaction back and fn does not run. first's callbacks
// have run when fn starts.
func (s *Store) InDomainBatch(ctx context.Context, domainID int32, first *pgx.Batch, fn func(ctx context.Context, tx pgx.Tx) error) error {
	return pgx.BeginFunc(ctx, s.Requests, func(tx pgx.Tx) error {
		b := &pgx.Batch{}
		b.Queue(scopeSQL, strconv.Itoa(int(domainID)))
		b.QueuedQueries = append(b.QueuedQueries, first.QueuedQueries...)
		if err := tx.SendBatch(ctx, b).Close(); err != nil {
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
// one batch. scan reads the statement's rows. Under a context of WithHead,
// the first Read also reads the branch's head in the same batch.
func (s *Store) Read(ctx context.Context, domainID int32, sql string, args []any, scan func(pgx.Rows) error) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN READ ONLY")
	b.Queue(scopeSQL, strconv.Itoa(int(domainID)))
	headRead := queueHead(ctx, b)
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		if err := scan(rows); err != nil {
			return err
		}
		return rows.Err()
	})
	b.Queue("COMMIT")
	conn, err := s.Requests.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	err = conn.SendBatch(ctx, b).Close()
	if err != nil {
		// A failed statement leaves the transaction aborted; end it so the
		// connection goes back to the pool clean.
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			conn.Conn().PgConn().Close(context.WithoutCancel(ctx)) //nolint:errcheck,gosec // connection is discarded
		}
		return err
	}
	headRead()
	return nil
}
