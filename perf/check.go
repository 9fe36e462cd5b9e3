package perf

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"
)

// DefaultCheckTolerance is how far a read's ratio to the floor may grow
// over its baseline before the check fails (a read whose middle rounds
// spread wider in the baseline run gets that spread as its tolerance).
const DefaultCheckTolerance = 1.5

// BaselineFormat is the version of the baseline file: 2 is the
// floor-paired measurement (the median over rounds of each round's median
// pair ratio). Files without a format (1: one p50 over one floor p50) are
// refused.
const BaselineFormat = 2

// Baseline is the reads' ratios to the floor in a reference run, which
// later short runs (make perf-check) are compared with.
type Baseline struct {
	Format  int       `json:"format"`
	At      time.Time `json:"at"`
	Command string    `json:"command"`
	Machine Machine   `json:"machine"`
	// LoadAverage is /proc/loadavg at the start and the end of the run.
	LoadAverage []string `json:"load_average,omitempty"`
	Scale       int      `json:"scale"`
	Records     int64    `json:"records"`
	// Gate is the rounds and pairs of the floor-paired measurement.
	Gate GateOptions `json:"gate"`
	// Reads are each read's floor-paired ratio, by name.
	Reads map[string]BaselineRead `json:"reads"`
	// P50Ratios are each read's rls p50 over the floor's rls p50 in the
	// same run's reads pass (what the format 1 gate compared); the check
	// shows them beside, they decide nothing.
	P50Ratios map[string]float64 `json:"p50_ratios,omitempty"`
}

// BaselineRead is one read of a baseline.
type BaselineRead struct {
	// Ratio is the median of Rounds.
	Ratio float64 `json:"ratio"`
	// Rounds are the run's round medians of the pair ratios.
	Rounds []float64 `json:"rounds"`
	// Spread is the rounds' upper quartile over their lower quartile.
	Spread float64 `json:"spread"`
}

// Tolerance is how many times its baseline ratio the read may reach: the
// larger of tolerance and the read's Spread in the baseline run.
func (b BaselineRead) Tolerance(tolerance float64) float64 { return max(tolerance, b.Spread) }

// NewBaseline takes the reads' floor-paired ratios of a report (and their
// p50 ratios of the reads pass, shown beside by the check).
func NewBaseline(r *Report) (*Baseline, error) {
	if r.Gate == nil {
		return nil, fmt.Errorf("baseline: the run made no floor-paired measurement")
	}
	b := &Baseline{Format: BaselineFormat, At: r.At, Command: r.Command, Machine: r.Machine, LoadAverage: r.LoadAverage, Scale: r.Dataset.Scale,
		Records: r.Dataset.Records, Gate: r.Gate.Options, Reads: map[string]BaselineRead{}, P50Ratios: map[string]float64{}}
	for _, x := range r.Gate.Reads {
		if x.Error == "" && x.Ratio > 0 {
			b.Reads[x.Name] = BaselineRead{Ratio: x.Ratio, Rounds: x.Rounds, Spread: x.Spread}
		}
	}
	for _, x := range r.Reads {
		if x.FloorRatio > 0 {
			b.P50Ratios[x.Name] = x.FloorRatio
		}
	}
	if len(b.Reads) == 0 {
		return nil, fmt.Errorf("baseline: the run measured no read's ratio to the floor")
	}
	return b, nil
}

// WriteBaseline writes b as indented JSON to path.
func WriteBaseline(path string, b *Baseline) error {
	data, err := json.MarshalIndent(b, "", "  ")
	if err != nil {
		return fmt.Errorf("encode baseline: %w", err)
	}
	if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil { //nolint:gosec // a committed report file
		return fmt.Errorf("write baseline %s: %w", path, err)
	}
	return nil
}

// ReadBaseline reads a baseline written by WriteBaseline. A file of
// another format (an older gate's one p50 over one floor p50) is refused
// with what to run.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path) //nolint:gosec // the path is the caller's flag
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", path, err)
	}
	if b.Format != BaselineFormat {
		written := fmt.Sprintf("format %d", b.Format)
		if b.Format == 0 {
			written = "an older perf-check (no format: one p50 over one floor p50)"
		}
		return nil, fmt.Errorf("read baseline %s: written by %s, this check needs format %d (floor-paired rounds): run `make perf-baseline` to rewrite it",
			path, written, BaselineFormat)
	}
	if len(b.Reads) == 0 {
		return nil, fmt.Errorf("read baseline %s: no reads: run `make perf-baseline` to rewrite it", path)
	}
	for n, r := range b.Reads {
		if r.Ratio <= 0 {
			return nil, fmt.Errorf("read baseline %s: read %q has no ratio: run `make perf-baseline` to rewrite it", path, n)
		}
	}
	return &b, nil
}

// CheckRow compares one read with its baseline.
type CheckRow struct {
	Name string `json:"name"`
	// Baseline is the read's floor-paired ratio in the baseline.
	Baseline float64 `json:"baseline"`
	// Now is the ratio of this run (0: not measured).
	Now float64 `json:"now"`
	// Rounds are this run's round medians.
	Rounds []float64 `json:"rounds,omitempty"`
	// Growth is Now over Baseline.
	Growth float64 `json:"growth"`
	// Tolerance is the growth past which the read fails.
	Tolerance float64 `json:"tolerance"`
	Failed    bool    `json:"failed"`
	// Why says why a row failed.
	Why string `json:"why,omitempty"`
	// P50Baseline and P50Now are the read's rls p50 over the floor's rls
	// p50 of the reads pass, in the baseline and now, and P50Growth the
	// second over the first: what the format 1 gate compared, shown
	// beside (P50Failed: past the check's tolerance); they decide nothing.
	P50Baseline float64 `json:"p50_baseline,omitempty"`
	P50Now      float64 `json:"p50_now,omitempty"`
	P50Growth   float64 `json:"p50_growth,omitempty"`
	P50Failed   bool    `json:"p50_failed,omitempty"`
}

// Check is the comparison of a run with a baseline.
type Check struct {
	Path      string     `json:"path"`
	Tolerance float64    `json:"tolerance"`
	Baseline  *Baseline  `json:"baseline"`
	Rows      []CheckRow `json:"rows"`
}

// Failed names the reads that failed the check.
func (c *Check) Failed() []string {
	var out []string
	for _, r := range c.Rows {
		if r.Failed {
			out = append(out, r.Name)
		}
	}
	return out
}

// P50Failed names the reads past the tolerance by the p50 over p50
// comparison (the format 1 gate), shown beside.
func (c *Check) P50Failed() []string {
	var out []string
	for _, r := range c.Rows {
		if r.P50Failed {
			out = append(out, r.Name)
		}
	}
	return out
}

// Error is nil when every read passed, else names the failures.
func (c *Check) Error() error {
	var bad []string
	for _, r := range c.Rows {
		if r.Failed {
			bad = append(bad, fmt.Sprintf("%s (%s)", r.Name, r.Why))
		}
	}
	if len(bad) == 0 {
		return nil
	}
	return fmt.Errorf("perf check: %d of %d reads past their tolerance over the baseline ratio to the floor (%s): %s",
		len(bad), len(c.Rows), c.Path, strings.Join(bad, "; "))
}

// CompareBaseline compares the reads' floor-paired ratios of gate with the
// baseline's, in the baseline's read order (ReadNames, then any other): a
// read fails when its ratio is more than its tolerance (BaselineRead.
// Tolerance) times the baseline's, or when the baseline has it and the
// run did not measure it. Reads the baseline does not have are not
// compared. reads (the reads pass) fill the p50 over p50 columns.
func CompareBaseline(base *Baseline, gate *Gate, reads []Result, tolerance float64) []CheckRow {
	p50 := map[string]float64{}
	for _, r := range reads {
		p50[r.Name] = r.FloorRatio
	}
	names := []string{}
	for _, n := range readNames {
		if _, ok := base.Reads[n]; ok {
			names = append(names, n)
		}
	}
	var others []string
	for n := range base.Reads {
		if !slices.Contains(names, n) {
			others = append(others, n)
		}
	}
	slices.Sort(others)
	names = append(names, others...)
	rows := make([]CheckRow, 0, len(names))
	for _, n := range names {
		b := base.Reads[n]
		row := CheckRow{Name: n, Baseline: b.Ratio, Tolerance: b.Tolerance(tolerance), P50Baseline: base.P50Ratios[n], P50Now: p50[n]}
		if row.P50Baseline > 0 && row.P50Now > 0 {
			row.P50Growth = row.P50Now / row.P50Baseline
			row.P50Failed = row.P50Growth > tolerance
		}
		var g *GateRead
		if gate != nil {
			g = gate.Read(n)
		}
		switch {
		case g == nil || g.Ratio <= 0:
			row.Failed, row.Why = true, "not measured"
			if g != nil && g.Error != "" {
				row.Why = "failed: " + g.Error
			}
		default:
			row.Now, row.Rounds = g.Ratio, g.Rounds
			row.Growth = g.Ratio / row.Baseline
			if row.Growth > row.Tolerance {
				row.Failed = true
				row.Why = fmt.Sprintf("%.2f× the floor, baseline %.2f×: %.2f times it, tolerance %.2f", row.Now, row.Baseline, row.Growth, row.Tolerance)
			}
		}
		rows = append(rows, row)
	}
	return rows
}

// writeGate writes the floor-paired measurement.
func (r *Report) writeGate(p func(string, ...any)) {
	g := r.Gate
	if g == nil {
		return
	}
	o := g.Options
	p("")
	p("## Reads paired with the floor (regression gate)")
	p("")
	p("After `storage prewarm` and %d untimed pairs per read: %d rounds over every read, each read %d pairs per round on the same keys and queries in every round (%s in all); a pair is one floor call (rls) and one call of the read (rls), the floor first in even pairs and the read first in odd ones. A pair's ratio is the read's time over the floor's; a round's ratio is the median of its pairs; the read's ratio is the median of its rounds; spread is the rounds' upper quartile over their lower quartile.",
		o.Warmup, o.Rounds, o.Pairs, g.Took.Round(time.Second))
	p("")
	p("| Read | ratio | rounds | spread | read p50 | floor p50 | pairs |")
	p("| --- | ---: | --- | ---: | ---: | ---: | ---: |")
	for _, x := range g.Reads {
		if x.Error != "" {
			p("| %s | — | failed: %s | — | — | — | — |", x.Name, x.Error)
			continue
		}
		p("| %s | %.2f× | %s | %.2f | %s | %s | %s |", x.Name, x.Ratio, roundList(x.Rounds), x.Spread, stat(x.Read, 50), stat(x.Floor, 50), count(x.Read))
	}
}

// writeCheck writes the comparison with the baseline.
func (r *Report) writeCheck(p func(string, ...any)) {
	c := r.Check
	if c == nil {
		return
	}
	b := c.Baseline
	p("")
	p("## Regression check")
	p("")
	p("Each read's floor-paired ratio in this run against the baseline `%s` (run %s, %s Records, %d rounds of %d pairs, load average %s); a read fails past its tolerance times its baseline ratio: %.2g, or the read's spread in the baseline run (upper quartile of its rounds over the lower) where wider. The p50 / p50 columns are the reads pass's rls p50 over the floor's rls p50 (the format 1 gate's comparison), shown beside; they decide nothing.",
		c.Path, b.At.UTC().Format("2006-01-02 15:04 MST"), thousands(b.Records), b.Gate.Rounds, b.Gate.Pairs, orDash(strings.Join(b.LoadAverage, " / ")), c.Tolerance)
	p("")
	p("| Read | baseline ratio | ratio now | now / baseline | tolerance | result | p50 / p50 baseline | now | now / baseline |")
	p("| --- | ---: | ---: | ---: | ---: | --- | ---: | ---: | ---: |")
	for _, x := range c.Rows {
		res := "ok"
		if x.Failed {
			res = "FAILED: " + x.Why
		}
		old := growth(x.P50Growth)
		if x.P50Failed {
			old += " (past)"
		}
		p("| %s | %s | %s | %s | %.2f | %s | %s | %s | %s |", x.Name, ratio2(x.Baseline), ratio2(x.Now), growth(x.Growth), x.Tolerance, res,
			ratio2(x.P50Baseline), ratio2(x.P50Now), old)
	}
}

func growth(x float64) string {
	if x == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", x)
}

func ratio2(x float64) string {
	if x == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f×", x)
}

// WriteCheckSummary writes one line per read of the check to w, then the
// reads past the tolerance by p50 over p50.
func (c *Check) WriteCheckSummary(w io.Writer) error {
	var b strings.Builder
	for _, x := range c.Rows {
		res := "ok"
		if x.Failed {
			res = "FAILED: " + x.Why
		}
		fmt.Fprintf(&b, "perf check: %-32s baseline %s now %s  %s\n", x.Name, ratio2(x.Baseline), ratio2(x.Now), res)
	}
	old := c.P50Failed()
	fmt.Fprintf(&b, "perf check: p50 over p50 (format 1, not deciding): %d of %d reads past %.2g×", len(old), len(c.Rows), c.Tolerance)
	if len(old) > 0 {
		fmt.Fprintf(&b, ": %s", strings.Join(old, ", "))
	}
	b.WriteString("\n")
	_, err := io.WriteString(w, b.String())
	return err
}
