// Command searchcalls makes --calls searches of each class the bench
// measures (full-text, typo-tolerant, partial-match and entity
// resolution, with the bench's queries and mentions) on the supply
// Domain's main as the owner, and reports per class the shared buffers
// (hit + read, planning included) each call reads, from EXPLAIN (ANALYZE,
// BUFFERS) of the call's SQL function, and the search functions each
// call ran (pg_stat_get_xact_function_calls, track_functions all):
//
//	go run ./perf/cmd/searchcalls --scale 540 --seed-database perf_seed_100k \
//	    --database-url "$(go run ./perf/cmd/perfpg url --dir DIR)" --calls 220 \
//	    --answers before.jsonl
//	go run ./perf/cmd/searchcalls ... --answers after.jsonl --compare before.jsonl
//
// The database is loaded as bench loads it (--scale, --seed-database,
// --database-url and the other dataset flags; a fresh copy of the seed
// database, migrated to this tree's functions, is read and dropped). The
// calls run on one connection after --warmup untimed calls of each class.
// --answers writes every call's rows (one JSON object a line); --compare
// reads such a file and reports, per class, the calls whose answers differ
// (ranked, the number of Records ranked, is reported apart: it tells how
// much was read, not what was answered). --per-call lists every call.
//
// Each call's time is given twice: its first run, client side, and the
// EXPLAIN ANALYZE run that repeats it at once (the pages the first run
// read then in shared buffers; timing each plan node adds its cost). The
// bench times first runs only.
package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

// classes are the reads measured, by their bench names.
var classes = []string{"full-text search", "typo-tolerant full-text search", "partial-match full-text search", "entity resolution"}

// tracked are the search functions whose calls each call reports: which
// path a search took.
var tracked = []string{"lb_search_pairs", "lb_search_tier_pairs", "lb_search_tiers", "lb_search_triples",
	"lb_search_postings", "lb_search_full_keys", "lb_search_word_page", "lb_search_or_sql", "lb_search_partial_sql"}

// call is one measured call.
type call struct {
	Class   string     `json:"class"`
	N       int        `json:"n"`
	Args    []any      `json:"args"`
	Rows    [][]string `json:"rows"`
	Columns []string   `json:"columns"`
	Buffers int64      `json:"buffers"`
	Read    int64      `json:"read"`
	Ms      float64    `json:"ms"`
	// FirstMs is the first run's time, client side: the statement sent
	// to its last row read (the scoping of the transaction apart). Ms is
	// the EXPLAIN ANALYZE run's, which repeats the call at once: the
	// pages the first run read are then in shared buffers.
	FirstMs float64 `json:"first_ms"`
	// FirstRead are the blocks the first run read into shared buffers
	// (from the page cache or the disk): the transaction's blocks fetched
	// less those found in shared buffers, over every relation.
	FirstRead int64 `json:"first_read"`
	// FirstFaults are the minor page faults the server's backend took
	// during the first run (/proc/PID/stat; -1 where this host has no
	// postgres process of that PID: a server elsewhere). Without huge
	// pages a backend maps each 4 kB page of shared buffers on first
	// touch, once per process.
	FirstFaults int64          `json:"first_faults"`
	Calls       map[string]int `json:"calls,omitempty"`
}

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "searchcalls:", err)
		os.Exit(1)
	}
}

func run() error {
	var f perf.CommonFlags
	fs := flag.NewFlagSet("searchcalls", flag.ExitOnError)
	f.Register(fs)
	benchSeed := fs.Uint64("bench-seed", 7, "seed of the queries and mentions (the bench's)")
	calls := fs.Int("calls", 220, "measured calls per class")
	warmup := fs.Int("warmup", 20, "untimed calls per class first (the first queries of the class, measured again after)")
	only := fs.String("classes", "", "comma-separated classes to measure (empty: "+strings.Join(classes, ", ")+")")
	answers := fs.String("answers", "", "write every call's rows and measures to this file (JSON lines)")
	compare := fs.String("compare", "", "compare the answers with this file of an earlier run (--answers)")
	perCall := fs.Bool("per-call", false, "list every call: class, number, buffers, first run blocks read, first run faults, first run ms, repeat (EXPLAIN) ms, functions called, arguments")
	_ = fs.Parse(os.Args[1:])
	if *calls < 1 || *warmup < 0 {
		return fmt.Errorf("--calls %d, --warmup %d: calls must be at least 1, warm-up calls at least 0", *calls, *warmup)
	}
	want := classes
	if *only != "" {
		want = strings.Split(*only, ",")
		for _, c := range want {
			if !slices.Contains(classes, c) {
				return fmt.Errorf("--classes: %q is not one of %s", c, strings.Join(classes, ", "))
			}
		}
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv, err := perf.OpenServer(ctx, f.ServerOptions())
	if err != nil {
		return err
	}
	defer srv.Close() //nolint:errcheck // stopping the server on exit
	fx, err := srv.Fixture(ctx, perf.FixtureOptions{
		Load:         perf.LoadOptions{Supply: f.SupplyConfig(), BatchSize: f.BatchSize, Progress: os.Stderr},
		SeedDatabase: f.SeedDatabase, Database: f.Database, Keep: f.Keep, Profile: f.Profile, InPlace: f.InPlace, Log: os.Stderr,
	})
	if err != nil {
		return err
	}
	defer func() {
		if err := fx.Drop(context.WithoutCancel(ctx)); err != nil {
			fmt.Fprintln(os.Stderr, "searchcalls: drop fixture:", err)
		}
	}()
	s, err := store.Open(ctx, fx.URL, store.Config{MaxConns: 2})
	if err != nil {
		return err
	}
	defer s.Close()
	gen, err := supply.New(f.SupplyConfig())
	if err != nil {
		return err
	}
	w, err := perf.NewWorkload(ctx, s, gen, *benchSeed, *calls)
	if err != nil {
		return err
	}
	if _, err := w.BuildIndexes(ctx); err != nil {
		return err
	}
	if _, err := s.Pool.Exec(ctx, "ANALYZE"); err != nil {
		return fmt.Errorf("analyze: %w", err)
	}
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("acquire connection: %w", err)
	}
	defer conn.Release()

	var out []call
	for _, class := range want {
		op, ok := opNamed(w, class)
		if !ok {
			return fmt.Errorf("the workload has no read %q", class)
		}
		if *warmup > 0 {
			warm, _ := opNamed(w.WithSeed(*benchSeed), class)
			for range min(*warmup, *calls) {
				sql, args := warm.Explain()
				if _, err := measure(ctx, conn.Conn(), w.DomainID, sql, args); err != nil {
					return fmt.Errorf("%s: warm-up: %w", class, err)
				}
			}
		}
		for n := 1; n <= *calls; n++ {
			sql, args := op.Explain()
			c, err := measure(ctx, conn.Conn(), w.DomainID, sql, args)
			if err != nil {
				return fmt.Errorf("%s: call %d: %w", class, n, err)
			}
			c.Class, c.N, c.Args = class, n, args
			out = append(out, c)
		}
	}
	if *perCall {
		for _, c := range out {
			fmt.Printf("%s\t%d\t%d\t%d\t%d\t%.2f\t%.2f\t%s\t%v\n", c.Class, c.N, c.Buffers, c.FirstRead, c.FirstFaults, c.FirstMs, c.Ms, callsText(c.Calls), c.Args[1:2])
		}
	}
	report(os.Stdout, out, want, perf.ReadLoadAverage())
	if *answers != "" {
		if err := writeAnswers(*answers, out); err != nil {
			return err
		}
	}
	if *compare != "" {
		before, err := readAnswers(*compare)
		if err != nil {
			return err
		}
		compareAnswers(os.Stdout, before, out, want)
	}
	return nil
}

// opNamed returns the workload's read of that name.
func opNamed(w *perf.Workload, name string) (perf.Op, bool) {
	for _, op := range w.Reads() {
		if op.Name == name && op.Explain != nil {
			return op, true
		}
	}
	return perf.Op{}, false
}

// measure runs one call as the owner in a read-only transaction scoped to
// the Domain: its rows, then EXPLAIN (ANALYZE, BUFFERS) of the same call
// for its buffers and time, with the calls of the tracked functions
// during the EXPLAIN.
func measure(ctx context.Context, conn *pgx.Conn, domain int32, sql string, args []any) (call, error) {
	var c call
	err := pgx.BeginTxFunc(ctx, conn, pgx.TxOptions{AccessMode: pgx.ReadOnly}, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SELECT set_config('lorebase.domain_id', $1, true), set_config('track_functions', 'all', true)`,
			strconv.Itoa(int(domain))); err != nil {
			return fmt.Errorf("scope: %w", err)
		}
		read0, err := blocksRead(ctx, tx)
		if err != nil {
			return err
		}
		pid := conn.PgConn().PID()
		flt0 := minorFaults(pid, "postgres")
		t0 := time.Now()
		rows, err := tx.Query(ctx, sql, args...)
		if err != nil {
			return fmt.Errorf("call: %w", err)
		}
		for _, fd := range rows.FieldDescriptions() {
			c.Columns = append(c.Columns, fd.Name)
		}
		for rows.Next() {
			vals, err := rows.Values()
			if err != nil {
				rows.Close()
				return fmt.Errorf("call: %w", err)
			}
			row := make([]string, len(vals))
			for i, v := range vals {
				row[i] = valueText(v)
			}
			c.Rows = append(c.Rows, row)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("call: %w", err)
		}
		c.FirstMs = float64(time.Since(t0).Microseconds()) / 1000
		c.FirstFaults = -1
		if flt1 := minorFaults(pid, "postgres"); flt0 >= 0 && flt1 >= 0 {
			c.FirstFaults = flt1 - flt0
		}
		read1, err := blocksRead(ctx, tx)
		if err != nil {
			return err
		}
		c.FirstRead = read1 - read0
		before, err := functionCalls(ctx, tx)
		if err != nil {
			return err
		}
		var plan []byte
		if err := tx.QueryRow(ctx, "EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) "+sql, args...).Scan(&plan); err != nil {
			return fmt.Errorf("explain: %w", err)
		}
		after, err := functionCalls(ctx, tx)
		if err != nil {
			return err
		}
		c.Calls = map[string]int{}
		for fn, n := range after {
			if d := n - before[fn]; d > 0 {
				c.Calls[fn] = int(d)
			}
		}
		var doc []struct {
			Plan     map[string]any `json:"Plan"`
			Planning map[string]any `json:"Planning"`
			Exec     float64        `json:"Execution Time"`
			Plan2    float64        `json:"Planning Time"`
		}
		if err := json.Unmarshal(plan, &doc); err != nil || len(doc) != 1 {
			return fmt.Errorf("explain: parse its JSON: %w", errors.Join(err, errors.New("want one plan")))
		}
		hit := num(doc[0].Plan["Shared Hit Blocks"]) + num(doc[0].Planning["Shared Hit Blocks"])
		read := num(doc[0].Plan["Shared Read Blocks"]) + num(doc[0].Planning["Shared Read Blocks"])
		c.Buffers, c.Read, c.Ms = hit+read, read, doc[0].Exec+doc[0].Plan2
		return nil
	})
	return c, err
}

// blocksRead are the blocks the transaction has read into shared buffers
// so far, over every relation.
func blocksRead(ctx context.Context, tx pgx.Tx) (int64, error) {
	var n int64
	err := tx.QueryRow(ctx, `SELECT coalesce(sum(pg_stat_get_xact_blocks_fetched(oid) - pg_stat_get_xact_blocks_hit(oid)), 0)::bigint
		FROM pg_class WHERE relkind IN ('r', 'i', 't', 'm')`).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("blocks read: %w", err)
	}
	return n, nil
}

// minorFaults are the minor page faults process pid, a process named
// command, has taken, from /proc/PID/stat (its tenth field), or -1 where
// it cannot be read or the process is not so named (a server on another
// host, whose backend's PID is some other process's here).
func minorFaults(pid uint32, command string) int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return -1
	}
	// The command name (field 2) is in parentheses and may hold spaces:
	// the fields after it are counted from its closing parenthesis.
	i := strings.LastIndexByte(string(b), ')')
	j := strings.IndexByte(string(b), '(')
	if i < 0 || j < 0 || j > i || string(b[j+1:i]) != command {
		return -1
	}
	f := strings.Fields(string(b[i+1:]))
	if len(f) < 8 {
		return -1
	}
	n, err := strconv.ParseInt(f[7], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

func num(v any) int64 {
	f, _ := v.(float64)
	return int64(f)
}

// functionCalls reads the backend's counts of calls of the tracked
// functions not yet sent to the statistics: a difference within one
// transaction is exact.
func functionCalls(ctx context.Context, tx pgx.Tx) (map[string]int64, error) {
	rows, err := tx.Query(ctx, `SELECT f, coalesce(pg_stat_get_xact_function_calls(to_regproc(f)), 0) FROM unnest($1::text[]) f`, tracked)
	if err != nil {
		return nil, fmt.Errorf("function calls: %w", err)
	}
	out := map[string]int64{}
	for rows.Next() {
		var fn string
		var n int64
		if err := rows.Scan(&fn, &n); err != nil {
			rows.Close()
			return nil, fmt.Errorf("function calls: %w", err)
		}
		out[fn] = n
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("function calls: %w", err)
	}
	return out, nil
}

// valueText is a column's value as text (NULL: the empty string with a
// marker no value has).
func valueText(v any) string {
	switch x := v.(type) {
	case nil:
		return "\x00NULL"
	case string:
		return x
	case float32:
		return strconv.FormatFloat(float64(x), 'g', -1, 32)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case map[string]any, []any:
		b, _ := json.Marshal(x)
		return string(b)
	default:
		return fmt.Sprint(x)
	}
}

func callsText(m map[string]int) string {
	var parts []string
	for fn, n := range m {
		parts = append(parts, fmt.Sprintf("%s=%d", strings.TrimPrefix(fn, "lb_search_"), n))
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return "-"
	}
	return strings.Join(parts, ",")
}

// report writes per class the buffers per call (mean, p50, p95, max, the
// total), the blocks read into shared buffers by the repeat (EXPLAIN's
// shared read) and by the first runs, the milliseconds of the first run
// (client side) and the server backend's minor page faults during them,
// and under EXPLAIN ANALYZE (the call repeated), and how
// many calls ran each tracked function.
func report(out io.Writer, cs []call, want []string, load string) {
	fmt.Fprintf(out, "load average: %s\n\n", load)
	fmt.Fprintln(out, "| class | calls | buffers total | per call mean | p50 | p95 | max | repeat read | first run read | first run faults | first run ms p50 | p95 | repeat (EXPLAIN) ms p50 | p95 | calls running each function |")
	fmt.Fprintln(out, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |")
	for _, class := range want {
		var bufs []int64
		var ms, first []float64
		var total, read, firstRead, faults int64
		fns := map[string]int{}
		for _, c := range cs {
			if c.Class != class {
				continue
			}
			bufs = append(bufs, c.Buffers)
			ms = append(ms, c.Ms)
			first = append(first, c.FirstMs)
			total += c.Buffers
			read += c.Read
			firstRead += c.FirstRead
			if c.FirstFaults < 0 || faults < 0 {
				faults = -1
			} else {
				faults += c.FirstFaults
			}
			for fn := range c.Calls {
				fns[fn]++
			}
		}
		if len(bufs) == 0 {
			continue
		}
		slices.Sort(bufs)
		slices.Sort(ms)
		slices.Sort(first)
		faultText := "-"
		if faults >= 0 {
			faultText = strconv.FormatInt(faults, 10)
		}
		fmt.Fprintf(out, "| %s | %d | %d | %.0f | %d | %d | %d | %d | %d | %s | %.2f | %.2f | %.2f | %.2f | %s |\n", class, len(bufs), total,
			float64(total)/float64(len(bufs)), bufs[len(bufs)/2], bufs[(len(bufs)*95-1)/100], bufs[len(bufs)-1], read, firstRead, faultText,
			first[len(first)/2], first[(len(first)*95-1)/100], ms[len(ms)/2], ms[(len(ms)*95-1)/100], callsText(fns))
	}
}

func writeAnswers(path string, cs []call) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("answers: %w", err)
	}
	enc := json.NewEncoder(f)
	for _, c := range cs {
		if err := enc.Encode(c); err != nil {
			_ = f.Close()
			return fmt.Errorf("answers: write %s: %w", path, err)
		}
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("answers: write %s: %w", path, err)
	}
	return nil
}

func readAnswers(path string) ([]call, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("compare: %w", err)
	}
	defer f.Close() //nolint:errcheck // read only
	var out []call
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 1<<26)
	for sc.Scan() {
		var c call
		if err := json.Unmarshal(sc.Bytes(), &c); err != nil {
			return nil, fmt.Errorf("compare: read %s: %w", path, err)
		}
		out = append(out, c)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("compare: read %s: %w", path, err)
	}
	return out, nil
}

// answerRows are a call's rows without the column ranked.
func answerRows(c call) []string {
	skip := slices.Index(c.Columns, "ranked")
	var out []string
	for _, r := range c.Rows {
		var kept []string
		for i, v := range r {
			if i != skip {
				kept = append(kept, v)
			}
		}
		out = append(out, strings.Join(kept, "\t"))
	}
	return out
}

// compareAnswers reports per class the calls whose rows differ from the
// earlier run's (the same class and call number, the same arguments), the
// calls whose ranked differs, the buffers before and after, and the first
// differing call of each class.
func compareAnswers(out io.Writer, before, after []call, want []string) {
	type key struct {
		class string
		n     int
	}
	old := map[key]call{}
	for _, c := range before {
		old[key{c.Class, c.N}] = c
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "| class | calls compared | answers differ | ranked differs | buffers before | buffers after |")
	fmt.Fprintln(out, "| --- | ---: | ---: | ---: | ---: | ---: |")
	for _, class := range want {
		var n, differ, rankedDiffer int
		var bb, ba int64
		var first []string
		for _, c := range after {
			o, ok := old[key{c.Class, c.N}]
			if c.Class != class || !ok || fmt.Sprint(o.Args) != fmt.Sprint(c.Args) {
				continue
			}
			n++
			bb += o.Buffers
			ba += c.Buffers
			a, b := answerRows(o), answerRows(c)
			if !slices.Equal(a, b) {
				differ++
				if len(first) < 3 {
					first = append(first, fmt.Sprintf("%s call %d %v:\n  before %q\n  after  %q", class, c.N, c.Args[1], a, b))
				}
			} else if fmt.Sprint(o.Rows) != fmt.Sprint(c.Rows) {
				rankedDiffer++
			}
		}
		fmt.Fprintf(out, "| %s | %d | %d | %d | %d | %d |\n", class, n, differ, rankedDiffer, bb, ba)
		for _, s := range first {
			fmt.Fprintln(os.Stderr, s)
		}
	}
}
