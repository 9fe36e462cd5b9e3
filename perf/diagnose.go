package perf

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lorebase/lorebase/internal/storagecli"
)

// Explain is EXPLAIN (ANALYZE, BUFFERS) of one call of a read's SQL
// function as lorebase_app: the slowest of a few calls on fresh keys
// (cold), then the same call again (warm), on a connection whose first
// call (another key) is left out.
type Explain struct {
	Name string `json:"name"`
	// Why says why the read was explained (its p95 over budget, or all).
	Why  string `json:"why"`
	SQL  string `json:"sql"`
	Args string `json:"args"`
	// Samples is the number of calls explained to pick the slowest.
	Samples int       `json:"samples"`
	Cold    *PlanCall `json:"cold,omitempty"`
	Warm    *PlanCall `json:"warm,omitempty"`
	// NestedSkipped says why the plans of the statements inside the
	// function were not captured (auto_explain could not be loaded).
	NestedSkipped string `json:"nested_skipped,omitempty"`
	Error         string `json:"error,omitempty"`
}

// PlanCall is one explained call.
type PlanCall struct {
	Planning  time.Duration `json:"planning_ns"`
	Execution time.Duration `json:"execution_ns"`
	// SharedHit and SharedRead are the shared buffer blocks found in the
	// cache and read from the kernel (the statements inside the function
	// included).
	SharedHit  int64 `json:"shared_hit_blocks"`
	SharedRead int64 `json:"shared_read_blocks"`
	// Plan is the top of the plan, one node a line.
	Plan []string `json:"plan"`
	// Nested are the slowest statements run inside the function, each
	// with its plan (auto_explain, log_nested_statements).
	Nested []NestedPlan `json:"nested,omitempty"`
}

// NestedPlan is the plan auto_explain logged for a statement run inside a
// read's function.
type NestedPlan struct {
	Duration time.Duration `json:"duration_ns"`
	Text     string        `json:"text"`
}

// Explain limits.
const (
	explainPlanLines   = 14
	explainNested      = 3
	explainNestedLines = 30
	explainNotices     = 500
)

// ExplainRead explains op (which must have Explain) as lorebase_app on a
// connection of its own: samples calls on keys the op draws next, then
// the slowest of them again. The connection loads auto_explain (it needs a
// superuser; without it only the function's top plan is shown).
func (w *Workload) ExplainRead(ctx context.Context, op Op, why string, samples int) *Explain {
	ex := &Explain{Name: op.Name, Why: why, Samples: max(samples, 1)}
	if op.Explain == nil {
		ex.Error = "the read has no SQL to explain"
		return ex
	}
	var mu sync.Mutex
	var notices []string
	cfg := w.Store.Pool.Config().ConnConfig.Copy()
	cfg.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		defer mu.Unlock()
		if len(notices) < explainNotices && strings.HasPrefix(n.Message, "duration:") {
			notices = append(notices, n.Message)
		}
	}
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		ex.Error = fmt.Sprintf("connect: %v", err)
		return ex
	}
	defer conn.Close(context.WithoutCancel(ctx)) //nolint:errcheck // closing a read-only connection
	nested := true
	for _, q := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`, `SET auto_explain.log_analyze = on`,
		`SET auto_explain.log_buffers = on`, `SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_level = notice`,
		`SET auto_explain.log_format = text`} {
		if _, err := conn.Exec(ctx, q); err != nil {
			ex.NestedSkipped = fmt.Sprintf("%s: %v", q, err)
			nested = false
			break
		}
	}
	take := func() []NestedPlan {
		mu.Lock()
		defer mu.Unlock()
		out := nestedPlans(notices)
		notices = notices[:0]
		return out
	}
	// The connection's first call fills its catalog and plan caches: it is
	// made on a key of its own and left out.
	q, args := op.Explain()
	if _, err := w.explainOnce(ctx, conn, q, args); err != nil {
		ex.Error = err.Error()
		return ex
	}
	take()
	var best *PlanCall
	var bestSQL string
	var bestArgs []any
	for range ex.Samples {
		q, args := op.Explain()
		pc, err := w.explainOnce(ctx, conn, q, args)
		if err != nil {
			ex.Error = err.Error()
			return ex
		}
		if nested {
			pc.Nested = take()
		}
		if best == nil || pc.Execution > best.Execution {
			best, bestSQL, bestArgs = pc, q, args
		}
	}
	ex.Cold, ex.SQL, ex.Args = best, bestSQL, fmt.Sprintf("%v", bestArgs)
	warm, err := w.explainOnce(ctx, conn, bestSQL, bestArgs)
	if err != nil {
		ex.Error = err.Error()
		return ex
	}
	if nested {
		warm.Nested = take()
	}
	ex.Warm = warm
	return ex
}

// explainOnce runs EXPLAIN (ANALYZE, BUFFERS) of q in a read-only
// transaction scoped to the Domain as lorebase_app, and rolls it back.
func (w *Workload) explainOnce(ctx context.Context, conn *pgx.Conn, q string, args []any) (*PlanCall, error) {
	tx, err := conn.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("begin: %w", err)
	}
	defer tx.Rollback(context.WithoutCancel(ctx)) //nolint:errcheck // read-only, rolled back
	if _, err := tx.Exec(ctx, `SELECT set_config('lorebase.domain_id', $1, true)`, strconv.Itoa(int(w.DomainID))); err != nil {
		return nil, fmt.Errorf("scope the transaction: %w", err)
	}
	if _, err := tx.Exec(ctx, `SET LOCAL ROLE lorebase_app`); err != nil {
		return nil, fmt.Errorf("set role lorebase_app: %w", err)
	}
	var raw []byte
	if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+q, args...).Scan(&raw); err != nil {
		return nil, fmt.Errorf("explain %s: %w", q, err)
	}
	return parsePlan(raw)
}

// planNode is a node of EXPLAIN's JSON.
type planNode struct {
	NodeType   string     `json:"Node Type"`
	Relation   string     `json:"Relation Name"`
	Index      string     `json:"Index Name"`
	Function   string     `json:"Function Name"`
	TotalTime  float64    `json:"Actual Total Time"`
	Rows       float64    `json:"Actual Rows"`
	Loops      float64    `json:"Actual Loops"`
	SharedHit  int64      `json:"Shared Hit Blocks"`
	SharedRead int64      `json:"Shared Read Blocks"`
	Plans      []planNode `json:"Plans"`
}

// parsePlan reads EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON).
func parsePlan(raw []byte) (*PlanCall, error) {
	var doc []struct {
		Plan      planNode `json:"Plan"`
		Planning  float64  `json:"Planning Time"`
		Execution float64  `json:"Execution Time"`
	}
	if err := json.Unmarshal(raw, &doc); err != nil || len(doc) == 0 {
		return nil, fmt.Errorf("read the plan: %w", errors.Join(err, errors.New("no plan")))
	}
	d := doc[0]
	pc := &PlanCall{Planning: msDuration(d.Planning), Execution: msDuration(d.Execution),
		SharedHit: d.Plan.SharedHit, SharedRead: d.Plan.SharedRead}
	var walk func(n planNode, depth int)
	walk = func(n planNode, depth int) {
		if len(pc.Plan) >= explainPlanLines {
			return
		}
		name := n.NodeType
		for _, s := range []struct{ pre, v string }{{" on ", n.Relation}, {" using ", n.Index}, {" of ", n.Function}} {
			if s.v != "" {
				name += s.pre + s.v
			}
		}
		pc.Plan = append(pc.Plan, fmt.Sprintf("%s%s: %.2f ms, %.0f rows × %.0f loops, hit %d, read %d",
			strings.Repeat("  ", depth), name, n.TotalTime, n.Rows, n.Loops, n.SharedHit, n.SharedRead))
		for _, c := range n.Plans {
			walk(c, depth+1)
		}
	}
	walk(d.Plan, 0)
	return pc, nil
}

func msDuration(x float64) time.Duration { return time.Duration(x * float64(time.Millisecond)) }

var noticeDuration = regexp.MustCompile(`^duration: ([0-9.]+) ms`)

// nestedPlans keeps the slowest plans auto_explain sent of statements
// inside the function (the EXPLAIN statement itself left out), each cut to
// its first lines.
func nestedPlans(notices []string) []NestedPlan {
	var out []NestedPlan
	for _, n := range notices {
		if strings.Contains(n, "EXPLAIN (ANALYZE, BUFFERS") {
			continue
		}
		m := noticeDuration.FindStringSubmatch(n)
		if m == nil {
			continue
		}
		d, _ := strconv.ParseFloat(m[1], 64)
		lines := strings.Split(strings.TrimSpace(n), "\n")
		if len(lines) > explainNestedLines {
			lines = append(lines[:explainNestedLines], fmt.Sprintf("… %d more lines", len(lines)-explainNestedLines))
		}
		out = append(out, NestedPlan{Duration: msDuration(d), Text: strings.Join(lines, "\n")})
	}
	slices.SortStableFunc(out, func(a, b NestedPlan) int { return cmp.Compare(b.Duration, a.Duration) })
	return out[:min(len(out), explainNested)]
}

// Residency is what shared buffers hold at one moment (pg_buffercache).
type Residency struct {
	Label string    `json:"label"`
	At    time.Time `json:"at"`
	// SharedBuffers, Used and Database are bytes: all of shared buffers,
	// those holding a page, those holding a page of the measured database.
	SharedBuffers int64 `json:"shared_buffers"`
	Used          int64 `json:"used"`
	Database      int64 `json:"database"`
	// Took is how long reading pg_buffercache took.
	Took time.Duration       `json:"took_ns"`
	Top  []RelationResidency `json:"top"`
}

// RelationResidency is one relation's pages in shared buffers.
type RelationResidency struct {
	Relation string `json:"relation"`
	// Kind is pg_class.relkind (r table, i index, t TOAST, ...).
	Kind   string `json:"kind"`
	Cached int64  `json:"cached"` // bytes in shared buffers (main fork)
	Size   int64  `json:"size"`   // bytes of the main fork
}

// Fraction is the part of the relation in shared buffers (0 when empty).
func (r RelationResidency) Fraction() float64 {
	if r.Size <= 0 {
		return 0
	}
	return float64(r.Cached) / float64(r.Size)
}

// EnableBuffercache creates pg_buffercache in the measured database; the
// error says why it is absent (not installed, or not allowed).
func (w *Workload) EnableBuffercache(ctx context.Context) error {
	if _, err := w.Store.Pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_buffercache`); err != nil {
		return fmt.Errorf("create extension pg_buffercache: %w", err)
	}
	return nil
}

// ReadResidency reads pg_buffercache: the totals and the top relations of
// the measured database by the bytes of their main fork in shared buffers.
func (w *Workload) ReadResidency(ctx context.Context, label string, top int) (*Residency, error) {
	start := time.Now()
	r := &Residency{Label: label, At: start}
	err := w.Store.Pool.QueryRow(ctx, `SELECT count(*) * bs, count(b.relfilenode) * bs,
			count(*) FILTER (WHERE b.reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database())) * bs
		FROM pg_buffercache b, (SELECT current_setting('block_size')::bigint AS bs) s GROUP BY bs`).
		Scan(&r.SharedBuffers, &r.Used, &r.Database)
	if err != nil {
		return nil, fmt.Errorf("read pg_buffercache totals: %w", err)
	}
	rows, err := w.Store.Pool.Query(ctx, `WITH b AS (
			SELECT relfilenode, count(*) AS buffers FROM pg_buffercache
			WHERE reldatabase = (SELECT oid FROM pg_database WHERE datname = current_database()) AND relforknumber = 0
			GROUP BY relfilenode)
		SELECT c.relname::text, c.relkind::text, b.buffers * current_setting('block_size')::bigint, pg_relation_size(c.oid)
		FROM b JOIN pg_class c ON pg_relation_filenode(c.oid) = b.relfilenode
		ORDER BY b.buffers DESC, c.relname LIMIT $1`, top)
	if err != nil {
		return nil, fmt.Errorf("read pg_buffercache: %w", err)
	}
	r.Top, err = pgx.CollectRows(rows, func(row pgx.CollectableRow) (RelationResidency, error) {
		var x RelationResidency
		err := row.Scan(&x.Relation, &x.Kind, &x.Cached, &x.Size)
		return x, err
	})
	if err != nil {
		return nil, fmt.Errorf("read pg_buffercache: %w", err)
	}
	r.Took = time.Since(start)
	return r, nil
}

// PrewarmRun is storage prewarm run before the reads.
type PrewarmRun struct {
	Took   time.Duration             `json:"took_ns"`
	Result *storagecli.PrewarmResult `json:"result,omitempty"`
	Error  string                    `json:"error,omitempty"`
}

// Prewarm runs storage prewarm (storagecli.Prewarm, its default budget)
// for the workload's Domain on an owner connection.
func (w *Workload) Prewarm(ctx context.Context) *PrewarmRun {
	pr := &PrewarmRun{}
	conn, err := w.Store.Pool.Acquire(ctx)
	if err != nil {
		pr.Error = fmt.Sprintf("acquire connection: %v", err)
		return pr
	}
	defer conn.Release()
	start := time.Now()
	pr.Result, err = storagecli.Prewarm(ctx, conn.Conn(), w.DomainName, 0, nil)
	pr.Took = time.Since(start)
	if err != nil {
		pr.Error = err.Error()
	}
	return pr
}
