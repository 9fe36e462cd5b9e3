package commit

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lorebase/lorebase/store"
)

// Read-ahead: PostgreSQL 15 reads the pages of an insert's index probes and
// of a key = ANY index scan one at a time in a backend, so a commit whose
// pages are not in shared buffers waits for each in turn. Before a
// statement reaches them, other connections of the request pool read the
// same pages (the Records by key, the objects primary key by hash), each a
// share of them, so the reads overlap and the commit's own statement finds
// them in shared buffers.
//
// A read-ahead is only a read: one READ ONLY transaction per connection, as
// lorebase_app scoped to the commit's Domain (row-level security and an
// explicit domain_id), holding only the AccessShareLock of a SELECT, which
// no commit's statement waits for. Its rows are counted and thrown away, so
// a commit writes exactly what it would write without it. It runs only for
// commits of Config.ReadAheadMinChanges changes or more and only on
// connections the pool has idle (or can open while leaving one free); it
// stops (pgx cancels its statement on the server) when the commit's context
// ends or the commit finishes.

// readAheadMarker starts the text of every read-ahead statement (tests and
// pg_stat_statements tell them apart by it).
const readAheadMarker = "/* lorebase read-ahead */ "

// Defaults of Config.ReadAheadConns and Config.ReadAheadMinChanges.
const (
	DefaultReadAheadConns      = 3
	DefaultReadAheadMinChanges = 500
)

// readAhead is one read-ahead in flight: a statement run in chunks on
// several connections.
type readAhead struct {
	cancel context.CancelFunc
	wg     sync.WaitGroup
	conns  int          // connections it runs on
	rows   atomic.Int64 // rows the statements found
	errs   atomic.Int64 // statements that failed or were stopped
}

// stop ends the read-ahead without waiting for it (nil: none).
func (r *readAhead) stop() {
	if r != nil {
		r.cancel()
	}
}

// wait waits for every connection of the read-ahead to finish.
func (r *readAhead) wait() {
	if r != nil {
		r.wg.Wait()
	}
}

// readAheadSQL counts the Records of the keys $1 on a branch, reading
// created_seq so the scan visits each Record's heap page as well as its
// primary-key leaf (the Records read needs both).
func readAheadRecordsSQL(domainID, branchID int32) string {
	return readAheadMarker + `SELECT count(created_seq) FROM mat_records
		WHERE domain_id = ` + ilit(domainID) + ` AND branch_id = ` + ilit(branchID) + ` AND key = ANY($1::text[])`
}

// readAheadObjectsSQL counts the objects of the hashes $1: the probe visits
// the primary-key leaf where each hash is or would go, which the objects
// insert then reads.
func readAheadObjectsSQL(domainID int32) string {
	return readAheadMarker + `SELECT count(*) FROM objects WHERE domain_id = ` + ilit(domainID) + ` AND hash = ANY($1::bytea[])`
}

// startReadAhead runs sql over items on up to p.cfg.ReadAheadConns pooled
// connections: the items are cut into one more chunk than connections and
// the first chunk is left to the commit's own statement, which starts on it
// while the others read the rest. It returns nil when it does not run: too
// few items, read-ahead off, or no connection to spare.
func startReadAhead[T any](ctx context.Context, p *Pipeline, domainID int32, sql string, items []T) *readAhead {
	n := p.cfg.ReadAheadConns
	if n <= 0 || len(items) < p.cfg.ReadAheadMinChanges || len(items) < n+1 {
		return nil
	}
	pool := p.store.Requests
	idle, extra := spareConns(ctx, pool, n)
	if len(idle)+extra == 0 {
		return nil
	}
	rctx, cancel := context.WithCancel(ctx)
	r := &readAhead{cancel: cancel, conns: len(idle) + extra}
	parts := r.conns + 1
	for i := range r.conns {
		lo, hi := (i+1)*len(items)/parts, (i+2)*len(items)/parts
		var c *pgxpool.Conn
		if i < len(idle) {
			c = idle[i]
		}
		r.wg.Add(1)
		go r.run(rctx, pool, c, domainID, sql, items[lo:hi])
	}
	if p.readAheadStarted != nil {
		p.readAheadStarted(r)
	}
	return r
}

// run reads one chunk on c, or on a new connection of the pool when c is
// nil.
func (r *readAhead) run(ctx context.Context, pool *pgxpool.Pool, c *pgxpool.Conn, domainID int32, sql string, chunk any) {
	defer r.wg.Done()
	if c == nil {
		var err error
		if c, err = pool.Acquire(ctx); err != nil {
			r.errs.Add(1)
			return
		}
	}
	defer c.Release()
	var found int64
	err := store.ReadOn(ctx, c, domainID, sql, []any{chunk}, func(rows pgx.Rows) error {
		for rows.Next() {
			if err := rows.Scan(&found); err != nil {
				return fmt.Errorf("read ahead: %w", err)
			}
		}
		return nil
	})
	if err != nil {
		// A stopped statement's connection is closed, and pgx sends the
		// server a cancel request for it.
		r.errs.Add(1)
		return
	}
	r.rows.Add(found)
}

// spareConns takes up to n connections of the pool that no one waits for:
// those idle now, and says how many more the pool may open while keeping
// at least one free slot beyond them. A pool with nothing idle and no room
// gives none.
func spareConns(ctx context.Context, pool *pgxpool.Pool, n int) ([]*pgxpool.Conn, int) {
	idle := pool.AcquireAllIdle(ctx)
	if len(idle) > n {
		for _, c := range idle[n:] {
			c.Release()
		}
		idle = idle[:n]
	}
	st := pool.Stat()
	room := int(st.MaxConns()-st.TotalConns()) - 1
	return idle, max(0, min(n-len(idle), room))
}

// changedKeys lists the keys the Records read of a commit reads (the keys
// of its puts, patches and deletes, and the ends of its links and
// unlinks), once each and in order, as the read's index scan visits them.
func changedKeys(changes []*change) []string {
	set := make(map[string]struct{}, len(changes))
	for _, c := range changes {
		switch c.op {
		case opPut, opPatch, opDelete:
			set[c.key] = struct{}{}
		case opLink, opUnlink:
			set[c.from] = struct{}{}
			set[c.to] = struct{}{}
		}
	}
	return setList(set)
}
