package perf

import (
	"context"
	"fmt"
	"io"
	"math"
	"slices"
	"time"
)

// Op is one operation to measure, as the owner (a role not subject to
// row-level security) and as lorebase_app (subject to it). A nil side is
// not measured.
type Op struct {
	Name string
	// Target is the p95 budget (design section 6); 0 when there is none.
	Target time.Duration
	Owner  func(ctx context.Context) error
	RLS    func(ctx context.Context) error
	// Prepare, when set, runs before each call of Owner or RLS that Run
	// makes (warm-up and timed), outside the time: it makes what the call's
	// client holds before it starts (the changes a commit sends).
	Prepare func(ctx context.Context) error
	// Answer, when set, makes the call RLS makes (the same draw of inputs)
	// and returns what the read answered: the branch measurement compares
	// an overlay's answers with the copy's.
	Answer func(ctx context.Context) (any, error)
	// Explain, when set, draws the SQL and arguments of one call of the
	// read's SQL function (what Owner runs), for EXPLAIN.
	Explain func() (string, []any)
}

// Stats summarizes the timed calls of one operation and role.
type Stats struct {
	N    int           `json:"n"`
	P50  time.Duration `json:"p50_ns"`
	P95  time.Duration `json:"p95_ns"`
	P99  time.Duration `json:"p99_ns"`
	Mean time.Duration `json:"mean_ns"`
	Min  time.Duration `json:"min_ns"`
	Max  time.Duration `json:"max_ns"`
	// Warmup is the number of warm-up calls made before the timed ones.
	Warmup int `json:"warmup,omitempty"`
	// Capped tells that the time limit stopped the calls before the
	// iterations asked for (N is what was measured).
	Capped bool `json:"capped,omitempty"`
}

// Summarize computes Stats of latencies (nearest-rank percentiles).
func Summarize(lat []time.Duration) Stats {
	if len(lat) == 0 {
		return Stats{}
	}
	s := slices.Clone(lat)
	slices.Sort(s)
	var sum time.Duration
	for _, d := range s {
		sum += d
	}
	rank := func(p float64) time.Duration {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	return Stats{N: len(s), P50: rank(0.50), P95: rank(0.95), P99: rank(0.99),
		Mean: sum / time.Duration(len(s)), Min: s[0], Max: s[len(s)-1]}
}

// Result is the measurement of one operation.
type Result struct {
	Name   string        `json:"name"`
	Target time.Duration `json:"target_ns,omitempty"`
	Owner  *Stats        `json:"owner,omitempty"`
	RLS    *Stats        `json:"rls,omitempty"`
	// OwnerError and RLSError hold the first failure of a side; a side
	// that failed has no Stats.
	OwnerError string `json:"owner_error,omitempty"`
	RLSError   string `json:"rls_error,omitempty"`
	// FloorRatio is the rls p50 over the floor's rls p50 (owner p50 over
	// the floor's owner p50 for an owner-only operation).
	FloorRatio float64 `json:"floor_ratio,omitempty"`
}

// Harness runs measurements.
type Harness struct {
	// Warmup calls per operation and role before the timed calls.
	Warmup int
	// Iterations is the number of timed calls per operation and role.
	Iterations int
	// TimeLimit, when positive, caps the wall-clock time of one operation
	// and role (warm-up and timed calls together): past it the calls stop,
	// after at least one timed call, and the Stats say Capped.
	TimeLimit time.Duration
	// Log receives a line per measured operation (nil: none).
	Log io.Writer
	// Clock reads the time (nil: time.Now).
	Clock func() time.Time
}

func (h Harness) now() time.Time {
	if h.Clock != nil {
		return h.Clock()
	}
	return time.Now()
}

// over reports whether the time limit has passed since start.
func (h Harness) over(start time.Time) bool {
	return h.TimeLimit > 0 && h.now().Sub(start) >= h.TimeLimit
}

// Time runs fn Warmup times, then Iterations times timing each call; with
// a TimeLimit it stops once the limit has passed (warm-up included), after
// at least one timed call. The first error stops it.
func (h Harness) Time(ctx context.Context, fn func(ctx context.Context) error) (Stats, error) {
	return h.TimePrepared(ctx, nil, fn)
}

// TimePrepared is Time with prepare, when not nil, run before each call
// (warm-up and timed) and not timed; the time limit counts it.
func (h Harness) TimePrepared(ctx context.Context, prepare, fn func(ctx context.Context) error) (Stats, error) {
	if prepare == nil {
		prepare = func(context.Context) error { return nil }
	}
	start := h.now()
	warm := 0
	for ; warm < h.Warmup && !h.over(start); warm++ {
		if err := prepare(ctx); err != nil {
			return Stats{}, fmt.Errorf("prepare warm-up call %d: %w", warm+1, err)
		}
		if err := fn(ctx); err != nil {
			return Stats{}, fmt.Errorf("warm-up call %d: %w", warm+1, err)
		}
	}
	lat := make([]time.Duration, 0, h.Iterations)
	capped := false
	for i := 0; i < h.Iterations; i++ {
		if err := ctx.Err(); err != nil {
			return Stats{}, err
		}
		if i > 0 && h.over(start) {
			capped = true
			break
		}
		if err := prepare(ctx); err != nil {
			return Stats{}, fmt.Errorf("prepare timed call %d: %w", i+1, err)
		}
		t := h.now()
		err := fn(ctx)
		d := h.now().Sub(t)
		if err != nil {
			return Stats{}, fmt.Errorf("timed call %d: %w", i+1, err)
		}
		lat = append(lat, d)
	}
	st := Summarize(lat)
	st.Warmup, st.Capped = warm, capped || warm < h.Warmup
	return st, nil
}

// Run measures every operation: first all of them as the owner, then all of
// them as lorebase_app (the owner pass warms the cache for both). A failing
// operation is recorded and the others go on; only a cancelled ctx stops
// the run. floor, when given, sets every Result's FloorRatio.
func (h Harness) Run(ctx context.Context, ops []Op, floor *Result) ([]Result, error) {
	out := make([]Result, len(ops))
	for i, op := range ops {
		out[i] = Result{Name: op.Name, Target: op.Target}
	}
	for pass := range 2 {
		for i, op := range ops {
			fn, role := op.Owner, "owner"
			if pass == 1 {
				fn, role = op.RLS, "rls"
			}
			if fn == nil {
				continue
			}
			st, err := h.TimePrepared(ctx, op.Prepare, fn)
			if ctx.Err() != nil {
				return out, ctx.Err()
			}
			r := &out[i]
			if err != nil {
				if pass == 0 {
					r.OwnerError = err.Error()
				} else {
					r.RLSError = err.Error()
				}
				h.logf("perf: %-40s %-5s failed: %v", op.Name, role, err)
				continue
			}
			if pass == 0 {
				r.Owner = &st
			} else {
				r.RLS = &st
			}
			h.logf("perf: %-40s %-5s p50 %s p95 %s p99 %s n %d%s", op.Name, role, ms(st.P50), ms(st.P95), ms(st.P99), st.N, cappedMark(st))
		}
	}
	if floor != nil {
		for i := range out {
			out[i].FloorRatio = floorRatio(out[i], *floor)
		}
	}
	return out, nil
}

func floorRatio(r, floor Result) float64 {
	switch {
	case r.RLS != nil && floor.RLS != nil && floor.RLS.P50 > 0:
		return float64(r.RLS.P50) / float64(floor.RLS.P50)
	case r.Owner != nil && floor.Owner != nil && floor.Owner.P50 > 0:
		return float64(r.Owner.P50) / float64(floor.Owner.P50)
	}
	return 0
}

func (h Harness) logf(format string, args ...any) {
	if h.Log != nil {
		fmt.Fprintf(h.Log, format+"\n", args...)
	}
}

// ms formats a duration in milliseconds with two decimals.
func ms(d time.Duration) string { return fmt.Sprintf("%.2f", float64(d)/float64(time.Millisecond)) }

// cappedMark is "*" for Stats the time limit cut short.
func cappedMark(s Stats) string {
	if s.Capped {
		return "*"
	}
	return ""
}
