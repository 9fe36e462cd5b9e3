package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// Warmer keeps the primary keys a commit writes a leaf of per change in
// shared buffers: the Records' (the commit reads each changed Record by
// it), the objects' (by content hash) and the history's (by key). Their
// keys are spread over the whole index, so a leaf evicted by other reads
// (a large Domain's search postings) is a page read per change: at 10M
// Records, after search reads had evicted them, a commit of 1,000 changes
// measured 206 to 333 ms p50 without a Warmer and 116 to 160 with one
// (docs/performance.md, "The write path's primary keys kept in shared
// buffers").
//
// Each pass asks pg_prewarm for every block of those indexes in every
// partition, within a quarter of shared_buffers (WarmFraction): a block in
// shared buffers is only pinned, which raises its usage count so the
// buffer manager's clock sweep passes it over; an evicted one is read back.
// It runs as the owner, at start and every jobs.keep_warm_interval. Without
// the pg_prewarm extension (not a trusted one: CREATE EXTENSION pg_prewarm
// as a superuser, or run storage prewarm once) a pass does nothing and says
// so.
type Warmer struct {
	Store *store.Store
	Log   *slog.Logger
	// Fraction of shared_buffers the indexes may take; 0 is WarmFraction.
	Fraction float64
	// passed, when set (tests), is called after every pass of Run.
	passed func()
	// chunk is the most blocks one statement asks for; 0 is warmChunk.
	chunk int64
}

// warmChunk is the most blocks one pg_prewarm call of a pass asks for (64
// MB of 8 kB blocks): each call holds its index's AccessShareLock, which a
// DROP or ALTER of the table waits for (and every query queued behind that),
// so no call reads a whole large index from disk at once.
const warmChunk = 8192

// WarmFraction is the share of shared_buffers the write path's primary
// keys may take: past it the rest are left out, in the order Records,
// objects, history.
const WarmFraction = 0.25

// WarmIndex is one index of a pass.
type WarmIndex struct {
	Name   string
	Blocks int64 // its size in blocks when listed
	Loaded int64 // blocks pg_prewarm pinned or read
}

// WarmResult is what one pass did.
type WarmResult struct {
	// Missing tells that pg_prewarm is not installed: nothing was done.
	Missing bool
	// Budget is the most blocks the pass may touch.
	Budget  int64
	Warmed  []WarmIndex
	Skipped []string // indexes left out: past the budget
}

// warmIndexesSQL lists the primary keys of the partitions of the tables a
// commit writes a leaf of per change, the Records' first, with their
// sizes in blocks.
const warmIndexesSQL = `SELECT c.oid, c.relname::text, pg_relation_size(c.oid) / current_setting('block_size')::bigint
	FROM unnest(ARRAY['mat_records', 'objects', 'mat_history']) WITH ORDINALITY AS t(name, ord)
	JOIN pg_inherits i ON i.inhparent = to_regclass(t.name)
	JOIN pg_index x ON x.indrelid = i.inhrelid AND x.indisprimary
	JOIN pg_class c ON c.oid = x.indexrelid
	ORDER BY t.ord, c.relname`

// warmSQL asks pg_prewarm for the blocks $2 to $2 + $3 - 1 of an index, no
// further than its size now (it may have shrunk or been dropped since it
// was listed).
const warmSQL = `SELECT CASE WHEN n > $2 THEN pg_prewarm($1::oid::regclass, 'buffer', 'main', $2, least($2 + $3 - 1, n - 1)) ELSE 0 END
	FROM (SELECT coalesce(pg_relation_size($1::oid::regclass), 0) / current_setting('block_size')::bigint AS n) s`

// Warm runs one pass.
func (w *Warmer) Warm(ctx context.Context) (*WarmResult, error) {
	res := &WarmResult{}
	var installed bool
	var sharedBlocks int64
	if err := w.Store.Pool.QueryRow(ctx, `SELECT EXISTS (SELECT FROM pg_extension WHERE extname = 'pg_prewarm'),
			pg_size_bytes(current_setting('shared_buffers')) / current_setting('block_size')::bigint`).
		Scan(&installed, &sharedBlocks); err != nil {
		return nil, fmt.Errorf("look for pg_prewarm: %w", err)
	}
	if !installed {
		res.Missing = true
		return res, nil
	}
	frac := w.Fraction
	if frac <= 0 {
		frac = WarmFraction
	}
	res.Budget = int64(float64(sharedBlocks) * frac)
	rows, err := w.Store.Pool.Query(ctx, warmIndexesSQL)
	if err != nil {
		return nil, fmt.Errorf("list the write path's primary keys: %w", err)
	}
	type index struct {
		OID    uint32
		Name   string
		Blocks int64
	}
	list, err := pgx.CollectRows(rows, pgx.RowToStructByPos[index])
	if err != nil {
		return nil, fmt.Errorf("list the write path's primary keys: %w", err)
	}
	chunk := w.chunk
	if chunk <= 0 {
		chunk = warmChunk
	}
	var used int64
	for i, ix := range list {
		if used+ix.Blocks > res.Budget {
			for _, rest := range list[i:] {
				res.Skipped = append(res.Skipped, rest.Name)
			}
			break
		}
		var loaded int64
		for first := int64(0); first < ix.Blocks; first += chunk {
			var n int64
			if err := w.Store.Pool.QueryRow(ctx, warmSQL, ix.OID, first, chunk).Scan(&n); err != nil {
				return res, fmt.Errorf("warm %s: %w", ix.Name, err)
			}
			loaded += n
		}
		used += ix.Blocks
		res.Warmed = append(res.Warmed, WarmIndex{Name: ix.Name, Blocks: ix.Blocks, Loaded: loaded})
	}
	return res, nil
}

// Run warms at once and then every interval until ctx ends. Errors are
// logged and the next pass tries again; a missing pg_prewarm is logged
// once.
func (w *Warmer) Run(ctx context.Context, interval time.Duration) {
	toldMissing, toldSkipped := false, false
	every(ctx, interval, func() {
		res, err := w.Warm(ctx)
		switch {
		case err != nil:
			if ctx.Err() == nil && w.Log != nil {
				w.Log.Warn("keeping the write path's primary keys warm failed; retrying at the next pass", "err", err)
			}
		case res.Missing:
			if !toldMissing && w.Log != nil {
				w.Log.Info("the write path's primary keys are not kept in shared buffers: the pg_prewarm extension is not installed (CREATE EXTENSION pg_prewarm as a superuser, or run storage prewarm once)")
			}
			toldMissing = true
		case len(res.Skipped) > 0:
			if !toldSkipped && w.Log != nil {
				w.Log.Info("some of the write path's primary keys are past the Warmer's share of shared_buffers and are not kept warm",
					"skipped", res.Skipped, "budget_blocks", res.Budget)
			}
			toldSkipped = true
		}
		if w.passed != nil {
			w.passed()
		}
	})
}
