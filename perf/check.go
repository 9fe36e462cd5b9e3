package perf

import (
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"
)

// DefaultCheckTolerance is how far a read's ratio to the floor may grow
// over its baseline before the check fails.
const DefaultCheckTolerance = 1.5

// Baseline is the reads' ratios to the floor in a reference run, which
// later short runs (make perf-check) are compared with.
type Baseline struct {
	At      time.Time `json:"at"`
	Command string    `json:"command"`
	Machine Machine   `json:"machine"`
	// LoadAverage is /proc/loadavg at the start and the end of the run.
	LoadAverage []string `json:"load_average,omitempty"`
	Scale       int      `json:"scale"`
	Records     int64    `json:"records"`
	Iterations  int      `json:"iterations"`
	// FloorP50 is the floor's rls p50.
	FloorP50 time.Duration `json:"floor_p50_ns"`
	// Ratios are each read's rls p50 over the floor's rls p50.
	Ratios map[string]float64 `json:"ratios"`
}

// NewBaseline takes the reads' ratios of a report.
func NewBaseline(r *Report) (*Baseline, error) {
	b := &Baseline{At: r.At, Command: r.Command, Machine: r.Machine, LoadAverage: r.LoadAverage, Scale: r.Dataset.Scale,
		Records: r.Dataset.Records, Iterations: r.Iterations, Ratios: map[string]float64{}}
	if r.Floor.RLS != nil {
		b.FloorP50 = r.Floor.RLS.P50
	}
	for _, x := range r.Reads {
		if x.FloorRatio > 0 {
			b.Ratios[x.Name] = x.FloorRatio
		}
	}
	if len(b.Ratios) == 0 {
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

// ReadBaseline reads a baseline written by WriteBaseline.
func ReadBaseline(path string) (*Baseline, error) {
	data, err := os.ReadFile(path) //nolint:gosec // the path is the caller's flag
	if err != nil {
		return nil, fmt.Errorf("read baseline: %w", err)
	}
	var b Baseline
	if err := json.Unmarshal(data, &b); err != nil {
		return nil, fmt.Errorf("read baseline %s: %w", path, err)
	}
	if len(b.Ratios) == 0 {
		return nil, fmt.Errorf("read baseline %s: no ratios", path)
	}
	return &b, nil
}

// CheckRow compares one read with its baseline.
type CheckRow struct {
	Name     string  `json:"name"`
	Baseline float64 `json:"baseline"`
	// Now is the ratio of this run (0: not measured).
	Now float64 `json:"now"`
	// Growth is Now over Baseline.
	Growth float64 `json:"growth"`
	Failed bool    `json:"failed"`
	// Why says why a row failed.
	Why string `json:"why,omitempty"`
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
	return fmt.Errorf("perf check: %d of %d reads past %.2g× their baseline ratio to the floor (%s): %s",
		len(bad), len(c.Rows), c.Tolerance, c.Path, strings.Join(bad, "; "))
}

// CompareBaseline compares the reads' ratios to the floor with the
// baseline's, in the baseline's read order (ReadNames, then any other):
// a read fails when its ratio is more than tolerance times the baseline's,
// or when the baseline has it and the run did not measure it. Reads the
// baseline does not have are not compared.
func CompareBaseline(base *Baseline, reads []Result, tolerance float64) []CheckRow {
	now := map[string]Result{}
	for _, r := range reads {
		now[r.Name] = r
	}
	names := []string{}
	for _, n := range readNames {
		if _, ok := base.Ratios[n]; ok {
			names = append(names, n)
		}
	}
	for n := range base.Ratios {
		found := false
		for _, m := range names {
			found = found || m == n
		}
		if !found {
			names = append(names, n)
		}
	}
	rows := make([]CheckRow, 0, len(names))
	for _, n := range names {
		row := CheckRow{Name: n, Baseline: base.Ratios[n]}
		r, ok := now[n]
		switch {
		case !ok || r.FloorRatio <= 0:
			row.Failed, row.Why = true, "not measured"
			if r.RLSError != "" {
				row.Why = "failed: " + r.RLSError
			}
		default:
			row.Now = r.FloorRatio
			row.Growth = r.FloorRatio / row.Baseline
			if row.Growth > tolerance {
				row.Failed = true
				row.Why = fmt.Sprintf("%.1f× the floor, baseline %.1f×: %.2f times it", row.Now, row.Baseline, row.Growth)
			}
		}
		rows = append(rows, row)
	}
	return rows
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
	p("Each read's rls p50 over the floor's rls p50 in this run against the baseline `%s` (run %s, %s Records, %d timed calls, load average %s); a read fails past %.2g× its baseline ratio.",
		c.Path, b.At.UTC().Format("2006-01-02 15:04 MST"), thousands(b.Records), b.Iterations, orDash(strings.Join(b.LoadAverage, " / ")), c.Tolerance)
	p("")
	p("| Read | baseline ratio | ratio now | now / baseline | result |")
	p("| --- | ---: | ---: | ---: | --- |")
	for _, x := range c.Rows {
		res := "ok"
		if x.Failed {
			res = "FAILED: " + x.Why
		}
		p("| %s | %s | %s | %s | %s |", x.Name, ratio(x.Baseline), ratio(x.Now), growth(x.Growth), res)
	}
}

func growth(x float64) string {
	if x == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", x)
}

// WriteCheckSummary writes one line per read of the check to w.
func (c *Check) WriteCheckSummary(w io.Writer) error {
	var b strings.Builder
	for _, x := range c.Rows {
		res := "ok"
		if x.Failed {
			res = "FAILED: " + x.Why
		}
		fmt.Fprintf(&b, "perf check: %-32s baseline %s now %s  %s\n", x.Name, ratio(x.Baseline), ratio(x.Now), res)
	}
	_, err := io.WriteString(w, b.String())
	return err
}
