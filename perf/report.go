package perf

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"sort"
	"strings"
	"time"
)

// Report is one run of the harness: where and on what it measured, and the
// results. It is written as Markdown for people and as JSON for comparisons.
type Report struct {
	At         time.Time     `json:"at"`
	Command    string        `json:"command"`
	Machine    Machine       `json:"machine"`
	Postgres   Postgres      `json:"postgres"`
	Dataset    Dataset       `json:"dataset"`
	Load       *LoadResult   `json:"load,omitempty"`
	FromSeed   string        `json:"from_seed,omitempty"`
	InPlace    bool          `json:"in_place,omitempty"`
	IndexBuild time.Duration `json:"index_build_ns"`
	Warmup     int           `json:"warmup"`
	Iterations int           `json:"iterations"`
	Floor      Result        `json:"floor"`
	Reads      []Result      `json:"reads"`
	Writes     []Result      `json:"writes"`
	// Parts names the parts the run measured (--parts; empty: every part).
	Parts []string `json:"parts,omitempty"`
	// ReadsSkipped says why Floor and Reads are empty.
	ReadsSkipped string `json:"reads_skipped,omitempty"`
	// WritesSkipped says why Writes is empty.
	WritesSkipped string `json:"writes_skipped,omitempty"`
	// NotMeasured names the reads of design section 6 this run could not
	// measure (not implemented yet).
	NotMeasured []string `json:"not_measured,omitempty"`
	// Replicate is the replication of a replicated dataset.
	Replicate *ReplicateResult `json:"replicate,omitempty"`
	// Concurrency is the concurrent measurement (nil: not run).
	Concurrency *Concurrency `json:"concurrency,omitempty"`
	// ConcurrencySkipped says why Concurrency is nil.
	ConcurrencySkipped string `json:"concurrency_skipped,omitempty"`
	// Branches is the branch measurement (nil: not run).
	Branches *Branches `json:"branches,omitempty"`
	// BranchesSkipped says why Branches is nil.
	BranchesSkipped string `json:"branches_skipped,omitempty"`
	// Merges is the Proposal measurement (nil: not run).
	Merges *Merges `json:"merges,omitempty"`
	// MergesSkipped says why Merges is nil.
	MergesSkipped string `json:"merges_skipped,omitempty"`
	// SearchWords tells how many Records the full-text search words match.
	SearchWords *WordMatches `json:"search_words,omitempty"`
	// HTTP are reads through a Keeper over loopback HTTP.
	HTTP []Result `json:"http,omitempty"`
	// HTTPGate is the reads over HTTP paired call by call with the floor
	// (nil: not run).
	HTTPGate *Gate `json:"http_gate,omitempty"`
	// HTTPSkipped says why HTTP is empty.
	HTTPSkipped string `json:"http_skipped,omitempty"`
	// Ranking is the ranking measurement (nil: not run).
	Ranking *Ranking `json:"ranking,omitempty"`
	// RankingSkipped says why Ranking is nil.
	RankingSkipped string `json:"ranking_skipped,omitempty"`
	// ReadTimeLimit caps each read, role and pass (0: none).
	ReadTimeLimit time.Duration `json:"read_time_limit_ns,omitempty"`
	// ColdWarm is the cold and warm passes (nil: not run); with it Reads
	// is the warm pass.
	ColdWarm *ColdWarm `json:"cold_warm,omitempty"`
	// Explains are EXPLAIN (ANALYZE, BUFFERS) of reads over budget.
	Explains []*Explain `json:"explains,omitempty"`
	// ExplainNote says which reads were explained, or why none.
	ExplainNote string `json:"explain_note,omitempty"`
	// Residency is what shared buffers held at moments of the run.
	Residency []*Residency `json:"residency,omitempty"`
	// ResidencySkipped says why Residency is empty.
	ResidencySkipped string `json:"residency_skipped,omitempty"`
	// Prewarm is storage prewarm run before the reads (nil: not run).
	Prewarm *PrewarmRun `json:"prewarm,omitempty"`
	// PrewarmForGate tells that Prewarm ran after the reads pass, for the
	// floor-paired measurement (--prewarm not given).
	PrewarmForGate bool `json:"prewarm_for_gate,omitempty"`
	// Gate is the reads paired call by call with the floor (nil: not
	// run; --check-baseline and --write-baseline run it).
	Gate *Gate `json:"gate,omitempty"`
	// BeforeReads is SQL run on the measured copy before the reads
	// (--before-reads; empty: none).
	BeforeReads string `json:"before_reads,omitempty"`
	// KeepWarm says how the write path's primary keys were kept in shared
	// buffers during the run (--keep-warm-interval), empty when not.
	KeepWarm string `json:"keep_warm,omitempty"`
	// Check is the comparison with a baseline (nil: none).
	Check *Check `json:"check,omitempty"`
	// LoadAverage is /proc/loadavg at the start and at the end of the run.
	LoadAverage []string `json:"load_average,omitempty"`
	// CPUProbe is the server CPU probe at the start and at the end of the
	// run (ProbeCPU).
	CPUProbe []CPUProbe `json:"cpu_probe,omitempty"`
}

// ReadLoadAverage returns the 1, 5 and 15 minute load averages of
// /proc/loadavg ("" where it cannot be read).
func ReadLoadAverage() string {
	b, err := os.ReadFile("/proc/loadavg")
	if err != nil {
		return ""
	}
	f := strings.Fields(string(b))
	if len(f) < 3 {
		return ""
	}
	return strings.Join(f[:3], " ")
}

// CommandLine is prog followed by args as a POSIX shell reads them back: an
// argument that is empty or holds anything but letters, digits and
// -_./:=,@+% is single-quoted, so a report's command can be run again as
// written (an empty value stays an argument, quoted).
func CommandLine(prog string, args []string) string {
	var b strings.Builder
	b.WriteString(prog)
	for _, a := range args {
		b.WriteByte(' ')
		b.WriteString(shellQuote(a))
	}
	return b.String()
}

func shellQuote(a string) string {
	if a == "" {
		return "''"
	}
	plain := true
	for _, c := range a {
		switch {
		case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c >= '0' && c <= '9':
		case strings.ContainsRune("-_./:=,@+%", c):
		default:
			plain = false
		}
	}
	if plain {
		return a
	}
	return "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
}

// WriteJSON writes the report as indented JSON.
func (r *Report) WriteJSON(w io.Writer) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(r)
}

// WriteMarkdown writes the report as Markdown, with tables like those of
// the reference performance report.
func (r *Report) WriteMarkdown(w io.Writer) error {
	var b strings.Builder
	p := func(format string, args ...any) { fmt.Fprintf(&b, format+"\n", args...) }
	d := r.Dataset
	p("# Lorebase performance: supply, scale %d", d.Scale)
	p("")
	p("Run %s with `%s`.", r.At.UTC().Format("2006-01-02 15:04 MST"), r.Command)
	if len(r.Parts) > 0 {
		p("")
		p("Parts measured: %s.", strings.Join(r.Parts, ", "))
	}
	p("")
	p("## Dataset")
	p("")
	p("- supply Domain, seed %d, scale %d, %d extra `supplied_by` and `stocked_at` Links per Part.", d.Seed, d.Scale, d.ExtraLinks)
	p("- %s Records on main (%s), %s Links (%s stored, %s foreign-key), %s Revisions.",
		thousands(d.Records), byKind(d.ByKind), thousands(d.Links), thousands(d.StoredLinks), thousands(d.Links-d.StoredLinks), thousands(d.Revisions))
	if l := r.Load; l != nil {
		if l.Committed > 0 {
			p("- Loaded through the commit pipeline in %d commits: %s (%.0f Records/s, %.0f changes/s), VACUUM ANALYZE %s.",
				l.Committed, l.Duration.Round(time.Second), l.RecordsPerSecond(), l.ChangesPerSecond(), l.Vacuum.Round(time.Second))
		} else {
			p("- Loaded earlier (%d commits); nothing loaded in this run.", l.Skipped)
		}
	}
	if rp := r.Replicate; rp != nil && rp.Replicas > 1 {
		if rp.Copied > 0 {
			p("- Replicated %d times from the loaded base (set-based copies of the materialized rows, keys renumbered): %d rows in %s, VACUUM ANALYZE %s.",
				rp.Replicas, rp.Rows, rp.Duration.Round(time.Second), rp.Vacuum.Round(time.Second))
		} else {
			p("- Replicated %d times from the loaded base in an earlier run.", rp.Replicas)
		}
	}
	if r.FromSeed != "" && r.InPlace {
		p("- Measured in place on the seed database `%s` (its earlier runs' commits and branches stay in it).", r.FromSeed)
	} else if r.FromSeed != "" {
		p("- Measured on a copy of the seed database `%s` (CREATE DATABASE ... TEMPLATE).", r.FromSeed)
	}
	p("- Per-Attribute indexes built in %s; database size %s.", r.IndexBuild.Round(time.Millisecond), d.DatabaseSize)
	if sw := r.SearchWords; sw != nil {
		top := make([]string, len(sw.Top))
		for i, t := range sw.Top {
			top[i] = fmt.Sprintf("%s %s", t.Word, thousands(t.Records))
		}
		p("- Full-text search words (Zipf-drawn like the titles): %d draws of %d distinct words; the Records a drawn word matches: p50 %s, p95 %s, max %s; %d draws match more than 1,000 Records. Most common: %s.",
			sw.Calls, sw.Words, thousands(sw.P50), thousands(sw.P95), thousands(sw.Max), sw.Over1k, strings.Join(top, ", "))
	}
	p("- %d timed calls per read and role after %d warm-up calls, random keys and queries from the dataset; owner pass first, then rls.", r.Iterations, r.Warmup)
	if r.ReadTimeLimit > 0 {
		p("- Each read, role and pass stops after %s (warm-up included) if its calls have not finished: n is the number of timed calls measured, marked * when the limit cut it short.", r.ReadTimeLimit)
	}
	if r.KeepWarm != "" {
		p("- The write path's primary keys kept in shared buffers (--keep-warm-interval): %s.", r.KeepWarm)
	}
	if r.BeforeReads != "" {
		p("- Run on the measured copy before the reads (--before-reads): `%s`.", r.BeforeReads)
	}
	if r.ColdWarm != nil {
		p("- Cold and warm: the Reads table below is the warm pass (see Cold and warm reads).")
	}
	p("")
	p("## Environment")
	p("")
	m := r.Machine
	p("- machine: %s, %d cores, %.1f GiB, %s", orDash(m.CPU), m.Cores, float64(m.MemoryBytes)/(1<<30), m.OS)
	p("- go: %s", m.Go)
	if m.HugePages != "" {
		p("- huge pages (this host, at the start): %s", m.HugePages)
	}
	if len(r.LoadAverage) > 0 {
		p("- load average (1, 5, 15 min) at start / end: %s", strings.Join(r.LoadAverage, " / "))
	}
	if len(r.CPUProbe) > 0 {
		parts := make([]string, 0, len(r.CPUProbe))
		for _, c := range r.CPUProbe {
			parts = append(parts, fmt.Sprintf("%s %s / %s", c.At, ms(c.Median), ms(c.Min)))
		}
		p("- server CPU probe (`%s`, median / fastest of %d runs, ms): %s", CPUProbeSQL, CPUProbeRuns, strings.Join(parts, "; "))
	}
	p("- postgres: %s", r.Postgres.Version)
	keys := make([]string, 0, len(r.Postgres.Settings))
	for k := range r.Postgres.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		p("- %s: %s", k, r.Postgres.Settings[k])
	}
	p("")
	p("## Reads (milliseconds)")
	p("")
	var rows []Result
	if r.ReadsSkipped != "" {
		p("Not measured: %s.", r.ReadsSkipped)
	} else {
		p("owner: the read's SQL function as the owner (not subject to row-level security). rls: the read through package reads as lorebase_app, subject to the domain_isolation policies (what Keeper serves: validation, the scoped transaction in one round trip, decoding). Ratio to floor: rls p50 over the floor's rls p50.")
		p("")
		p("| Operation | Target p95 | owner p50 | owner p95 | owner p99 | rls p50 | rls p95 | rls p99 | ratio to floor | n owner / rls |")
		p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
		rows = append([]Result{r.Floor}, r.Reads...)
		for _, x := range rows {
			p("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s / %s |", x.Name, target(x.Target),
				stat(x.Owner, 50), stat(x.Owner, 95), stat(x.Owner, 99),
				stat(x.RLS, 50), stat(x.RLS, 95), stat(x.RLS, 99), ratio(x.FloorRatio), count(x.Owner), count(x.RLS))
		}
	}
	r.writeGate(p)
	r.writeCheck(p)
	r.writeColdWarm(p)
	r.writePrewarm(p)
	r.writeResidency(p)
	r.writeExplains(p)
	if r.WritesSkipped != "" {
		p("")
		p("## Writes (milliseconds)")
		p("")
		p("Not measured: %s.", r.WritesSkipped)
	}
	r.writeHTTP(p)
	if len(r.Writes) > 0 {
		p("")
		p("## Writes (milliseconds)")
		p("")
		p("| Operation | Target p95 | Runs | p50 | p95 | p99 | mean |")
		p("| --- | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, x := range r.Writes {
			s := x.RLS
			if s == nil {
				s = x.Owner
			}
			runs := 0
			if s != nil {
				runs = s.N
			}
			p("| %s | %s | %d | %s | %s | %s | %s |", x.Name, target(x.Target), runs, stat(s, 50), stat(s, 95), stat(s, 99), stat(s, 0))
		}
	}
	r.writeRanking(p)
	r.writeConcurrency(p)
	r.writeBranches(p)
	r.writeMerges(p)
	var failures []string
	for _, x := range append(append(rows, r.HTTP...), r.Writes...) {
		if x.OwnerError != "" {
			failures = append(failures, fmt.Sprintf("- %s (owner): %s", x.Name, x.OwnerError))
		}
		if x.RLSError != "" {
			failures = append(failures, fmt.Sprintf("- %s (rls): %s", x.Name, x.RLSError))
		}
	}
	if len(failures) > 0 || len(r.NotMeasured) > 0 {
		p("")
		p("## Not measured")
		p("")
		for _, n := range r.NotMeasured {
			p("- %s: not implemented yet", n)
		}
		for _, f := range failures {
			p("%s", f)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

func stat(s *Stats, pct int) string {
	if s == nil {
		return "—"
	}
	switch pct {
	case 50:
		return ms(s.P50)
	case 95:
		return ms(s.P95)
	case 99:
		return ms(s.P99)
	}
	return ms(s.Mean)
}

// count is the number of timed calls of s, marked * when the time limit
// cut them short.
func count(s *Stats) string {
	if s == nil {
		return "—"
	}
	return fmt.Sprintf("%d%s", s.N, cappedMark(*s))
}

func target(d time.Duration) string {
	if d == 0 {
		return "—"
	}
	return ms(d)
}

func ratio(x float64) string {
	if x == 0 {
		return "—"
	}
	return fmt.Sprintf("%.1f×", x)
}

func orDash(s string) string {
	if s == "" {
		return "—"
	}
	return s
}

func byKind(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %s", k, thousands(int64(m[k])))
	}
	return strings.Join(parts, ", ")
}

// thousands formats n with commas: 1,000,110.
func thousands(n int64) string {
	s := fmt.Sprint(n)
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	if neg {
		return "-" + b.String()
	}
	return b.String()
}
