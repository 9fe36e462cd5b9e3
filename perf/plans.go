package perf

import (
	"context"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// PlanAuditOptions selects what AuditPlans measures.
type PlanAuditOptions struct {
	// URL is the database of the Workload's store, connected to as a
	// superuser (auto_explain is loaded in the audited sessions).
	URL string
	// Branches are the branches read (each read draws the same inputs on
	// every branch).
	Branches []string
	// Reads names the reads audited (empty: every read).
	Reads []string
	// Calls is the number of calls of each read in one session.
	Calls int
	// Log, when set, receives progress lines.
	Log io.Writer
}

// PlanStatement is one statement auto_explain logged during a call: its
// text, the shape of its plan (node lines without costs or numbers),
// whether the plan holds parameters (a generic plan) and its duration.
type PlanStatement struct {
	Text     string
	Shape    string
	Generic  bool
	Duration float64
}

// AuditCall is one call of a read in an audited session.
type AuditCall struct {
	Call       int
	Duration   time.Duration
	Statements []PlanStatement
}

// PlanRun is the calls of one read on one branch in one session under one
// plan_cache_mode.
type PlanRun struct {
	Read, Branch, Mode string
	Explained          bool
	Calls              []AuditCall
}

// PlanChange is a statement whose plan shape from the sixth call of a
// session is one the first five calls did not use.
type PlanChange struct {
	Read, Branch, Text  string
	Before, After       string
	BeforeMs, AfterMs   float64
	FirstCall, Calls    int
	GenericAfter        bool
	BeforeCalls, AfterN int
}

// AuditPlans calls each read Calls times in one session per branch and
// plan_cache_mode (auto with auto_explain's nested plans; then auto and
// force_custom_plan without it, alternating, for the timings), each
// session a fresh connection, so that the switch to kept generic plans
// after the fifth execution shows call by call.
func (w *Workload) AuditPlans(ctx context.Context, opts PlanAuditOptions) ([]PlanRun, error) {
	var runs []PlanRun
	for _, br := range opts.Branches {
		names := ReadNames()
		for i, name := range names {
			if len(opts.Reads) > 0 && !slices.Contains(opts.Reads, name) {
				continue
			}
			for _, pass := range []struct {
				mode    string
				explain bool
			}{{"auto", true}, {"auto", false}, {"force_custom_plan", false}, {"auto", false}, {"force_custom_plan", false}} {
				run, err := w.auditRun(ctx, opts, br, i, pass.mode, pass.explain)
				if err != nil {
					return runs, fmt.Errorf("%s on %s (%s): %w", name, br, pass.mode, err)
				}
				runs = append(runs, *run)
			}
			if opts.Log != nil {
				fmt.Fprintf(opts.Log, "plans: %s on %s audited\n", name, br)
			}
		}
	}
	return runs, nil
}

// auditRun runs read number idx on br Calls times on a session of its own.
func (w *Workload) auditRun(ctx context.Context, opts PlanAuditOptions, br string, idx int, mode string, explain bool) (*PlanRun, error) {
	pc, err := pgxpool.ParseConfig(opts.URL)
	if err != nil {
		return nil, fmt.Errorf("parse database URL: %w", err)
	}
	pc.MaxConns, pc.MinConns = 1, 0
	pc.ConnConfig.RuntimeParams["jit"] = "off"
	pc.ConnConfig.RuntimeParams["plan_cache_mode"] = mode
	var mu sync.Mutex
	var notices []string
	pc.ConnConfig.OnNotice = func(_ *pgconn.PgConn, n *pgconn.Notice) {
		mu.Lock()
		notices = append(notices, n.Message)
		mu.Unlock()
	}
	pool, err := pgxpool.NewWithConfig(ctx, pc)
	if err != nil {
		return nil, fmt.Errorf("connect: %w", err)
	}
	defer pool.Close()
	if explain {
		for _, q := range []string{`LOAD 'auto_explain'`, `SET auto_explain.log_min_duration = 0`,
			`SET auto_explain.log_nested_statements = on`, `SET auto_explain.log_analyze = on`,
			`SET auto_explain.log_buffers = on`, `SET auto_explain.log_timing = on`,
			`SET auto_explain.log_level = notice`} {
			if _, err := pool.Exec(ctx, q); err != nil {
				return nil, fmt.Errorf("%s: %w", q, err)
			}
		}
	}
	ws := *w
	ws.Store = &store.Store{Pool: w.Store.Pool, Requests: pool}
	ws.Reader = reads.New(ws.Store, reads.Config{})
	op := ws.ReadsOn(br)[idx]
	run := &PlanRun{Read: op.Name, Branch: br, Mode: mode, Explained: explain}
	for call := 1; call <= opts.Calls; call++ {
		mu.Lock()
		notices = notices[:0]
		mu.Unlock()
		start := time.Now()
		if _, err := op.Answer(ctx); err != nil {
			return nil, fmt.Errorf("call %d: %w", call, err)
		}
		d := time.Since(start)
		mu.Lock()
		pcall := AuditCall{Call: call, Duration: d}
		for _, n := range notices {
			if st, ok := ParsePlanNotice(n); ok {
				pcall.Statements = append(pcall.Statements, st)
			}
		}
		mu.Unlock()
		run.Calls = append(run.Calls, pcall)
	}
	return run, nil
}

var (
	durationRe = regexp.MustCompile(`^duration: ([0-9.]+) ms`)
	paramRe    = regexp.MustCompile(`\$[0-9]+`)
	numbersRe  = regexp.MustCompile(`[0-9]+(\.[0-9]+)?`)
)

// ParsePlanNotice reads one auto_explain message in text format
// ("duration: D ms  plan:", "Query Text: ...", the plan): the statement's
// text, duration, plan shape (each plan node's line before its costs,
// numbers blanked: node types, relations and indexes) and whether the plan
// holds parameters ($n: a generic plan).
func ParsePlanNotice(msg string) (PlanStatement, bool) {
	lines := strings.Split(msg, "\n")
	m := durationRe.FindStringSubmatch(lines[0])
	if m == nil || len(lines) < 3 || !strings.HasPrefix(lines[1], "Query Text: ") {
		return PlanStatement{}, false
	}
	dur, _ := strconv.ParseFloat(m[1], 64) //nolint:errcheck // the regexp admits only numbers
	first := -1
	for i := 2; i < len(lines); i++ {
		if strings.Contains(lines[i], "(cost=") {
			first = i
			break
		}
	}
	if first < 0 {
		return PlanStatement{}, false
	}
	text := strings.TrimPrefix(strings.Join(lines[1:first], "\n"), "Query Text: ")
	var shape []string
	generic := false
	for _, l := range lines[first:] {
		if paramRe.MatchString(l) {
			generic = true
		}
		i := strings.Index(l, "(cost=")
		if i < 0 {
			continue
		}
		node := strings.TrimRight(l[:i], " ")
		node = numbersRe.ReplaceAllString(node, "N")
		shape = append(shape, node)
	}
	return PlanStatement{Text: strings.TrimSpace(text), Shape: strings.Join(shape, "\n"), Generic: generic, Duration: dur}, true
}

// PlanChanges finds, in explained runs, the statements (by text) whose
// plan shape in a call after the fifth is one no call of the first five
// used, with their mean durations before and after.
func PlanChanges(runs []PlanRun) []PlanChange {
	var out []PlanChange
	for _, r := range runs {
		if !r.Explained {
			continue
		}
		type seen struct {
			shapes            map[string]bool
			beforeMs, afterMs []float64
			after             map[string]int
			first             int
			generic           bool
		}
		byText := map[string]*seen{}
		var order []string
		for _, c := range r.Calls {
			for _, st := range c.Statements {
				s := byText[st.Text]
				if s == nil {
					s = &seen{shapes: map[string]bool{}, after: map[string]int{}}
					byText[st.Text] = s
					order = append(order, st.Text)
				}
				if c.Call <= 5 {
					s.shapes[st.Shape] = true
					s.beforeMs = append(s.beforeMs, st.Duration)
					continue
				}
				s.afterMs = append(s.afterMs, st.Duration)
				if !s.shapes[st.Shape] {
					if s.first == 0 {
						s.first = c.Call
					}
					s.after[st.Shape]++
					s.generic = s.generic || st.Generic
				}
			}
		}
		for _, text := range order {
			s := byText[text]
			if len(s.after) == 0 || len(s.shapes) == 0 {
				continue
			}
			var before []string
			for sh := range s.shapes {
				before = append(before, sh)
			}
			sort.Strings(before)
			after, n := "", 0
			for sh, k := range s.after {
				if k > n || (k == n && sh < after) {
					after, n = sh, k
				}
			}
			out = append(out, PlanChange{Read: r.Read, Branch: r.Branch, Text: text,
				Before: strings.Join(before, "\n--\n"), After: after, BeforeMs: mean(s.beforeMs), AfterMs: mean(s.afterMs),
				FirstCall: s.first, Calls: n, GenericAfter: s.generic, BeforeCalls: len(s.beforeMs), AfterN: len(s.afterMs)})
		}
	}
	return out
}

func mean(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	t := 0.0
	for _, x := range xs {
		t += x
	}
	return t / float64(len(xs))
}

// WritePlanAudit writes the audit's timings (per read and branch: calls 1
// to 5 and 6 on, auto against force_custom_plan, p50 in milliseconds) and
// its plan changes.
func WritePlanAudit(out io.Writer, runs []PlanRun) {
	type key struct{ read, branch string }
	times := map[key]map[string][]time.Duration{}
	var keys []key
	for _, r := range runs {
		if r.Explained {
			continue
		}
		k := key{r.Read, r.Branch}
		if times[k] == nil {
			times[k] = map[string][]time.Duration{}
			keys = append(keys, k)
		}
		for _, c := range r.Calls {
			part := "first"
			if c.Call > 5 {
				part = "later"
			}
			times[k][r.Mode+" "+part] = append(times[k][r.Mode+" "+part], c.Duration)
		}
	}
	fmt.Fprintln(out, "| read | branch | auto p50 calls 1-5 | auto p50 calls 6+ | custom p50 calls 1-5 | custom p50 calls 6+ | auto/custom 6+ | n 6+ |")
	fmt.Fprintln(out, "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, k := range keys {
		t := times[k]
		a, c := Summarize(t["auto later"]), Summarize(t["force_custom_plan later"])
		ratio := 0.0
		if c.P50 > 0 {
			ratio = float64(a.P50) / float64(c.P50)
		}
		fmt.Fprintf(out, "| %s | %s | %s | %s | %s | %s | %.2f | %d |\n", k.read, k.branch,
			ms(Summarize(t["auto first"]).P50), ms(a.P50), ms(Summarize(t["force_custom_plan first"]).P50), ms(c.P50), ratio, a.N)
	}
	fmt.Fprintln(out)
	fmt.Fprintln(out, "Statements whose plan from the sixth call is a shape the first five calls did not use (auto, auto_explain):")
	for _, ch := range PlanChanges(runs) {
		fmt.Fprintf(out, "\n### %s on %s: from call %d (%d of %d later calls), generic %v, mean %.3f ms in calls 1-5 (%d), %.3f after (%d)\n\n",
			ch.Read, ch.Branch, ch.FirstCall, ch.Calls, ch.AfterN, ch.GenericAfter, ch.BeforeMs, ch.BeforeCalls, ch.AfterMs, ch.AfterN)
		fmt.Fprintf(out, "```\n%s\n-- before:\n%s\n-- after:\n%s\n```\n", ch.Text, ch.Before, ch.After)
	}
}
