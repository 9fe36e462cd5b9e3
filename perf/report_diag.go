package perf

import (
	"fmt"
	"strings"
	"time"
)

// writeColdWarm writes the cold and warm passes side by side.
func (r *Report) writeColdWarm(p func(string, ...any)) {
	cw := r.ColdWarm
	if cw == nil {
		return
	}
	p("")
	p("## Cold and warm reads (milliseconds)")
	p("")
	p("Cold: keys and queries drawn from seeds this run had not used (owner seed %d, rls seed %d); warm: the same calls again right after (warm-up included, as many timed calls as the cold pass measured). n: timed calls measured (* the time limit cut them short).", cw.OwnerSeed, cw.RLSSeed)
	p("")
	p("| Operation | Target p95 | Role | cold p50 | cold p95 | cold p99 | cold n | warm p50 | warm p95 | warm p99 | warm n | cold/warm p95 |")
	p("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for i, c := range cw.Cold {
		var w Result
		if i < len(cw.Warm) {
			w = cw.Warm[i]
		}
		for _, role := range []string{"owner", "rls"} {
			cs, ws := c.Owner, w.Owner
			if role == "rls" {
				cs, ws = c.RLS, w.RLS
			}
			if cs == nil && ws == nil {
				continue
			}
			rt := "—"
			if cs != nil && ws != nil && ws.P95 > 0 {
				rt = fmt.Sprintf("%.1f×", float64(cs.P95)/float64(ws.P95))
			}
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |", c.Name, target(c.Target), role,
				stat(cs, 50), stat(cs, 95), stat(cs, 99), count(cs), stat(ws, 50), stat(ws, 95), stat(ws, 99), count(ws), rt)
		}
	}
}

// writePrewarm writes the storage prewarm run before the reads.
func (r *Report) writePrewarm(p func(string, ...any)) {
	pr := r.Prewarm
	if pr == nil {
		return
	}
	p("")
	p("## Prewarm")
	p("")
	if pr.Error != "" {
		p("`storage prewarm` failed after %s: %s.", pr.Took.Round(time.Millisecond), pr.Error)
		return
	}
	res := pr.Result
	partial := 0
	for _, s := range res.Steps {
		if s.Partial {
			partial++
		}
	}
	when := "before the reads"
	if r.PrewarmForGate {
		when = "after the reads pass, before the reads paired with the floor"
	}
	p("`storage prewarm --domain %s` (the storage command's code) %s: %s loaded into shared buffers in %s (budget %s, shared_buffers %s), %d relations (%d partly), %d left out past the budget.",
		res.Domain, when, mib(res.Loaded), pr.Took.Round(time.Millisecond), mib(res.Budget), mib(res.SharedBuffers), len(res.Steps), partial, len(res.Skipped))
}

// writeResidency writes what shared buffers held at moments of the run.
func (r *Report) writeResidency(p func(string, ...any)) {
	if len(r.Residency) == 0 && r.ResidencySkipped == "" {
		return
	}
	p("")
	p("## Cache residency (pg_buffercache)")
	p("")
	if len(r.Residency) == 0 {
		p("Not measured: %s.", r.ResidencySkipped)
		return
	}
	p("Shared buffers by relation of the measured database (main fork), the largest holders first; cached: the part of the relation in shared buffers (the kernel's page cache is not counted).")
	for _, x := range r.Residency {
		p("")
		p("%s: shared buffers %s, %s in use, %s of this database (read in %s).", x.Label, mib(x.SharedBuffers), mib(x.Used), mib(x.Database), x.Took.Round(time.Millisecond))
		p("")
		p("| Relation | Kind | In shared buffers | Size | Cached |")
		p("| --- | --- | ---: | ---: | ---: |")
		for _, t := range x.Top {
			p("| %s | %s | %s | %s | %.0f%% |", t.Relation, relKind(t.Kind), mib(t.Cached), mib(t.Size), 100*t.Fraction())
		}
	}
}

// writeExplains writes the EXPLAIN of the reads over budget.
func (r *Report) writeExplains(p func(string, ...any)) {
	if len(r.Explains) == 0 && r.ExplainNote == "" {
		return
	}
	p("")
	p("## Why reads miss their budget (EXPLAIN)")
	if r.ExplainNote != "" {
		p("")
		p("%s", r.ExplainNote)
	}
	if len(r.Explains) > 0 {
		p("")
		p("Times under EXPLAIN ANALYZE (and auto_explain, when loaded) include their instrumentation; shared blocks read are blocks not found in shared buffers (from the kernel's page cache or the disk).")
	}
	for _, e := range r.Explains {
		p("")
		p("### %s", e.Name)
		p("")
		p("%s. `EXPLAIN (ANALYZE, BUFFERS)` as lorebase_app of `%s` with %s: the slowest of %d calls on fresh keys (cold), then the same call again (warm).", e.Why, e.SQL, e.Args, e.Samples)
		if e.Error != "" {
			p("")
			p("Failed: %s.", e.Error)
		}
		for _, c := range []struct {
			label string
			pc    *PlanCall
		}{{"cold", e.Cold}, {"warm", e.Warm}} {
			if c.pc == nil {
				continue
			}
			pc := c.pc
			p("")
			p("- %s: planning %s ms, execution %s ms, shared blocks hit %s, read %s.", c.label, ms(pc.Planning), ms(pc.Execution),
				thousands(pc.SharedHit), thousands(pc.SharedRead))
			if len(pc.Plan) == 0 && len(pc.Nested) == 0 {
				continue
			}
			p("")
			p("```")
			for _, l := range pc.Plan {
				p("%s", l)
			}
			for _, n := range pc.Nested {
				p("")
				p("-- inside the function (auto_explain):")
				p("%s", n.Text)
			}
			p("```")
		}
		if e.NestedSkipped != "" {
			p("")
			p("The statements inside the function were not explained: %s.", e.NestedSkipped)
		}
	}
}

func relKind(k string) string {
	switch k {
	case "r":
		return "table"
	case "i":
		return "index"
	case "t":
		return "TOAST"
	case "m":
		return "materialized view"
	}
	return k
}

// mib formats bytes in MiB (GiB past 10 GiB).
func mib(b int64) string {
	if b >= 10<<30 {
		return fmt.Sprintf("%.1f GiB", float64(b)/(1<<30))
	}
	return fmt.Sprintf("%s MiB", strings.TrimSuffix(fmt.Sprintf("%.1f", float64(b)/(1<<20)), ".0"))
}
