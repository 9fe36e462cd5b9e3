package perf

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"io"
	"slices"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// SearchClass is a class of search queries: its name and the queries a run
// cycles through (Resolve: entity resolution's mentions, not search queries).
type SearchClass struct {
	Name    string
	Queries []string
	Resolve bool
}

// SearchClasses are the query classes of the search reads, n queries each,
// drawn as the reads draw them: one title word, one misspelled title word,
// two title words, three title words (partial match: three words rarely
// share a title) and Supplier names, every other one misspelled (entity
// resolution).
func (w *Workload) SearchClasses(n int) []SearchClass {
	n = max(n, 1)
	typos := supply.Typos(w.Seed+1, n)
	misspelled := make([]string, len(typos))
	for i, t := range typos {
		misspelled[i] = t.Misspelled
	}
	pairs := make([]string, 0, n)
	ws := supply.Words(w.Seed+3, 4*n)
	for i := 0; i+1 < len(ws) && len(pairs) < n; i += 2 {
		if ws[i] != ws[i+1] {
			pairs = append(pairs, ws[i]+" "+ws[i+1])
		}
	}
	m := w.mentions(4)
	mentions := make([]string, n)
	for i := range mentions {
		mentions[i] = m.take()
	}
	return []SearchClass{
		{Name: "one word", Queries: supply.Words(w.Seed, n)},
		{Name: "misspelled word", Queries: misspelled},
		{Name: "two words", Queries: pairs},
		{Name: "partial match (3 words)", Queries: supply.Queries(w.Seed+2, n)},
		{Name: "entity resolution", Queries: mentions, Resolve: true},
	}
}

// SearchPlanOptions configure MeasureSearchPlans.
type SearchPlanOptions struct {
	// Warmup calls per class run before the counts are reset (a session
	// keeps a PL/pgSQL statement's generic plan from its sixth run).
	Warmup int
	// Calls are the counted calls per class.
	Calls int
	// Top lists this many statements per class, those planned most
	// (0: none).
	Top int
	// Log receives a line per class (nil: none).
	Log io.Writer
}

// StatementCount is one statement's plans and runs over a class's calls.
type StatementCount struct {
	Query    string
	TopLevel bool
	Plans    int64
	Calls    int64
}

// SearchPlans is what one class's calls planned and ran.
type SearchPlans struct {
	Class string
	Calls int
	// Plans and Statements are the statements planned and run, top level
	// and nested (PL/pgSQL and SQL function bodies), over Calls.
	Plans      int64
	Statements int64
	// Top are the statements planned most, most first.
	Top []StatementCount
}

// PlansPerCall is the statements planned per call.
func (p SearchPlans) PlansPerCall() float64 { return float64(p.Plans) / float64(max(p.Calls, 1)) }

// StatementsPerCall is the statements run per call.
func (p SearchPlans) StatementsPerCall() float64 {
	return float64(p.Statements) / float64(max(p.Calls, 1))
}

// ErrNoStatementStats means the server does not load pg_stat_statements.
var ErrNoStatementStats = errors.New("pg_stat_statements is not loaded (shared_preload_libraries = 'pg_stat_statements')")

// EnableStatementStats prepares the database of the superuser connection
// conn for MeasureSearchPlans: pg_stat_statements created in it, and
// nested statements and planning counted for its new sessions
// (pg_stat_statements.track = all, track_planning = on). It fails with
// ErrNoStatementStats where the server does not load the library.
func EnableStatementStats(ctx context.Context, conn *pgx.Conn) error {
	var libs string
	if err := conn.QueryRow(ctx, `SELECT current_setting('shared_preload_libraries')`).Scan(&libs); err != nil {
		return fmt.Errorf("read shared_preload_libraries: %w", err)
	}
	if !slices.Contains(strings.Split(strings.ReplaceAll(libs, " ", ""), ","), "pg_stat_statements") {
		return ErrNoStatementStats
	}
	var db string
	if err := conn.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		return fmt.Errorf("current database: %w", err)
	}
	for _, q := range []string{
		`CREATE EXTENSION IF NOT EXISTS pg_stat_statements`,
		`ALTER DATABASE ` + pgx.Identifier{db}.Sanitize() + ` SET pg_stat_statements.track = 'all'`,
		`ALTER DATABASE ` + pgx.Identifier{db}.Sanitize() + ` SET pg_stat_statements.track_planning = on`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("enable statement stats: %s: %w", q, err)
		}
	}
	return nil
}

// DisableStatementStats resets what EnableStatementStats set on the
// database (the extension stays).
func DisableStatementStats(ctx context.Context, conn *pgx.Conn) error {
	var db string
	if err := conn.QueryRow(ctx, `SELECT current_database()`).Scan(&db); err != nil {
		return fmt.Errorf("current database: %w", err)
	}
	for _, q := range []string{
		`ALTER DATABASE ` + pgx.Identifier{db}.Sanitize() + ` RESET pg_stat_statements.track`,
		`ALTER DATABASE ` + pgx.Identifier{db}.Sanitize() + ` RESET pg_stat_statements.track_planning`,
	} {
		if _, err := conn.Exec(ctx, q); err != nil {
			return fmt.Errorf("disable statement stats: %s: %w", q, err)
		}
	}
	return nil
}

// resetStatsSQL empties pg_stat_statements for the current database; the
// statements naming pg_stat_statements are left out of the counts.
const resetStatsSQL = `SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)`

const statsSQL = `SELECT query, toplevel, plans, calls FROM pg_stat_statements
	WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())
	  AND query NOT LIKE '%pg_stat_statements%'`

// MeasureSearchPlans runs each class's searches through r (whose store must
// hold one request connection, so one session's plan cache serves every
// call) and counts, from pg_stat_statements read through the superuser
// connection stats (EnableStatementStats run before r's session started),
// the statements planned and run per call after the warm-up.
func MeasureSearchPlans(ctx context.Context, stats *pgx.Conn, r *reads.Reader, domainID int32, branch string,
	classes []SearchClass, opts SearchPlanOptions) ([]SearchPlans, error) {
	if opts.Calls < 1 {
		return nil, fmt.Errorf("search plans: %d calls: want at least 1", opts.Calls)
	}
	out := make([]SearchPlans, 0, len(classes))
	for _, c := range classes {
		if len(c.Queries) == 0 {
			return nil, fmt.Errorf("search plans: class %s has no queries", c.Name)
		}
		i := 0
		call := func() error {
			q := c.Queries[i%len(c.Queries)]
			i++
			var err error
			if c.Resolve {
				_, err = r.Resolve(ctx, domainID, branch, q, "", 0)
			} else {
				_, err = r.Search(ctx, domainID, branch, reads.SearchQuery{Q: q})
			}
			if err != nil {
				return fmt.Errorf("search plans: %s %q: %w", c.Name, q, err)
			}
			return nil
		}
		for range opts.Warmup {
			if err := call(); err != nil {
				return nil, err
			}
		}
		if _, err := stats.Exec(ctx, resetStatsSQL); err != nil {
			return nil, fmt.Errorf("search plans: reset pg_stat_statements: %w", err)
		}
		for range opts.Calls {
			if err := call(); err != nil {
				return nil, err
			}
		}
		rows, err := stats.Query(ctx, statsSQL)
		if err != nil {
			return nil, fmt.Errorf("search plans: read pg_stat_statements: %w", err)
		}
		sts, err := pgx.CollectRows(rows, pgx.RowToStructByPos[StatementCount])
		if err != nil {
			return nil, fmt.Errorf("search plans: read pg_stat_statements: %w", err)
		}
		p := SearchPlans{Class: c.Name, Calls: opts.Calls}
		for _, s := range sts {
			p.Plans += s.Plans
			p.Statements += s.Calls
		}
		slices.SortFunc(sts, func(a, b StatementCount) int {
			return cmp.Or(cmp.Compare(b.Plans, a.Plans), cmp.Compare(b.Calls, a.Calls))
		})
		for _, s := range sts[:min(opts.Top, len(sts))] {
			if s.Plans > 0 {
				p.Top = append(p.Top, s)
			}
		}
		if opts.Log != nil {
			fmt.Fprintf(opts.Log, "search plans: %s: %.2f plans, %.2f statements per call\n", c.Name, p.PlansPerCall(), p.StatementsPerCall())
		}
		out = append(out, p)
	}
	return out, nil
}

// WriteSearchPlans writes the counts as a Markdown table, then each
// class's statements planned most.
func WriteSearchPlans(w io.Writer, ps []SearchPlans) {
	fmt.Fprintln(w, "| class | calls | plans per call | statements per call |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: |")
	for _, p := range ps {
		fmt.Fprintf(w, "| %s | %d | %.2f | %.2f |\n", p.Class, p.Calls, p.PlansPerCall(), p.StatementsPerCall())
	}
	for _, p := range ps {
		if len(p.Top) == 0 {
			continue
		}
		fmt.Fprintf(w, "\n%s: statements planned most (plans, runs over %d calls)\n\n", p.Class, p.Calls)
		for _, s := range p.Top {
			q := strings.Join(strings.Fields(s.Query), " ")
			if len(q) > 160 {
				q = q[:160] + "…"
			}
			lvl := "nested"
			if s.TopLevel {
				lvl = "top"
			}
			fmt.Fprintf(w, "- %d plans, %d runs, %s: `%s`\n", s.Plans, s.Calls, lvl, q)
		}
	}
}

// OneSessionStore opens a store on url whose request pool holds one
// connection, so every call of MeasureSearchPlans runs in one session.
func OneSessionStore(ctx context.Context, url string) (*store.Store, error) {
	return store.Open(ctx, url, store.Config{MaxConns: 1, OwnerMaxConns: 2})
}

// SearchClassPlans are the plan shapes (ParsePlanNotice) of the statements
// one class's calls ran, by statement text, as auto_explain logged them.
type SearchClassPlans struct {
	Class  string
	Shapes map[string][]string
}

// ExplainSearchClasses runs each class's calls in a session of its own
// on url (a superuser's: auto_explain is loaded per session), warmup calls
// first, then calls with auto_explain's nested plans (no ANALYZE), and
// returns each statement's distinct plan shapes: the plans the session
// keeps, to compare between two versions of the functions.
func (w *Workload) ExplainSearchClasses(ctx context.Context, url string, classes []SearchClass, warmup, calls int) ([]SearchClassPlans, error) {
	out := make([]SearchClassPlans, 0, len(classes))
	for _, c := range classes {
		p, err := w.explainClass(ctx, url, c, warmup, calls)
		if err != nil {
			return nil, fmt.Errorf("explain %s: %w", c.Name, err)
		}
		out = append(out, p)
	}
	return out, nil
}

func (w *Workload) explainClass(ctx context.Context, url string, c SearchClass, warmup, calls int) (SearchClassPlans, error) {
	res := SearchClassPlans{Class: c.Name, Shapes: map[string][]string{}}
	pc, err := pgxpool.ParseConfig(url)
	if err != nil {
		return res, fmt.Errorf("parse database URL: %w", err)
	}
	pc.MaxConns, pc.MinConns = 1, 0
	pc.ConnConfig.RuntimeParams["jit"] = "off"
	var mu sync.Mutex
	var notices []string
	collect := false
	pc.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		if collect {
			notices = append(notices, n.Message)
		}
		mu.Unlock()
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return res, fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	for _, q := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`,
		`SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_level = notice`} {
		if _, err := pool.Exec(ctx, q); err != nil {
			return res, fmt.Errorf("%s: %w", q, err)
		}
	}
	r := reads.New(&store.Store{Pool: w.Store.Pool, Requests: pool}, reads.Config{})
	for i := range warmup + calls {
		if i == warmup {
			mu.Lock()
			collect = true
			mu.Unlock()
		}
		q := c.Queries[i%len(c.Queries)]
		if c.Resolve {
			_, err = r.Resolve(ctx, w.DomainID, Branch, q, "", 0)
		} else {
			_, err = r.Search(ctx, w.DomainID, Branch, reads.SearchQuery{Q: q})
		}
		if err != nil {
			return res, fmt.Errorf("%q: %w", q, err)
		}
	}
	mu.Lock()
	defer mu.Unlock()
	for _, n := range notices {
		st, ok := ParsePlanNotice(n)
		if !ok {
			continue
		}
		text := strings.Join(strings.Fields(st.Text), " ")
		if !slices.Contains(res.Shapes[text], st.Shape) {
			res.Shapes[text] = append(res.Shapes[text], st.Shape)
		}
	}
	return res, nil
}

// WriteSearchClassPlans writes each class's statements (sorted by text)
// with their plan shapes, one node a line; a sequential scan of a table
// is marked.
func WriteSearchClassPlans(out io.Writer, ps []SearchClassPlans) {
	for _, p := range ps {
		fmt.Fprintf(out, "## %s\n\n", p.Class)
		texts := make([]string, 0, len(p.Shapes))
		for t := range p.Shapes {
			texts = append(texts, t)
		}
		slices.Sort(texts)
		for _, t := range texts {
			fmt.Fprintf(out, "### %s\n\n", t)
			for _, sh := range p.Shapes[t] {
				if strings.Contains(sh, "Seq Scan on mat_") {
					fmt.Fprintln(out, "SEQUENTIAL SCAN")
				}
				fmt.Fprintf(out, "```\n%s\n```\n\n", sh)
			}
		}
	}
}
