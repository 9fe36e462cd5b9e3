package perf

import (
	"context"
	"fmt"
	"math"
	"slices"
	"time"
)

// GateOptions shape the floor-paired measurement of the regression gate.
type GateOptions struct {
	// Rounds is how many times every read is measured, one read after
	// the other in each round (the rounds spread each read over the run).
	Rounds int `json:"rounds"`
	// Pairs is the number of timed pairs (one floor call, one read call)
	// per read and round.
	Pairs int `json:"pairs"`
	// Warmup is the number of untimed pairs per read before the first
	// round.
	Warmup int `json:"warmup"`
}

// DefaultGateOptions are the gate's rounds and pairs (make perf-check).
func DefaultGateOptions() GateOptions { return GateOptions{Rounds: 7, Pairs: 60, Warmup: 10} }

// GateRead is one read of the floor-paired measurement.
type GateRead struct {
	Name string `json:"name"`
	// Rounds holds, per round, the median over its pairs of the read's
	// call time over the floor call's time of the same pair.
	Rounds []float64 `json:"rounds,omitempty"`
	// Ratio is the median of Rounds.
	Ratio float64 `json:"ratio,omitempty"`
	// Spread is the rounds' upper quartile over their lower quartile
	// (nearest rank; 1: the middle rounds alike).
	Spread float64 `json:"spread,omitempty"`
	// Read and Floor summarize the read's and the floor's timed calls of
	// the pairs.
	Read  *Stats `json:"read,omitempty"`
	Floor *Stats `json:"floor,omitempty"`
	Error string `json:"error,omitempty"`
}

// Gate is the floor-paired measurement of a run: every read as
// lorebase_app, each call paired with a floor call made just before or
// just after it (alternating), so a read's ratio is taken against the
// floor at the same moment.
type Gate struct {
	Options GateOptions `json:"options"`
	Reads   []GateRead  `json:"reads"`
	// Took is the wall-clock time of the measurement.
	Took time.Duration `json:"took_ns"`
}

// Read returns the named read (nil when absent).
func (g *Gate) Read(name string) *GateRead {
	for i := range g.Reads {
		if g.Reads[i].Name == name {
			return &g.Reads[i]
		}
	}
	return nil
}

// RunGate measures the reads' rls sides paired call by call with the
// floor's rls side: Warmup untimed pairs per read, then Rounds rounds over
// every read of Pairs pairs each, the floor first in even pairs and the
// read first in odd ones. ops is called for the warm-up and again for each
// round, so that every round makes the same calls (the operations of
// Workload.Reads and Workload.Floor draw the same keys and queries in the
// same order each time they are built): a round's median then moves with
// the machine and the code, not with the words drawn. A failing read is
// recorded and the others go on; only a cancelled ctx stops the run.
func (h Harness) RunGate(ctx context.Context, ops func() (floor Op, reads []Op), opts GateOptions) (*Gate, error) {
	if opts.Rounds < 1 || opts.Pairs < 1 || opts.Warmup < 0 {
		return nil, fmt.Errorf("gate: %d rounds of %d pairs after %d warm-up pairs: rounds and pairs must be at least 1", opts.Rounds, opts.Pairs, opts.Warmup)
	}
	floor, first := ops()
	if floor.RLS == nil {
		return nil, fmt.Errorf("gate: the floor %q has no rls side", floor.Name)
	}
	start := h.now()
	g := &Gate{Options: opts, Reads: make([]GateRead, len(first))}
	reads := make([][]time.Duration, len(first))
	floors := make([][]time.Duration, len(first))
	for i, op := range first {
		g.Reads[i].Name = op.Name
		if op.RLS == nil {
			g.Reads[i].Error = "no rls side"
			continue
		}
		for k := 0; k < opts.Warmup; k++ {
			if _, _, err := h.pair(ctx, floor.RLS, op.RLS, k); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				g.Reads[i].Error = fmt.Sprintf("warm-up pair %d: %v", k+1, err)
				break
			}
		}
	}
	for round := 0; round < opts.Rounds; round++ {
		floor, rs := ops()
		if len(rs) != len(first) {
			return nil, fmt.Errorf("gate: round %d has %d reads, the first had %d", round+1, len(rs), len(first))
		}
		for i, op := range rs {
			gr := &g.Reads[i]
			if gr.Error != "" {
				continue
			}
			ratios := make([]float64, 0, opts.Pairs)
			for k := 0; k < opts.Pairs; k++ {
				df, dr, err := h.pair(ctx, floor.RLS, op.RLS, k)
				if err != nil {
					if ctx.Err() != nil {
						return nil, ctx.Err()
					}
					gr.Error = fmt.Sprintf("round %d, pair %d: %v", round+1, k+1, err)
					break
				}
				floors[i], reads[i] = append(floors[i], df), append(reads[i], dr)
				ratios = append(ratios, float64(dr)/float64(max(df, time.Nanosecond)))
			}
			if gr.Error == "" {
				gr.Rounds = append(gr.Rounds, median(ratios))
			}
		}
	}
	for i := range g.Reads {
		gr := &g.Reads[i]
		if gr.Error != "" {
			gr.Rounds = nil
			h.logf("perf: gate %-35s failed: %s", gr.Name, gr.Error)
			continue
		}
		gr.Ratio = median(gr.Rounds)
		gr.Spread = spread(gr.Rounds)
		rs, fs := Summarize(reads[i]), Summarize(floors[i])
		gr.Read, gr.Floor = &rs, &fs
		h.logf("perf: gate %-35s %.2f× the floor (rounds %s, spread %.2f) read p50 %s floor p50 %s", gr.Name, gr.Ratio, roundList(gr.Rounds), gr.Spread, ms(rs.P50), ms(fs.P50))
	}
	g.Took = h.now().Sub(start)
	return g, nil
}

// pair times one floor call and one read call, the floor first when k is
// even.
func (h Harness) pair(ctx context.Context, floor, read func(context.Context) error, k int) (df, dr time.Duration, err error) {
	if k%2 == 0 {
		if df, err = h.timed(ctx, floor); err != nil {
			return 0, 0, fmt.Errorf("floor: %w", err)
		}
		dr, err = h.timed(ctx, read)
		return df, dr, err
	}
	if dr, err = h.timed(ctx, read); err != nil {
		return 0, 0, err
	}
	if df, err = h.timed(ctx, floor); err != nil {
		return 0, 0, fmt.Errorf("floor: %w", err)
	}
	return df, dr, nil
}

func (h Harness) timed(ctx context.Context, fn func(context.Context) error) (time.Duration, error) {
	t := h.now()
	err := fn(ctx)
	return h.now().Sub(t), err
}

// median is the middle of xs (the mean of the two middle ones for an even
// count; 0 for none).
func median(xs []float64) float64 {
	if len(xs) == 0 {
		return 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	if n%2 == 1 {
		return s[n/2]
	}
	return (s[n/2-1] + s[n/2]) / 2
}

// spread is the upper quartile of xs over its lower quartile (nearest
// rank): how far apart the middle half of the rounds lies.
func spread(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	rank := func(p float64) float64 {
		i := int(math.Ceil(p*float64(len(s)))) - 1
		return s[min(max(i, 0), len(s)-1)]
	}
	if lo := rank(0.25); lo > 0 {
		return rank(0.75) / lo
	}
	return 0
}

func roundList(xs []float64) string {
	out := ""
	for i, x := range xs {
		if i > 0 {
			out += " "
		}
		out += fmt.Sprintf("%.2f", x)
	}
	return out
}
