// Command semantic measures semantic and hybrid search on a throwaway
// PostgreSQL cluster (or LOREBASE_TEST_DATABASE_URL's server): it loads a
// Domain of Documents whose Kinds embed with the built-in hash embedder,
// times the embedding jobs, and measures semantic search (unfiltered, with
// a Kind filter of 40% and of 1% of the Records, with an Attribute
// filter) and hybrid search as lorebase_app at growing sizes, then 16
// concurrent clients over two Domains holding identical vectors, checking
// every result for leaks. Its output is plain text for docs/perf.
//
//	go run ./perf/cmd/semantic --records 100000 --checkpoints 10000,25000,50000,100000
package main

import (
	"context"
	"flag"
	"fmt"
	"math/rand/v2"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/embed"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "semantic:", err)
		os.Exit(1)
	}
}

type opts struct {
	records     int
	checkpoints []int
	dims        int
	batch       int
	iterations  int
	clients     int
	concurrent  time.Duration
	seed        uint64
}

func run() error {
	var o opts
	var cps string
	flag.IntVar(&o.records, "records", 100000, "Records loaded in the first Domain")
	flag.StringVar(&cps, "checkpoints", "10000,25000,50000,100000", "sizes at which reads are measured")
	flag.IntVar(&o.dims, "dims", 256, "dimensions of the hash embedding")
	flag.IntVar(&o.batch, "batch", 5000, "Records per commit")
	flag.IntVar(&o.iterations, "iterations", 30, "measured queries per read and size (after 3 warm-up queries)")
	flag.IntVar(&o.clients, "clients", 16, "concurrent clients of the leak check")
	flag.DurationVar(&o.concurrent, "concurrent-for", 20*time.Second, "duration of the leak check")
	flag.Uint64Var(&o.seed, "seed", 1, "seed of the generated texts and queries")
	flag.Parse()
	for _, c := range strings.Split(cps, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(c))
		if err != nil || n < 1 || n > o.records {
			return fmt.Errorf("checkpoint %q: a size between 1 and --records", c)
		}
		o.checkpoints = append(o.checkpoints, n)
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	srv, err := perf.OpenServer(ctx, perf.ServerOptions{})
	if err != nil {
		return err
	}
	defer srv.Close() //nolint:errcheck // stopping the throwaway server on exit
	db := fmt.Sprintf("perf_semantic_%d", time.Now().UnixNano())
	admin, err := store.Open(ctx, srv.AdminURL, store.Config{MaxConns: 2})
	if err != nil {
		return err
	}
	if _, err := admin.Pool.Exec(ctx, "CREATE DATABASE "+db); err != nil {
		admin.Close()
		return fmt.Errorf("create database: %w", err)
	}
	admin.Close()
	url, err := srv.URL(db)
	if err != nil {
		return err
	}
	if err := store.Migrate(ctx, url); err != nil {
		return err
	}
	s, err := store.Open(ctx, url, store.Config{MaxConns: int32(o.clients + 4)})
	if err != nil {
		return err
	}
	defer s.Close()

	fmt.Printf("# Semantic search, exact path (no pgvector on this machine)\n\n")
	fmt.Printf("command: go run ./perf/cmd/semantic %s\n", strings.Join(os.Args[1:], " "))
	m := perf.ReadMachine()
	fmt.Printf("machine: %+v\n", m)
	fmt.Printf("load average at start: %s\n", perf.ReadLoadAverage())
	var vecExt string
	_ = s.Pool.QueryRow(ctx, `SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'vector'), 'not installed')`).Scan(&vecExt)
	var pgv string
	_ = s.Pool.QueryRow(ctx, `SHOW server_version`).Scan(&pgv)
	fmt.Printf("PostgreSQL %s, vector extension: %s\n", pgv, vecExt)
	fmt.Printf("dataset: Kinds Memo (59%%), Brief (40%%), Rare (1%%), each embedding title and body with the hash embedder, %d dims; texts of 3-word titles and 12-word bodies drawn (Zipf) from 2,000 words\n\n", o.dims)

	pipe := commit.New(s, commit.Config{})
	emb := &jobs.Embedder{Store: s, Embedders: embed.NewSet(nil)}
	rd := reads.New(s, reads.Config{})
	gen := newTexts(o.seed)

	a, err := s.CreateDomain(ctx, "sem")
	if err != nil {
		return err
	}
	b, err := s.CreateDomain(ctx, "sem_other")
	if err != nil {
		return err
	}
	for _, d := range []int32{a.ID, b.ID} {
		if _, err := pipe.PutSchema(ctx, d, "main", &commit.SchemaRequest{Document: []byte(schemaDoc(o.dims))}); err != nil {
			return err
		}
	}
	// The second Domain: the first 5,000 texts of the first, other keys.
	other := min(5000, o.records)
	if _, _, _, err := loadRange(ctx, pipe, emb, b.ID, "Z-", newTexts(o.seed), 0, other, o.batch); err != nil {
		return err
	}

	loaded := 0
	var embedTime, commitTime time.Duration
	var embedded int
	fmt.Printf("| Records | read | p50 ms | p95 ms | p99 ms | results (mean) |\n|---|---|---|---|---|---|\n")
	for _, cp := range o.checkpoints {
		ct, et, n, err := loadRange(ctx, pipe, emb, a.ID, "D-", gen, loaded, cp, o.batch)
		if err != nil {
			return err
		}
		commitTime += ct
		embedTime += et
		embedded += n
		loaded = cp
		if _, err := s.Pool.Exec(ctx, "VACUUM ANALYZE"); err != nil {
			return err
		}
		if err := measure(ctx, rd, a.ID, cp, o, gen); err != nil {
			return err
		}
	}
	fmt.Printf("\nload: %d Records in commits of %d: commits %.1fs; embedding jobs (semantic.embed, hash, %d dims): %d vectors in %.1fs = %.0f vectors/s\n",
		loaded, o.batch, commitTime.Seconds(), o.dims, embedded, embedTime.Seconds(), float64(embedded)/embedTime.Seconds())
	fmt.Printf("recall@10 against exact search: 1 by construction (the exact path is exact search); HNSW recall not measured here (no pgvector)\n\n")
	if err := leaks(ctx, rd, a.ID, b.ID, o, gen); err != nil {
		return err
	}
	fmt.Printf("load average at end: %s\n", perf.ReadLoadAverage())
	return nil
}

func schemaDoc(dims int) string {
	kind := func(name string) string {
		return fmt.Sprintf(`{"name": %q, "title": "title", "attributes": [
			{"name": "title", "type": "text", "required": true, "search": true},
			{"name": "body", "type": "text", "search": true},
			{"name": "region", "type": "text"}],
		 "embedding": {"attributes": ["title", "body"], "dims": %d, "model": "hash"}}`, name, dims)
	}
	return `{"kinds": [` + kind("Memo") + `,` + kind("Brief") + `,` + kind("Rare") + `]}`
}

// texts draws titles and bodies from a Zipf-distributed vocabulary.
type texts struct {
	r     *rand.Rand
	zipf  *rand.Zipf
	words []string
}

func newTexts(seed uint64) *texts {
	r := rand.New(rand.NewPCG(seed, 99))
	syll := []string{"ka", "lo", "mi", "ren", "to", "vas", "qui", "ber", "sol", "dan", "fe", "gor", "hul", "ix", "jo", "pra", "str", "wen", "yu", "zed"}
	words := make([]string, 0, 2000)
	seen := map[string]bool{}
	for len(words) < 2000 {
		n := 2 + r.IntN(3)
		var b strings.Builder
		for range n {
			b.WriteString(syll[r.IntN(len(syll))])
		}
		if w := b.String(); !seen[w] {
			seen[w] = true
			words = append(words, w)
		}
	}
	return &texts{r: r, zipf: rand.NewZipf(r, 1.1, 4, uint64(len(words)-1)), words: words}
}

func (t *texts) phrase(n int) string {
	ws := make([]string, n)
	for i := range ws {
		ws[i] = t.words[t.zipf.Uint64()]
	}
	return strings.Join(ws, " ")
}

func kindOf(i int) string {
	switch {
	case i%100 == 0:
		return "Rare"
	case i%100 < 41:
		return "Brief"
	}
	return "Memo"
}

// loadRange commits Records from..to-1 of the generator and embeds each
// commit with the embedding job's code, timing both.
func loadRange(ctx context.Context, pipe *commit.Pipeline, emb *jobs.Embedder, domainID int32, prefix string, gen *texts, from, to, batch int) (time.Duration, time.Duration, int, error) {
	var ct, et time.Duration
	n := 0
	for start := from; start < to; start += batch {
		end := min(start+batch, to)
		changes := make([]commit.Change, 0, end-start)
		for i := start; i < end; i++ {
			vals := fmt.Sprintf(`{"title": %q, "body": %q, "region": %q}`, gen.phrase(3), gen.phrase(12), []string{"north", "south", "east", "west"}[i%4])
			changes = append(changes, commit.Change{Op: "put", Kind: kindOf(i), Key: fmt.Sprintf("%s%07d", prefix, i), Values: []byte(vals)})
		}
		t0 := time.Now()
		res, err := pipe.Commit(ctx, domainID, "main", &commit.Request{Message: "load", Author: "perf", Changes: changes}, "")
		if err != nil {
			return 0, 0, 0, err
		}
		ct += time.Since(t0)
		var branchID int32
		t1 := time.Now()
		if err := emb.Store.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, domainID).Scan(&branchID); err != nil {
			return 0, 0, 0, err
		}
		w, err := emb.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: domainID, BranchID: branchID, Seq: res.Seq})
		if err != nil {
			return 0, 0, 0, err
		}
		et += time.Since(t1)
		n += w
	}
	return ct, et, n, nil
}

type readOp struct {
	name string
	fn   func(ctx context.Context, q string) (int, error)
}

func measure(ctx context.Context, rd *reads.Reader, d int32, size int, o opts, gen *texts) error {
	sem := func(kind, attr, val string) func(ctx context.Context, q string) (int, error) {
		return func(ctx context.Context, q string) (int, error) {
			r, err := rd.Semantic(ctx, d, "main", reads.SemanticQuery{Q: q, Kind: kind, Attribute: attr, Value: val, Limit: 20})
			if err != nil {
				return 0, err
			}
			return len(r.Results), nil
		}
	}
	ops := []readOp{
		{"semantic, all Kinds, top 20", sem("", "", "")},
		{"semantic, Kind 40%, top 20", sem("Brief", "", "")},
		{"semantic, Kind 1%, top 20", sem("Rare", "", "")},
		{"semantic, Kind 40% + Attribute 25%, top 20", sem("Brief", "region", "north")},
		{"hybrid, all Kinds, top 20", func(ctx context.Context, q string) (int, error) {
			r, err := rd.Hybrid(ctx, d, "main", reads.SemanticQuery{Q: q, Limit: 20, TextWeight: -1, SemanticWeight: -1})
			if err != nil {
				return 0, err
			}
			return len(r.Results), nil
		}},
		{"full-text (reference), top 20", func(ctx context.Context, q string) (int, error) {
			r, err := rd.Search(ctx, d, "main", reads.SearchQuery{Q: q, Limit: 20})
			if err != nil {
				return 0, err
			}
			return len(r.Results), nil
		}},
	}
	for _, op := range ops {
		var lat []time.Duration
		total := 0
		for i := range 3 + o.iterations {
			q := gen.phrase(2)
			t0 := time.Now()
			n, err := op.fn(ctx, q)
			if err != nil {
				return fmt.Errorf("%s: %w", op.name, err)
			}
			if i >= 3 {
				lat = append(lat, time.Since(t0))
				total += n
			}
		}
		st := perf.Summarize(lat)
		fmt.Printf("| %d | %s | %.1f | %.1f | %.1f | %.1f |\n", size, op.name, ms(st.P50), ms(st.P95), ms(st.P99), float64(total)/float64(len(lat)))
	}
	return nil
}

func ms(d time.Duration) float64 { return float64(d) / float64(time.Millisecond) }

// leaks runs o.clients concurrent clients, half on each Domain (the second
// holds the first 5,000 texts of the first, so identical vectors), each
// checking that every key it gets carries its own Domain's prefix.
func leaks(ctx context.Context, rd *reads.Reader, a, b int32, o opts, gen *texts) error {
	var calls, checked, leaked atomic.Int64
	var firstErr atomic.Value
	var wg sync.WaitGroup
	queries := make([]string, 200)
	for i := range queries {
		queries[i] = gen.phrase(2)
	}
	deadline := time.Now().Add(o.concurrent)
	for c := range o.clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d, prefix := a, "D-"
			if c%2 == 1 {
				d, prefix = b, "Z-"
			}
			for i := 0; time.Now().Before(deadline); i++ {
				q := reads.SemanticQuery{Q: queries[(c*7+i)%len(queries)], Limit: 20, TextWeight: -1, SemanticWeight: -1}
				var r *reads.SearchResults
				var err error
				if i%2 == 0 || d == a {
					r, err = rd.Semantic(ctx, d, "main", q)
				} else {
					r, err = rd.Hybrid(ctx, d, "main", q)
				}
				if err != nil {
					firstErr.CompareAndSwap(nil, err)
					return
				}
				calls.Add(1)
				for _, x := range r.Results {
					checked.Add(1)
					if !strings.HasPrefix(x.Key, prefix) {
						leaked.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	if err, _ := firstErr.Load().(error); err != nil {
		return err
	}
	fmt.Printf("leak check: %d clients for %s (client i reads Domain i mod 2: %d Records / %d Records with identical texts and vectors), %d searches, %d results checked, leaks: %d\n",
		o.clients, o.concurrent, o.records, min(5000, o.records), calls.Load(), checked.Load(), leaked.Load())
	return nil
}
