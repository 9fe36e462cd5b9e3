package perf

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"strings"
	"sync"
	"time"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/reads"
)

// Tenant is one Domain the concurrent clients read, and what its Records
// look like: every key it holds (when it holds at most MaxCheckedKeys) and
// the marker its titles start with ("" for none). A Record returned to a
// client of the Tenant that carries another Tenant's marker, lacks its
// own, or has a key the Tenant does not hold, is a leak.
type Tenant struct {
	W      *Workload
	Marker string
	keys   map[string]bool
}

// MaxCheckedKeys bounds the key set a Tenant keeps for the leak check;
// a larger Domain is checked by markers only.
const MaxCheckedKeys = 2_000_000

// NewTenant returns the Tenant of a Workload whose generator's titles start
// with marker.
func NewTenant(w *Workload, marker string) *Tenant {
	t := &Tenant{W: w, Marker: marker}
	c := w.Gen.Counts()
	if c.Records() <= MaxCheckedKeys {
		t.keys = make(map[string]bool, c.Records())
		for _, k := range allKinds {
			for i := range c.Of(k) {
				t.keys[w.Gen.Key(k, i)] = true
			}
		}
	}
	return t
}

// allKinds are the Kinds of the supply schema. It is a lookup table, never written.
var allKinds = []string{supply.KindSupplier, supply.KindWarehouse, supply.KindPart, supply.KindPurchaseOrder, supply.KindRiskFlag}

// MixedReads are the reads of the concurrent clients, each client going
// through them in turn. It is a lookup table, never written.
var MixedReads = []string{"get", "page", "links", "neighborhood", "attribute query", "search"}

// ConcurrencyOptions choose the concurrent measurement.
type ConcurrencyOptions struct {
	// Clients are the numbers of concurrent clients measured in turn.
	Clients []int
	// Duration of each level (clients, writer on or off).
	Duration time.Duration
	// MaxCalls bounds the calls of one client in one level (0: 1,000,000).
	MaxCalls int
	// MinCalls, when positive, makes each client of a level go on past
	// Duration until it has made MinCalls calls, and the writer until it
	// has made one commit; no call is then cut by the level's end. A short
	// level on a loaded machine still calls every read of the mix (MinCalls
	// of at least len(MixedReads)). 0: the level ends at Duration, cutting
	// the calls in flight.
	MinCalls int
	// WriterRate is the writer's commits per second during the second pass
	// of the levels (0: no writer pass).
	WriterRate float64
	// WriterChanges is the number of Part updates per writer commit.
	WriterChanges int
	// Seed draws the keys and queries of the clients.
	Seed uint64
	// Log receives a line per level (nil: none).
	Log io.Writer
}

// LevelResult is one level of the concurrent measurement: Clients clients
// reading the mix for Duration, with or without the writer.
type LevelResult struct {
	Clients  int           `json:"clients"`
	Writer   bool          `json:"writer"`
	Duration time.Duration `json:"duration_ns"`
	Calls    int           `json:"calls"`
	// Throughput is Calls per second of Duration, over every client.
	Throughput float64 `json:"throughput"`
	Latency    Stats   `json:"latency"`
	// ByRead is the latency of each read of MixedReads.
	ByRead map[string]Stats `json:"by_read"`
	// ByDomain are the calls, calls per second and latency of the clients
	// of each Domain, in the order of Concurrency.Domains.
	ByDomain   []DomainLoad `json:"by_domain"`
	Errors     int          `json:"errors"`
	FirstError string       `json:"first_error,omitempty"`
	// Checked counts the Records and Links returned and checked against
	// the Domain of the client that got them; Leaks those that failed.
	Checked      int      `json:"checked"`
	Leaks        int      `json:"leaks"`
	LeakExamples []string `json:"leak_examples,omitempty"`
	// Commits are the writer's commit latencies (nil without the writer).
	Commits      *Stats  `json:"commits,omitempty"`
	CommitRate   float64 `json:"commit_rate,omitempty"`
	CommitErrors int     `json:"commit_errors,omitempty"`
	CommitError  string  `json:"commit_error,omitempty"`
}

// DomainLoad is what the clients of one Domain did in a level.
type DomainLoad struct {
	Clients    int     `json:"clients"`
	Calls      int     `json:"calls"`
	Throughput float64 `json:"throughput"`
	Latency    Stats   `json:"latency"`
}

// Concurrency is the concurrent measurement of a run.
type Concurrency struct {
	Levels []LevelResult `json:"levels"`
	// Domains describes the Domains the clients read, client i reading
	// Domains[i % len].
	Domains       []string      `json:"domains"`
	Duration      time.Duration `json:"duration_ns"`
	WriterRate    float64       `json:"writer_rate"`
	WriterChanges int           `json:"writer_changes"`
}

// RunConcurrency runs every level: first each number of clients without
// the writer, then each with it. Client i reads tenants[i % len(tenants)];
// the writer commits WriterChanges Part updates to the first tenant's main
// WriterRate times a second. Every call is bounded by the level's deadline
// and MaxCalls; every Record a call returns is checked against the
// client's Domain.
func RunConcurrency(ctx context.Context, tenants []*Tenant, opts ConcurrencyOptions) (*Concurrency, error) {
	if len(tenants) == 0 {
		return nil, fmt.Errorf("concurrency: no Domain to read")
	}
	if opts.MaxCalls <= 0 {
		opts.MaxCalls = 1_000_000
	}
	if opts.WriterChanges <= 0 {
		opts.WriterChanges = 100
	}
	out := &Concurrency{Duration: opts.Duration, WriterRate: opts.WriterRate, WriterChanges: opts.WriterChanges}
	for _, t := range tenants {
		name := fmt.Sprintf("%d Records", t.W.Gen.Counts().Records())
		if t.Marker != "" {
			name += fmt.Sprintf(", titles marked %q", t.Marker)
		}
		out.Domains = append(out.Domains, name)
	}
	passes := []bool{false}
	if opts.WriterRate > 0 {
		passes = append(passes, true)
	}
	for _, writer := range passes {
		for _, n := range opts.Clients {
			lr, err := runLevel(ctx, tenants, n, writer, opts)
			if err != nil {
				return out, err
			}
			out.Levels = append(out.Levels, *lr)
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "perf: %2d clients writer %-5t %7.0f calls/s p50 %s p99 %s errors %d checked %d leaks %d commits p50 %s\n",
					n, writer, lr.Throughput, ms(lr.Latency.P50), ms(lr.Latency.P99), lr.Errors, lr.Checked, lr.Leaks, commitP50(lr))
			}
		}
	}
	return out, nil
}

func commitP50(lr *LevelResult) string {
	if lr.Commits == nil {
		return "—"
	}
	return ms(lr.Commits.P50)
}

// clientResult is what one client measured.
type clientResult struct {
	lat      []time.Duration
	byRead   map[string][]time.Duration
	errors   int
	firstErr string
	checked  int
	leaks    int
	examples []string
}

func runLevel(ctx context.Context, tenants []*Tenant, n int, writer bool, opts ConcurrencyOptions) (*LevelResult, error) {
	deadline := time.Now().Add(opts.Duration)
	lctx, cancel := context.WithDeadline(ctx, deadline)
	if opts.MinCalls > 0 {
		// The level ends when every client and the writer have done
		// their part (see ConcurrencyOptions.MinCalls), not at deadline.
		cancel()
		lctx, cancel = context.WithCancel(ctx)
	}
	defer cancel()
	results := make([]clientResult, n)
	var wg sync.WaitGroup
	start := time.Now()
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i] = runClient(lctx, tenants, i, n, writer, deadline, opts)
		}()
	}
	var commits []time.Duration
	var commitErrs int
	var commitErr string
	if writer {
		wg.Add(1)
		go func() {
			defer wg.Done()
			commits, commitErrs, commitErr = runWriter(lctx, tenants[0].W, deadline, opts)
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	lr := &LevelResult{Clients: n, Writer: writer, Duration: elapsed, ByRead: map[string]Stats{}}
	var all []time.Duration
	byRead := map[string][]time.Duration{}
	byDomain := make([][]time.Duration, len(tenants))
	lr.ByDomain = make([]DomainLoad, len(tenants))
	for i, r := range results {
		byDomain[i%len(tenants)] = append(byDomain[i%len(tenants)], r.lat...)
		lr.ByDomain[i%len(tenants)].Clients++
		all = append(all, r.lat...)
		for k, v := range r.byRead {
			byRead[k] = append(byRead[k], v...)
		}
		lr.Errors += r.errors
		if lr.FirstError == "" {
			lr.FirstError = r.firstErr
		}
		lr.Checked += r.checked
		lr.Leaks += r.leaks
		if len(lr.LeakExamples) < 5 {
			lr.LeakExamples = append(lr.LeakExamples, r.examples...)
		}
	}
	lr.Calls = len(all)
	lr.Throughput = float64(lr.Calls) / elapsed.Seconds()
	lr.Latency = Summarize(all)
	for k, v := range byRead {
		lr.ByRead[k] = Summarize(v)
	}
	for i, v := range byDomain {
		d := &lr.ByDomain[i]
		d.Calls, d.Throughput, d.Latency = len(v), float64(len(v))/elapsed.Seconds(), Summarize(v)
	}
	if writer {
		st := Summarize(commits)
		lr.Commits = &st
		lr.CommitRate = float64(len(commits)) / elapsed.Seconds()
		lr.CommitErrors, lr.CommitError = commitErrs, commitErr
	}
	return lr, nil
}

// runClient reads the mix until the level's deadline or MaxCalls (with
// MinCalls: until both the deadline and MinCalls calls have passed). A call
// cut by the deadline is neither timed nor counted as an error.
func runClient(ctx context.Context, tenants []*Tenant, i, n int, writer bool, deadline time.Time, opts ConcurrencyOptions) clientResult {
	t := tenants[i%len(tenants)]
	w := t.W
	stream := uint64(1000 + 100*n + i)
	if writer {
		stream += 50
	}
	r := rand.New(rand.NewPCG(opts.Seed, stream))
	words := supply.Words(opts.Seed+stream, 500)
	res := clientResult{byRead: map[string][]time.Duration{}}
	br := Branch
	for call := 0; call < opts.MaxCalls && ctx.Err() == nil; call++ {
		if opts.MinCalls > 0 && call >= opts.MinCalls && !time.Now().Before(deadline) {
			break
		}
		name := MixedReads[(call+i)%len(MixedReads)]
		var got returned
		start := time.Now()
		var err error
		switch name {
		case "get":
			var rec *reads.Record
			rec, err = w.Reader.Get(ctx, w.DomainID, br, w.randomKey(r).key, "")
			if err == nil {
				got.records = append(got.records, *rec)
			}
		case "page":
			k := w.randomKey(r)
			var p *reads.Page
			p, err = w.Reader.Page(ctx, w.DomainID, br, reads.PageQuery{Kind: k.kind, After: k.key, Limit: 50})
			if err == nil {
				got.records = p.Records
			}
		case "links":
			var l *reads.Links
			l, err = w.Reader.Links(ctx, w.DomainID, br, w.randomKey(r).key, reads.LinksQuery{Direction: "both"})
			if err == nil {
				got.links = l.Links
			}
		case "neighborhood":
			var nb *reads.Neighborhood
			nb, err = w.Reader.Neighborhood(ctx, w.DomainID, br, w.randomKey(r).key, 2, 200)
			if err == nil {
				for _, x := range nb.Records {
					got.titles = append(got.titles, keyTitle{x.Key, x.Title})
				}
				got.links = nb.Links
			}
		case "attribute query":
			s := w.Gen.Key(supply.KindSupplier, r.IntN(w.Gen.Counts().Suppliers))
			var p *reads.Page
			p, err = w.Reader.QueryByAttribute(ctx, w.DomainID, br, reads.PageQuery{Kind: supply.KindPurchaseOrder,
				Attribute: "supplier", Value: s, Limit: 50})
			if err == nil {
				got.records = p.Records
			}
		case "search":
			var sr *reads.SearchResults
			sr, err = w.Reader.Search(ctx, w.DomainID, br, reads.SearchQuery{Q: words[r.IntN(len(words))]})
			if err == nil {
				for _, x := range sr.Results {
					got.titles = append(got.titles, keyTitle{x.Key, x.Title})
				}
			}
		}
		d := time.Since(start)
		if ctx.Err() != nil {
			break
		}
		if err != nil {
			res.errors++
			if res.firstErr == "" {
				res.firstErr = fmt.Sprintf("%s: %v", name, err)
			}
			continue
		}
		res.lat = append(res.lat, d)
		res.byRead[name] = append(res.byRead[name], d)
		checked, bad := t.check(got, tenants)
		res.checked += checked
		res.leaks += len(bad)
		for _, b := range bad {
			if len(res.examples) < 5 {
				res.examples = append(res.examples, fmt.Sprintf("client %d (%s) %s: %s", i, w.DomainName, name, b))
			}
		}
	}
	return res
}

// runWriter commits opts.WriterChanges Part updates WriterRate times a
// second until the deadline, the first at once; a commit that outlasts its period delays the
// next (ticks are dropped, not queued). A commit cut by the deadline is not
// counted. With MinCalls it stops at the first tick past the deadline once
// it has made one commit, and no commit is cut.
func runWriter(ctx context.Context, w *Workload, deadline time.Time, opts ConcurrencyOptions) ([]time.Duration, int, string) {
	op := w.CommitParts(opts.WriterChanges, 0)
	tick := time.NewTicker(time.Duration(float64(time.Second) / opts.WriterRate))
	defer tick.Stop()
	var lat []time.Duration
	var errs int
	var first string
	for i := 0; ; i++ {
		if i > 0 {
			select {
			case <-ctx.Done():
				return lat, errs, first
			case <-tick.C:
			}
			if opts.MinCalls > 0 && len(lat)+errs > 0 && !time.Now().Before(deadline) {
				return lat, errs, first
			}
		}
		start := time.Now()
		err := op.RLS(ctx)
		d := time.Since(start)
		if ctx.Err() != nil {
			return lat, errs, first
		}
		if err != nil {
			errs++
			if first == "" {
				first = err.Error()
			}
			continue
		}
		lat = append(lat, d)
	}
}

type keyTitle struct{ key, title string }

// returned is what one call returned.
type returned struct {
	records []reads.Record
	titles  []keyTitle
	links   []reads.Link
}

// check counts the Records and Links of a call and lists those that do not
// belong to the Tenant: a key it does not hold, a title without its marker
// or with another Tenant's, values whose title Attribute is not the title.
func (t *Tenant) check(got returned, tenants []*Tenant) (int, []string) {
	var bad []string
	title := func(key, title string) {
		if t.keys != nil && !t.keys[key] {
			bad = append(bad, fmt.Sprintf("key %s is not the Domain's", key))
		}
		if t.Marker != "" && !strings.HasPrefix(title, t.Marker+" ") {
			bad = append(bad, fmt.Sprintf("%s: title %q lacks the Domain's marker", key, title))
		}
		for _, o := range tenants {
			if o != t && o.Marker != "" && o.Marker != t.Marker && strings.HasPrefix(title, o.Marker+" ") {
				bad = append(bad, fmt.Sprintf("%s: title %q carries another Domain's marker", key, title))
			}
		}
	}
	for _, r := range got.records {
		title(r.Key, r.Title)
		var v map[string]any
		if err := json.Unmarshal(r.Values, &v); err != nil || v[supply.TitleAttribute[r.Kind]] != r.Title {
			bad = append(bad, fmt.Sprintf("%s: values do not hold the title %q", r.Key, r.Title))
		}
	}
	for _, x := range got.titles {
		title(x.key, x.title)
	}
	for _, l := range got.links {
		if t.keys != nil && (!t.keys[l.From] || !t.keys[l.To]) {
			bad = append(bad, fmt.Sprintf("link %s -%s-> %s is not the Domain's", l.From, l.Relation, l.To))
		}
	}
	return len(got.records) + len(got.titles) + len(got.links), bad
}
