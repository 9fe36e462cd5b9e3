package perf

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"iter"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/schollz/progressbar/v3"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/store"
)

// DomainName is the Domain the harness loads and measures.
const DomainName = "supply"

// Branch is the branch the harness loads.
const Branch = "main"

// DefaultBatchSize is the number of changes per load commit.
const DefaultBatchSize = 10_000

// loadMessage prefixes the message of every load commit; the resume logic
// counts the commits carrying it.
const loadMessage = "supply load batch "

// LoadOptions select the dataset and how it is loaded.
type LoadOptions struct {
	// Supply is the dataset; a replicated one loads its base
	// (supply.Config.Base), which Replicate then copies.
	Supply supply.Config
	// Domain is the Domain to load into (DomainName when empty).
	Domain string
	// BatchSize is the number of changes per commit (DefaultBatchSize when 0).
	BatchSize int
	// Progress receives a progress line now and then (nil: none).
	Progress io.Writer
	// ProgressBar draws a progress bar with the rate and the time left on
	// Progress instead of the lines (for a terminal).
	ProgressBar bool
	// StopAfter stops after committing this many batches in this call
	// (0: load everything), as an interruption would.
	StopAfter int
	// SkipVacuum leaves out the VACUUM ANALYZE after a completed load.
	SkipVacuum bool
}

// LoadResult tells what a Load did.
type LoadResult struct {
	DomainID  int32         `json:"-"`
	Batches   int           `json:"batches"`   // batches of the whole dataset
	Skipped   int           `json:"skipped"`   // batches committed by earlier runs
	Committed int           `json:"committed"` // batches committed by this run
	Records   int           `json:"records"`   // Records committed by this run
	Links     int           `json:"links"`     // stored Links committed by this run
	Duration  time.Duration `json:"duration_ns"`
	Vacuum    time.Duration `json:"vacuum_ns"`
	// Indexes is the time the per-Attribute indexes took to record and
	// build before the batches (BuildSchemaIndexes).
	Indexes  time.Duration `json:"indexes_ns"`
	Complete bool          `json:"complete"`
}

// RecordsPerSecond is the rate of Records committed by this run.
func (r *LoadResult) RecordsPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Records) / r.Duration.Seconds()
}

// ChangesPerSecond is the rate of changes (Records and Links) committed by this run.
func (r *LoadResult) ChangesPerSecond() float64 {
	if r.Duration <= 0 {
		return 0
	}
	return float64(r.Records+r.Links) / r.Duration.Seconds()
}

// loadProvenance marks every load commit with the dataset it belongs to, so
// a resumed load refuses a database holding another dataset.
type loadProvenance struct {
	Tool       string `json:"tool"`
	Seed       uint64 `json:"seed"`
	Scale      int    `json:"scale"`
	ExtraLinks int    `json:"extra_links"`
	BatchSize  int    `json:"batch_size"`
	Marker     string `json:"marker,omitempty"`
}

// branchIDOf answers the id of the Domain's branch name.
func branchIDOf(ctx context.Context, s *store.Store, domainID int32, name string) (int32, error) {
	var id int32
	if err := s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = $2`, domainID, name).Scan(&id); err != nil {
		return 0, fmt.Errorf("branch %s: %w", name, err)
	}
	return id, nil
}

// Load loads the supply Domain into the store through the commit pipeline:
// the Domain and its schema first when missing, the schema's per-Attribute
// indexes (BuildSchemaIndexes) when batches are left, then the batches no
// earlier run committed, then VACUUM ANALYZE. Running it on a complete load does
// nothing but check it.
func Load(ctx context.Context, s *store.Store, opts LoadOptions) (*LoadResult, error) {
	if opts.BatchSize <= 0 {
		opts.BatchSize = DefaultBatchSize
	}
	if opts.Domain == "" {
		opts.Domain = DomainName
	}
	opts.Supply = opts.Supply.Base()
	g, err := supply.New(opts.Supply)
	if err != nil {
		return nil, fmt.Errorf("load supply: %w", err)
	}
	d, err := s.DomainByName(ctx, opts.Domain)
	if errors.Is(err, store.ErrNotFound) {
		d, err = s.CreateDomain(ctx, opts.Domain)
	}
	if err != nil {
		return nil, fmt.Errorf("load supply: %w", err)
	}
	res := &LoadResult{DomainID: d.ID, Batches: g.BatchCount(opts.BatchSize)}
	pipe := commit.New(s, commit.Config{})

	prov, err := json.Marshal(loadProvenance{Tool: "perf/supply", Seed: opts.Supply.Seed, Scale: opts.Supply.Scale,
		ExtraLinks: opts.Supply.ExtraLinks, BatchSize: opts.BatchSize, Marker: opts.Supply.Marker})
	if err != nil {
		return nil, fmt.Errorf("load supply: %w", err)
	}
	if err := ensureSchema(ctx, s, pipe, d.ID); err != nil {
		return nil, fmt.Errorf("load supply: %w", err)
	}
	branchID, err := branchIDOf(ctx, s, d.ID, Branch)
	if err != nil {
		return nil, fmt.Errorf("load supply: %w", err)
	}
	done, err := committedBatches(ctx, s, d.ID, opts.Domain, prov)
	if err != nil {
		return nil, fmt.Errorf("load supply: %w", err)
	}
	if done > res.Batches {
		return nil, fmt.Errorf("load supply: the database holds %d load commits, the dataset has %d batches", done, res.Batches)
	}
	res.Skipped = done
	if done < res.Batches {
		// As a user who declares indexes and then loads: recorded and
		// built on the branch before the batches (instant while it is
		// empty; a resumed load's first run backfills what it committed),
		// so every commit writes ivals and the bench's builds find them
		// ready.
		t := time.Now()
		if err := BuildSchemaIndexes(ctx, s, d.ID, branchID); err != nil {
			return nil, fmt.Errorf("load supply: %w", err)
		}
		res.Indexes = time.Since(t)
	}
	pr := newProgress(opts.Progress, opts.ProgressBar, g.Counts().Changes(), done*opts.BatchSize)
	start := time.Now()
	n := done
	// The next batch is generated while the current one commits.
	for b := range prefetch(ctx, g.Batches(opts.BatchSize, done)) {
		if opts.StopAfter > 0 && res.Committed == opts.StopAfter {
			break
		}
		req := &commit.Request{
			Message:    fmt.Sprintf("%s%d/%d", loadMessage, n+1, res.Batches),
			Author:     "perf:loader",
			Provenance: prov,
			Changes:    b.changes,
		}
		if _, err := pipe.Commit(ctx, d.ID, Branch, req, ""); err != nil {
			return res, fmt.Errorf("load supply: commit batch %d/%d: %w", n+1, res.Batches, err)
		}
		n++
		res.Committed++
		res.Records += b.records
		res.Links += len(b.changes) - b.records
		res.Duration = time.Since(start)
		pr.update(n, res.Batches, len(b.changes), res.Records, res.Links)
	}
	res.Duration = time.Since(start)
	res.Complete = n == res.Batches
	pr.done(res)
	if res.Complete && res.Committed > 0 && !opts.SkipVacuum {
		t := time.Now()
		if _, err := s.Pool.Exec(ctx, "VACUUM ANALYZE", pgx.QueryExecModeSimpleProtocol); err != nil {
			return res, fmt.Errorf("load supply: vacuum analyze: %w", err)
		}
		res.Vacuum = time.Since(t)
	}
	return res, nil
}

// ensureSchema puts the supply schema on main unless main has a schema already.
func ensureSchema(ctx context.Context, s *store.Store, pipe *commit.Pipeline, domainID int32) error {
	var seq int64
	err := s.Pool.QueryRow(ctx, `SELECT s.seq FROM schemas s JOIN refs r ON r.domain_id = s.domain_id AND r.id = s.branch_id
		WHERE s.domain_id = $1 AND r.name = $2`, domainID, Branch).Scan(&seq)
	if err != nil {
		return fmt.Errorf("read schema of %s: %w", Branch, err)
	}
	if seq > 0 {
		return nil
	}
	_, err = pipe.PutSchema(ctx, domainID, Branch, &commit.SchemaRequest{
		Document: json.RawMessage(supply.Schema),
		Author:   "perf:loader",
		Message:  "supply schema",
	})
	if err != nil {
		return fmt.Errorf("put schema: %w", err)
	}
	return nil
}

// committedBatches counts the load commits on main; every one of them must
// carry the provenance of this dataset.
func committedBatches(ctx context.Context, s *store.Store, domainID int32, domain string, prov []byte) (int, error) {
	var n, other int
	err := s.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE provenance IS DISTINCT FROM $3::jsonb)
		FROM revisions v JOIN refs r ON r.domain_id = v.domain_id AND r.id = v.branch_id
		WHERE v.domain_id = $1 AND r.name = $2 AND v.message LIKE $4`,
		domainID, Branch, string(prov), loadMessage+"%").Scan(&n, &other)
	if err != nil {
		return 0, fmt.Errorf("count load commits: %w", err)
	}
	if other > 0 {
		return 0, fmt.Errorf("the Domain %s holds %d load commits of another dataset (want %s): load into another database", domain, other, prov)
	}
	return n, nil
}

// loadBatch is one batch of the load as the pipeline takes it.
type loadBatch struct {
	changes []commit.Change
	records int // its puts; the other changes are links
}

// prefetch generates the batches of seq one ahead of the loop that ranges
// over it, in a goroutine of its own; it stops when ctx is done or the loop
// stops ranging.
func prefetch(ctx context.Context, seq iter.Seq[[]supply.Change]) iter.Seq[loadBatch] {
	return func(yield func(loadBatch) bool) {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		ch := make(chan loadBatch, 1)
		go func() {
			defer close(ch)
			for batch := range seq {
				b := loadBatch{changes: toCommitChanges(batch)}
				for _, c := range batch {
					if c.Op == "put" {
						b.records++
					}
				}
				if ctx.Err() != nil {
					return
				}
				select {
				case ch <- b:
				case <-ctx.Done():
					return
				}
			}
		}()
		for b := range ch {
			if !yield(b) {
				return
			}
		}
	}
}

func toCommitChanges(batch []supply.Change) []commit.Change {
	out := make([]commit.Change, len(batch))
	for i, c := range batch {
		out[i] = commit.Change{Op: c.Op, Kind: c.Kind, Key: c.Key, Values: c.Values, Relation: c.Relation, From: c.From, To: c.To}
	}
	return out
}

// progress writes a line at most every two seconds (changes loaded, rate
// and the time left at that rate), or draws a bar of the changes this run
// loads with the same figures.
type progress struct {
	w        io.Writer
	bar      *progressbar.ProgressBar
	total    int
	loaded   int
	start    time.Time
	last     time.Time
	interval time.Duration
}

func newProgress(w io.Writer, bar bool, total, loaded int) *progress {
	now := time.Now()
	p := &progress{w: w, total: total, loaded: loaded, start: now, last: now, interval: 2 * time.Second}
	if w != nil && bar {
		// The bar counts what this run loads, so that its rate and the
		// time left are this run's, whatever an earlier run loaded.
		p.bar = progressbar.NewOptions(max(1, total-loaded),
			progressbar.OptionSetWriter(w),
			progressbar.OptionSetDescription(fmt.Sprintf("supply: %d of %d changes loaded before", loaded, total)),
			progressbar.OptionShowCount(),
			progressbar.OptionShowIts(),
			progressbar.OptionSetItsString("changes"),
			progressbar.OptionSetPredictTime(true),
			progressbar.OptionSetElapsedTime(true),
			progressbar.OptionFullWidth(),
			progressbar.OptionThrottle(250*time.Millisecond),
			progressbar.OptionOnCompletion(func() { fmt.Fprintln(w) }),
		)
	}
	return p
}

func (p *progress) update(batch, batches, changes, records, links int) {
	p.loaded += changes
	if p.bar != nil {
		p.bar.Describe(fmt.Sprintf("supply: batch %d/%d", batch, batches))
		_ = p.bar.Add(changes)
		return
	}
	if p.w == nil || time.Since(p.last) < p.interval && batch != batches {
		return
	}
	p.last = time.Now()
	el := time.Since(p.start).Seconds()
	rate := float64(records+links) / el
	eta := "?"
	if rate > 0 {
		eta = (time.Duration(float64(p.total-p.loaded)/rate) * time.Second).Round(time.Second).String()
	}
	fmt.Fprintf(p.w, "supply: batch %d/%d, %d/%d changes (%.1f%%), %.0f records/s, %.0f changes/s, ETA %s\n",
		batch, batches, p.loaded, p.total, 100*float64(p.loaded)/float64(max(1, p.total)),
		float64(records)/el, rate, eta)
}

func (p *progress) done(r *LoadResult) {
	if p.w == nil {
		return
	}
	if p.bar != nil && !p.bar.IsFinished() {
		// An interrupted or stopped load: end the bar's line.
		fmt.Fprintln(p.w)
	}
	fmt.Fprintf(p.w, "supply: %d batches committed in %s (%d skipped, complete: %t): %d records, %d links, %.0f records/s, %.0f changes/s\n",
		r.Committed, r.Duration.Round(time.Millisecond), r.Skipped, r.Complete, r.Records, r.Links,
		r.RecordsPerSecond(), r.ChangesPerSecond())
}
