package perf

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// Workload builds the operations of a run over a loaded supply Domain.
type Workload struct {
	Store    *store.Store
	Reader   *reads.Reader
	Pipeline *commit.Pipeline
	Gen      *supply.Generator
	// DomainName is the Domain's name, DomainID its id.
	DomainName string
	DomainID   int32
	BranchID   int32
	// Seed draws the keys and queries (the dataset's seed is Gen's).
	Seed uint64
	// Calls is how many keys and queries each operation cycles through
	// (warm-up plus timed calls is enough for every call to differ).
	Calls int
}

// NewWorkload resolves the Domain DomainName and its main in a loaded store.
func NewWorkload(ctx context.Context, s *store.Store, gen *supply.Generator, seed uint64, calls int) (*Workload, error) {
	return NewWorkloadIn(ctx, s, DomainName, gen, seed, calls)
}

// NewWorkloadIn resolves a Domain holding the dataset of gen and its main.
func NewWorkloadIn(ctx context.Context, s *store.Store, domain string, gen *supply.Generator, seed uint64, calls int) (*Workload, error) {
	d, err := s.DomainByName(ctx, domain)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	branchID, err := branchIDOf(ctx, s, d.ID, Branch)
	if err != nil {
		return nil, fmt.Errorf("workload: %w", err)
	}
	return &Workload{Store: s, Reader: reads.New(s, reads.Config{}), Pipeline: commit.New(s, commit.Config{}),
		Gen: gen, DomainName: domain, DomainID: d.ID, BranchID: branchID, Seed: seed, Calls: max(calls, 1)}, nil
}

// BuildIndexes builds the per-Attribute indexes of main's schema, as the
// store.index jobs would (idempotent: existing indexes are kept; on a seed
// loaded with them, BuildSchemaIndexes, every one is ready and nothing is
// rewritten), then runs ANALYZE.
func (w *Workload) BuildIndexes(ctx context.Context) (time.Duration, error) {
	start := time.Now()
	if err := BuildSchemaIndexes(ctx, w.Store, w.DomainID, w.BranchID); err != nil {
		return 0, err
	}
	if _, err := w.Store.Pool.Exec(ctx, "ANALYZE", pgx.QueryExecModeSimpleProtocol); err != nil {
		return 0, fmt.Errorf("build indexes: analyze: %w", err)
	}
	return time.Since(start), nil
}

// BuildSchemaIndexes records every per-Attribute index of the branch's
// schema (jobs.RecordIndexes, as a schema change does) and builds them one
// after the other with jobs.BuildIndex: the first build of a Kind writes
// the values of all its indexes into ivals in one pass, the others find
// nothing stale, and on an empty branch each is instant. The load calls it
// before its first batch, so its commits write ivals as they go.
func BuildSchemaIndexes(ctx context.Context, s *store.Store, domainID, branchID int32) error {
	var compiled []byte
	err := s.Pool.QueryRow(ctx, `SELECT compiled FROM schemas WHERE domain_id = $1 AND branch_id = $2`,
		domainID, branchID).Scan(&compiled)
	if err != nil {
		return fmt.Errorf("build indexes: read schema: %w", err)
	}
	var sc schema.Schema
	if err := json.Unmarshal(compiled, &sc); err != nil {
		return fmt.Errorf("build indexes: decode schema: %w", err)
	}
	builds := jobs.IndexBuildsForSchema(nil, &sc)
	if err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		return jobs.RecordIndexes(ctx, tx, domainID, branchID, builds)
	}); err != nil {
		return fmt.Errorf("build indexes: %w", err)
	}
	for _, a := range builds {
		a.DomainID, a.BranchID = domainID, branchID
		if err := jobs.BuildIndex(ctx, s, a); err != nil {
			return fmt.Errorf("build indexes: %s.%s: %w", a.KindName, a.Attribute, err)
		}
	}
	return nil
}

// cycle hands out the items of a list in turn.
type cycle[T any] struct {
	items []T
	next  int
}

func (c *cycle[T]) take() T {
	v := c.items[c.next%len(c.items)]
	c.next++
	return v
}

func (w *Workload) rand(stream uint64) *rand.Rand { return rand.New(rand.NewPCG(w.Seed, stream)) }

type kindKey struct{ kind, key string }

// keys draws random Records, every Record equally likely.
func (w *Workload) keys(stream uint64) *cycle[kindKey] {
	r := w.rand(stream)
	out := make([]kindKey, w.Calls)
	for i := range out {
		out[i] = w.randomKey(r)
	}
	return &cycle[kindKey]{items: out}
}

// randomKey draws a Record, every Record equally likely.
func (w *Workload) randomKey(r *rand.Rand) kindKey {
	c := w.Gen.Counts()
	n := r.IntN(c.Records())
	for _, k := range allKinds {
		if n < c.Of(k) {
			return kindKey{k, w.Gen.Key(k, n)}
		}
		n -= c.Of(k)
	}
	return kindKey{}
}

// ownerRead runs one read function as the owner: the Domain is set in the
// transaction (the functions read it from there) and the role stays the
// owner, so row-level security does not apply. One round trip, like
// store.Read.
func (w *Workload) ownerRead(ctx context.Context, sql string, args ...any) error {
	b := &pgx.Batch{}
	b.Queue("BEGIN READ ONLY")
	b.Queue(`SELECT set_config('lorebase.domain_id', $1, true)`, strconv.Itoa(int(w.DomainID)))
	b.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
		}
		return rows.Err()
	})
	b.Queue("COMMIT")
	conn, err := w.Store.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()
	if err := conn.SendBatch(ctx, b).Close(); err != nil {
		if _, rerr := conn.Exec(context.WithoutCancel(ctx), "ROLLBACK"); rerr != nil {
			conn.Conn().PgConn().Close(context.WithoutCancel(ctx)) //nolint:errcheck,gosec // connection is discarded
		}
		return err
	}
	return nil
}

// Floor is the bare primary-key SELECT on mat_records: as the owner one
// statement on the pool, as lorebase_app through store.Read (BEGIN READ
// ONLY, the scope, the SELECT and COMMIT in one round trip).
func (w *Workload) Floor() Op {
	const q = `SELECT key FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = $3`
	keys := w.keys(1)
	return Op{
		Name: "floor: primary-key SELECT",
		Owner: func(ctx context.Context) error {
			var k string
			return w.Store.Pool.QueryRow(ctx, q, w.DomainID, w.BranchID, keys.take().key).Scan(&k)
		},
		RLS: func(ctx context.Context) error {
			found := false
			err := w.Store.Read(ctx, w.DomainID, q, []any{w.DomainID, w.BranchID, keys.take().key}, func(rows pgx.Rows) error {
				for rows.Next() {
					found = true
				}
				return nil
			})
			if err == nil && !found {
				err = store.ErrNotFound
			}
			return err
		},
	}
}

// ReadNames are the reads of design section 6, in report order. Every one
// is wired in Reads; a read added to package reads gets a line here and a
// case there.
var readNames = []string{
	"get by key", "list page of 50", "links of a record", "2-hop neighborhood", "query by indexed attribute",
	"full-text search", "typo-tolerant full-text search", "partial-match full-text search", "entity resolution",
	"record history page", "record lineage",
}

// PendingReads names reads of design section 6 that are not measured yet
// (none: every read of package reads is wired). A read listed here shows
// in the report as not measured.
var pendingReads = []string{}

// ReadNames returns the reads a run measures, in report order.
func ReadNames() []string { return append([]string(nil), readNames...) }

// PendingReads returns the reads not measured yet.
func PendingReads() []string { return append([]string(nil), pendingReads...) }

// Reads returns the read operations of design section 6 with their p95
// budgets: lorebase_app through package reads (what Keeper serves), the
// owner through the same SQL functions without the role switch.
func (w *Workload) Reads() []Op { return w.ReadsOn(Branch) }

// ReadsOn returns the read operations on a branch. Two calls draw the same
// keys and queries in the same order, so the operations of two branches
// can be run call by call on the same inputs.
func (w *Workload) ReadsOn(br string) []Op {
	draws := w.readDraws(br)
	ops := make([]Op, 0, len(draws))
	for _, d := range draws {
		draw := d.draw
		answer := func(ctx context.Context) (any, error) { return draw().call(ctx) }
		ops = append(ops, Op{Name: d.name, Target: d.target, Answer: answer,
			RLS: func(ctx context.Context) error {
				_, err := answer(ctx)
				return err
			},
			// The owner runs the read's SQL function, the same SQL EXPLAIN sees.
			Owner: func(ctx context.Context) error {
				c := draw()
				return w.ownerRead(ctx, c.sql, c.args...)
			},
			Explain: func() (string, []any) {
				c := draw()
				return c.sql, c.args
			}})
	}
	return ops
}

// readCall is one call of a read on drawn inputs in its three forms: the
// read's SQL function (what the owner runs and EXPLAIN sees), the call
// through package reads (what Keeper serves) and the path of the HTTP GET
// under the branch (what an agent sends Keeper).
type readCall struct {
	sql  string
	args []any
	// path builds the HTTP path only when asked, so the in-process calls
	// do not time its encoding.
	path func() string
	call func(ctx context.Context) (any, error)
}

// readDraw is a read of design section 6 with its p95 budget; each draw
// takes the next inputs of the read's own streams.
type readDraw struct {
	name   string
	target time.Duration
	draw   func() readCall
}

// readDraws returns the reads of readNames on a branch, in report order.
// Two calls draw the same inputs in the same order.
func (w *Workload) readDraws(br string) []readDraw {
	def := reads.DefaultConfig()
	pageKinds := w.keys(2)
	queryWords := &cycle[string]{items: supply.Words(w.Seed, w.Calls)}
	typos := supply.Typos(w.Seed+1, w.Calls)
	misspelled := make([]string, len(typos))
	for i, t := range typos {
		misspelled[i] = t.Misspelled
	}
	typoWords := &cycle[string]{items: misspelled}
	phrases := &cycle[string]{items: supply.Queries(w.Seed+2, w.Calls)}
	suppliers := w.supplierKeys(3)
	mentions := w.mentions(4)
	record := func(key string) string { return "/records/" + url.PathEscape(key) }

	out := make([]readDraw, 0, len(readNames))
	for i, name := range readNames {
		keys := w.keys(uint64(10 + i))
		var draw func() readCall
		var target time.Duration
		switch name {
		case "get by key":
			target = 5 * time.Millisecond
			draw = func() readCall {
				k := keys.take().key
				return readCall{sql: `SELECT * FROM lb_get($1, $2, NULL)`, args: []any{br, k}, path: func() string { return record(k) },
					call: func(ctx context.Context) (any, error) { return w.Reader.Get(ctx, w.DomainID, br, k, "") }}
			}
		case "list page of 50":
			target = 20 * time.Millisecond
			draw = func() readCall {
				k := pageKinds.take()
				return readCall{sql: `SELECT * FROM lb_page($1, $2, $3, $4, NULL)`, args: []any{br, k.kind, k.key, 51},
					path: func() string {
						return "/records?" + url.Values{"kind": {k.kind}, "after": {k.key}, "limit": {"50"}}.Encode()
					},
					call: func(ctx context.Context) (any, error) {
						return w.Reader.Page(ctx, w.DomainID, br, reads.PageQuery{Kind: k.kind, After: k.key, Limit: 50})
					}}
			}
		case "links of a record":
			target = 10 * time.Millisecond
			draw = func() readCall {
				k := keys.take().key
				return readCall{sql: `SELECT * FROM lb_links($1, $2, $3, $4, NULL)`, args: []any{br, k, "both", ""},
					path: func() string { return record(k) + "/links?direction=both" },
					call: func(ctx context.Context) (any, error) {
						return w.Reader.Links(ctx, w.DomainID, br, k, reads.LinksQuery{Direction: "both"})
					}}
			}
		case "2-hop neighborhood":
			target = 30 * time.Millisecond
			draw = func() readCall {
				k := keys.take().key
				return readCall{sql: `SELECT * FROM lb_neighborhood($1, $2, $3, $4, $5)`, args: []any{br, k, 2, 200, def.NeighborhoodFanout},
					path: func() string { return record(k) + "/neighborhood?depth=2&limit=200" },
					call: func(ctx context.Context) (any, error) { return w.Reader.Neighborhood(ctx, w.DomainID, br, k, 2, 200) }}
			}
		case "query by indexed attribute":
			// The purchase orders of a Supplier: PurchaseOrder.supplier is indexed.
			target = 25 * time.Millisecond
			draw = func() readCall {
				s := suppliers.take()
				return readCall{sql: `SELECT * FROM lb_query_by_attribute($1, $2, $3, $4, $5, $6)`,
					args: []any{br, supply.KindPurchaseOrder, "supplier", s, "", 51},
					path: func() string {
						return "/records?" + url.Values{"kind": {supply.KindPurchaseOrder}, "attribute": {"supplier"}, "value": {s}, "limit": {"50"}}.Encode()
					},
					call: func(ctx context.Context) (any, error) {
						return w.Reader.QueryByAttribute(ctx, w.DomainID, br, reads.PageQuery{Kind: supply.KindPurchaseOrder,
							Attribute: "supplier", Value: s, Limit: 50})
					}}
			}
		case "full-text search", "typo-tolerant full-text search", "partial-match full-text search":
			target = 50 * time.Millisecond
			qs := map[string]*cycle[string]{"full-text search": queryWords, "typo-tolerant full-text search": typoWords,
				"partial-match full-text search": phrases}[name]
			draw = func() readCall {
				q := qs.take()
				return readCall{sql: `SELECT * FROM lb_search($1, $2, $3, $4, NULL, $5, $6, $7)`,
					args: []any{br, q, "", def.SearchDefaultLimit, def.SearchCandidates, def.PartialMinResults, def.PartialCandidates},
					path: func() string {
						return "/search?" + url.Values{"q": {q}, "limit": {strconv.Itoa(def.SearchDefaultLimit)}}.Encode()
					},
					call: func(ctx context.Context) (any, error) {
						return w.Reader.Search(ctx, w.DomainID, br, reads.SearchQuery{Q: q})
					}}
			}
		case "entity resolution":
			// No budget in design section 6; held to the search budget.
			target = 50 * time.Millisecond
			draw = func() readCall {
				m := mentions.take()
				return readCall{sql: `SELECT * FROM lb_resolve($1, $2, $3, $4, $5, $6)`,
					args: []any{br, m, "", def.SearchDefaultLimit, def.SearchCandidates, def.PartialCandidates},
					path: func() string {
						return "/resolve?" + url.Values{"mention": {m}, "limit": {strconv.Itoa(def.SearchDefaultLimit)}}.Encode()
					},
					call: func(ctx context.Context) (any, error) { return w.Reader.Resolve(ctx, w.DomainID, br, m, "", 0) }}
			}
		case "record history page":
			target = 10 * time.Millisecond
			draw = func() readCall {
				k := keys.take().key
				return readCall{sql: `SELECT * FROM lb_history($1, $2, lb_rev_seq($3), $4)`, args: []any{br, k, "", def.HistoryDefaultLimit + 1},
					path: func() string { return record(k) + "/history?limit=" + strconv.Itoa(def.HistoryDefaultLimit) },
					call: func(ctx context.Context) (any, error) { return w.Reader.History(ctx, w.DomainID, br, k, 0, "") }}
			}
		case "record lineage":
			target = 10 * time.Millisecond
			draw = func() readCall {
				k := keys.take().key
				return readCall{sql: `SELECT * FROM lb_lineage($1, $2)`, args: []any{br, k}, path: func() string { return record(k) + "/lineage" },
					call: func(ctx context.Context) (any, error) { return w.Reader.Lineage(ctx, w.DomainID, br, k) }}
			}
		default:
			continue
		}
		out = append(out, readDraw{name: name, target: target, draw: draw})
	}
	return out
}

// supplierKeys draws Supplier keys uniformly.
func (w *Workload) supplierKeys(stream uint64) *cycle[string] {
	r := w.rand(stream)
	out := make([]string, w.Calls)
	for i := range out {
		out[i] = w.Gen.Key(supply.KindSupplier, r.IntN(w.Gen.Counts().Suppliers))
	}
	return &cycle[string]{items: out}
}

// mentions draws Supplier names, every other one misspelled in its first
// long word: the mentions of entity resolution.
func (w *Workload) mentions(stream uint64) *cycle[string] {
	r := w.rand(stream)
	out := make([]string, w.Calls)
	for i := range out {
		c, err := w.Gen.Record(supply.KindSupplier, r.IntN(w.Gen.Counts().Suppliers))
		if err != nil {
			continue
		}
		var v struct{ Name string }
		_ = json.Unmarshal(c.Values, &v)
		out[i] = v.Name
		if i%2 == 1 {
			if m, ok := supply.Misspell(v.Name[:min(len(v.Name), 6)]); ok {
				out[i] = m + v.Name[min(len(v.Name), 6):]
			}
		}
	}
	return &cycle[string]{items: out}
}

// CommitParts is a commit of n Part updates on distinct random Parts
// (fewer when the dataset has fewer Parts), as lorebase_app through the
// commit pipeline: each change puts the Part's generated values with a new
// weight_kg, so every call commits new values. Its Prepare draws the next
// call's changes, so that a Harness times the commit alone (9 ms of 1,000
// changes' drawing at 10M); a call with none prepared draws its own.
func (w *Workload) CommitParts(n int, target time.Duration) Op {
	return w.CommitPartsOn(Branch, n, target, 5+uint64(n))
}

// CommitPartsOn is CommitParts on a branch, drawing from stream.
func (w *Workload) CommitPartsOn(branch string, n int, target time.Duration, stream uint64) Op {
	r := w.rand(stream)
	n = min(n, w.Gen.Counts().Parts)
	round := 0
	var next []commit.Change
	return Op{
		Name:   fmt.Sprintf("commit of %d changes", n),
		Target: target,
		Prepare: func(context.Context) error {
			var err error
			next, err = w.PartUpdates(r, n)
			return err
		},
		RLS: func(ctx context.Context) error {
			round++
			changes := next
			next = nil
			if changes == nil {
				var err error
				if changes, err = w.PartUpdates(r, n); err != nil {
					return err
				}
			}
			_, err := w.Pipeline.Commit(ctx, w.DomainID, branch, &commit.Request{
				Message: fmt.Sprintf("perf: update %d parts (%d)", n, round), Author: "perf:bench", Changes: changes,
			}, "")
			return err
		},
	}
}

// PartUpdates draws n distinct Parts (at most all of them) and returns a put
// of each with its generated values and a new weight_kg.
func (w *Workload) PartUpdates(r *rand.Rand, n int) ([]commit.Change, error) {
	parts := w.Gen.Counts().Parts
	n = min(n, parts)
	changes := make([]commit.Change, 0, n)
	for _, p := range sample(r, parts, n) {
		c, err := w.Gen.Record(supply.KindPart, p)
		if err != nil {
			return nil, err
		}
		var v map[string]any
		if err := json.Unmarshal(c.Values, &v); err != nil {
			return nil, fmt.Errorf("decode part %s: %w", c.Key, err)
		}
		v["weight_kg"] = float64(1+r.IntN(100000)) / 1000
		b, err := json.Marshal(v)
		if err != nil {
			return nil, fmt.Errorf("encode part %s: %w", c.Key, err)
		}
		changes = append(changes, commit.Change{Op: "put", Kind: c.Kind, Key: c.Key, Values: b})
	}
	return changes, nil
}

// sample draws n distinct integers of [0, max) (n ≤ max) in O(n).
func sample(r *rand.Rand, max, n int) []int {
	if n*2 > max {
		return r.Perm(max)[:n]
	}
	seen := make(map[int]bool, n)
	out := make([]int, 0, n)
	for len(out) < n {
		if v := r.IntN(max); !seen[v] {
			seen[v] = true
			out = append(out, v)
		}
	}
	return out
}

// WordMatches summarizes how many Records of main the words of the
// full-text search operation match (the word lexicon's counts).
type WordMatches struct {
	Words  int   `json:"words"` // distinct words drawn
	Calls  int   `json:"calls"` // words drawn (with repeats)
	P50    int64 `json:"p50"`   // over the calls
	P95    int64 `json:"p95"`
	Max    int64 `json:"max"`
	Over1k int   `json:"over_1000"` // calls whose word matches more than 1,000 Records
	// Top are the most common words drawn with their Records.
	Top []WordCount `json:"top"`
}

// WordCount is a word and the Records holding it.
type WordCount struct {
	Word    string `json:"word"`
	Records int64  `json:"records"`
}

// SearchWordMatches reads the word lexicon for the words the full-text
// search operation draws (the same Calls words as Reads).
func (w *Workload) SearchWordMatches(ctx context.Context) (*WordMatches, error) {
	words := supply.Words(w.Seed, w.Calls)
	distinct := map[string]bool{}
	for _, x := range words {
		distinct[strings.ToLower(x)] = true
	}
	list := make([]string, 0, len(distinct))
	for x := range distinct {
		list = append(list, x)
	}
	counts := map[string]int64{}
	rows, err := w.Store.Pool.Query(ctx, `SELECT word, records FROM mat_lexicon
		WHERE domain_id = $1 AND branch_id = $2 AND word = ANY($3)`, w.DomainID, w.BranchID, list)
	if err != nil {
		return nil, fmt.Errorf("read word lexicon: %w", err)
	}
	var wc WordCount
	if _, err := pgx.ForEachRow(rows, []any{&wc.Word, &wc.Records}, func() error {
		counts[wc.Word] = wc.Records
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read word lexicon: %w", err)
	}
	m := &WordMatches{Words: len(list), Calls: len(words)}
	per := make([]int64, len(words))
	for i, x := range words {
		per[i] = counts[strings.ToLower(x)]
		if per[i] > 1000 {
			m.Over1k++
		}
	}
	slices.Sort(per)
	if len(per) > 0 {
		m.P50 = per[(len(per)-1)/2]
		m.P95 = per[min(len(per)-1, int(math.Ceil(0.95*float64(len(per))))-1)]
		m.Max = per[len(per)-1]
	}
	for _, x := range list {
		m.Top = append(m.Top, WordCount{x, counts[x]})
	}
	slices.SortFunc(m.Top, func(a, b WordCount) int { return cmp.Compare(b.Records, a.Records) })
	m.Top = m.Top[:min(len(m.Top), 10)]
	return m, nil
}
