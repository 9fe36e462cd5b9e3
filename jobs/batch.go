package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/embed"
	"github.com/riverqueue/river"
)

// Config tunes the batch jobs (store.materialize, store.branch_delete).
type Config struct {
	// BatchTarget is how long a batch aims to hold the branch lock
	// (jobs.batch_target).
	BatchTarget time.Duration
	// BatchContended is the target once a commit waited for a batch
	// (jobs.batch_contended).
	BatchContended time.Duration
	// FirstBatchRows is the size of the first batch of a run.
	FirstBatchRows int
	// MinBatchRows and MaxBatchRows bound the adapted batch size.
	MinBatchRows, MaxBatchRows int
	// Slice bounds one run of a copy or delete job: past it, between two
	// batches, the job snoozes and runs again at once from its stored
	// progress. A live job thus never stays running longer than Slice and
	// a batch, so River's rescuer (RescueStuckAfter) finds only jobs whose
	// Keeper died. 0 is no bound.
	Slice time.Duration
	// RescueStuckAfter: a job running longer than this is presumed dead
	// and run again (River's RescueStuckJobsAfter; jobs.rescue_stuck_after).
	RescueStuckAfter time.Duration
	// Workers is how many jobs run at once (jobs.workers).
	Workers int
	// Embedders embed Records for semantic search (nil: the hash
	// embedder only).
	Embedders *embed.Set
	// Tune, when not nil, adjusts the River client's configuration before
	// the client is built (tests fetch jobs more often).
	Tune func(*river.Config)
}

// runTimeout is the timeout of one copy or delete run: three quarters of
// RescueStuckAfter (a run stops taking batches after Slice, a quarter), so
// River's rescuer, at RescueStuckAfter, finds only runs whose Keeper died.
// Without RescueStuckAfter, an hour.
func runTimeout(c Config) time.Duration {
	if c.RescueStuckAfter <= 0 {
		return time.Hour
	}
	return c.RescueStuckAfter * 3 / 4
}

// errSliceUsed ends a run whose Slice is used up; the worker snoozes the
// job so it runs again at once.
var errSliceUsed = errors.New("job run used its time slice")

// DefaultConfig is the configuration of DESIGN.md: batches aim at 200 ms,
// 50 ms once a commit waited.
func DefaultConfig() Config {
	return ConfigFrom(config.Default())
}

// ConfigFrom is the jobs' part of Keeper's configuration, with the batch
// sizes that are not configuration keys.
func ConfigFrom(c config.Config) Config {
	return Config{BatchTarget: c.Jobs.BatchTarget, BatchContended: c.Jobs.BatchContended,
		FirstBatchRows: 500, MinBatchRows: 50, MaxBatchRows: 50000,
		Slice: c.Jobs.RescueStuckAfter / 4, RescueStuckAfter: c.Jobs.RescueStuckAfter, Workers: c.Jobs.Workers}
}

func (c Config) withDefaults() Config {
	d := DefaultConfig()
	if c.BatchTarget <= 0 {
		c.BatchTarget = d.BatchTarget
	}
	if c.BatchContended <= 0 || c.BatchContended > c.BatchTarget {
		c.BatchContended = min(d.BatchContended, c.BatchTarget)
	}
	if c.MinBatchRows <= 0 {
		c.MinBatchRows = d.MinBatchRows
	}
	if c.MaxBatchRows < c.MinBatchRows {
		c.MaxBatchRows = max(d.MaxBatchRows, c.MinBatchRows)
	}
	if c.FirstBatchRows <= 0 {
		c.FirstBatchRows = d.FirstBatchRows
	}
	c.FirstBatchRows = min(max(c.FirstBatchRows, c.MinBatchRows), c.MaxBatchRows)
	return c
}

// BatchStats describes one committed batch of a job.
type BatchStats struct {
	// Batch counts the batches of the job, from 1 (across resumed runs).
	Batch int
	// Phase is the table the batch worked on.
	Phase string
	// Rows is the number of rows the batch read; Written those it wrote
	// (copied or deleted).
	Rows, Written int
	// Limit is the batch size asked for.
	Limit int
	// Held is how long the batch's transaction ran.
	Held time.Duration
	// Contended reports that a commit waited for the batch.
	Contended bool
}

// sizer adapts the batch size to the time a batch holds its lock.
type sizer struct {
	cfg       Config
	fixed     int
	rows      int
	contended bool
}

func newSizer(cfg Config, fixed, resume int) *sizer {
	s := &sizer{cfg: cfg, fixed: fixed, rows: cfg.FirstBatchRows}
	if resume > 0 {
		s.rows = min(max(resume, cfg.MinBatchRows), cfg.MaxBatchRows)
	}
	return s
}

func (s *sizer) limit() int {
	if s.fixed > 0 {
		return s.fixed
	}
	return s.rows
}

// observe adapts the size after a batch of rows that held the lock for
// held: towards the target time, at most doubling or halving at once.
func (s *sizer) observe(rows int, held time.Duration, contended bool) {
	if contended {
		s.contended = true
	}
	target := s.cfg.BatchTarget
	if s.contended {
		target = s.cfg.BatchContended
	}
	if rows < s.rows || held <= 0 {
		// A short batch (the end of a table) says little about the rate.
		if held > target {
			s.rows = max(s.rows/2, s.cfg.MinBatchRows)
		}
		return
	}
	next := int(float64(s.rows) * float64(target) / float64(held))
	next = min(max(next, s.rows/2), s.rows*2)
	s.rows = min(max(next, s.cfg.MinBatchRows), s.cfg.MaxBatchRows)
}

// commitWaitedSQL reports whether another session waits for a lock this
// transaction holds (a commit waiting for the branch lock).
const commitWaitedSQL = `SELECT EXISTS (SELECT 1 FROM pg_stat_activity WHERE pg_backend_pid() = ANY (pg_blocking_pids(pid)))`

// table is a Domain data table a batch job walks along its primary key:
// (domain_id, branch_id, cols...), the last of them seq (bigint) when seq.
type table struct {
	name string
	cols []string
	seq  bool
}

var (
	recordsTable     = table{name: "mat_records", cols: []string{"key"}}
	linksTable       = table{name: "mat_links", cols: []string{"from_key", "relation", "to_key"}}
	historyTable     = table{name: "mat_history", cols: []string{"key", "seq"}, seq: true}
	linkHistoryTable = table{name: "mat_link_history", cols: []string{"from_key", "relation", "to_key", "seq"}, seq: true}
	lexiconTable     = table{name: "mat_lexicon", cols: []string{"word"}}
	countsTable      = table{name: "mat_counts", cols: []string{"kind"}}
	countChangeTable = table{name: "mat_count_changes", cols: []string{"kind", "seq"}, seq: true}
	idempotencyTable = table{name: "idempotency_keys", cols: []string{"scope", "key"}}
	// vectorsTable is walked along mat_vectors_branch_idx.
	vectorsTable = table{name: "mat_vectors", cols: []string{"key", "spec", "seq"}, seq: true}
)

// cursor is a keyset position within a table: the primary key columns of
// the last row handled, the text columns in Keys and a trailing seq in Seq.
type cursor struct {
	Keys []string `json:"keys,omitempty"`
	Seq  *int64   `json:"seq,omitempty"`
}

func (c *cursor) started() bool { return c != nil && (len(c.Keys) > 0 || c.Seq != nil) }

// keysetSQL is the condition "after the cursor" on alias a, with the
// cursor's values as parameters from $first, and the arguments.
func (t table) keysetSQL(a string, c *cursor, first int) (string, []any) {
	if !c.started() {
		return "", nil
	}
	cols := make([]string, len(t.cols))
	params := make([]string, len(t.cols))
	args := make([]any, 0, len(t.cols))
	for i, col := range t.cols {
		cols[i] = a + "." + col
		params[i] = "$" + strconv.Itoa(first+i)
		if t.seq && i == len(t.cols)-1 {
			params[i] += "::bigint"
			args = append(args, *c.Seq)
		} else {
			params[i] += "::text"
			args = append(args, c.Keys[i])
		}
	}
	return fmt.Sprintf(" AND (%s) > (%s)", strings.Join(cols, ", "), strings.Join(params, ", ")), args
}

// orderSQL is the primary key order on alias a (desc for the last row).
func (t table) orderSQL(a string, desc bool) string {
	cols := make([]string, len(t.cols))
	for i, col := range t.cols {
		cols[i] = a + "." + col
		if desc {
			cols[i] += " DESC"
		}
	}
	return strings.Join(cols, ", ")
}

// scanCursor reads the primary key columns of a row into a cursor; ok is
// false when the row holds NULLs (no last row).
func (t table) scanCursor(vals []any) (*cursor, bool) {
	c := &cursor{}
	for i := range t.cols {
		if t.seq && i == len(t.cols)-1 {
			v, ok := vals[i].(*int64)
			if !ok || v == nil {
				return nil, false
			}
			s := *v
			c.Seq = &s
			continue
		}
		v, ok := vals[i].(*string)
		if !ok || v == nil {
			return nil, false
		}
		c.Keys = append(c.Keys, *v)
	}
	return c, true
}

// cursorDest are scan destinations for the primary key columns.
func (t table) cursorDest() []any {
	out := make([]any, len(t.cols))
	for i := range t.cols {
		if t.seq && i == len(t.cols)-1 {
			out[i] = new(*int64)
		} else {
			out[i] = new(*string)
		}
	}
	return out
}

// deref turns scanned **T destinations into *T values.
func deref(dest []any) []any {
	out := make([]any, len(dest))
	for i, d := range dest {
		switch p := d.(type) {
		case **string:
			out[i] = *p
		case **int64:
			out[i] = *p
		}
	}
	return out
}

// estimateRows is the planner's estimate of the rows a query reads (never
// a count over the Domain).
func estimateRows(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, sql string) (int64, error) {
	var plan []struct {
		Plan struct {
			Rows float64 `json:"Plan Rows"`
		} `json:"Plan"`
	}
	var raw []byte
	if err := q.QueryRow(ctx, "EXPLAIN (FORMAT JSON) "+sql).Scan(&raw); err != nil {
		return 0, fmt.Errorf("estimate rows: %w", err)
	}
	if err := json.Unmarshal(raw, &plan); err != nil || len(plan) == 0 {
		return 0, fmt.Errorf("estimate rows: unexpected plan %s", raw)
	}
	return int64(plan[0].Plan.Rows), nil
}

func lit(n int64) string { return strconv.FormatInt(n, 10) }
