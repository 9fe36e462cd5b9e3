package perf

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"fmt"
	"time"
)

// ColdWarm is the reads measured twice per role: a cold pass on keys and
// queries drawn from seeds the run has not used, then a warm pass making
// exactly the same calls again (warm-up included, as many timed calls as
// the cold pass measured).
type ColdWarm struct {
	// OwnerSeed and RLSSeed draw the keys of the owner and the rls side
	// (two seeds, so the rls cold pass does not read what the owner's
	// just brought in).
	OwnerSeed uint64   `json:"owner_seed"`
	RLSSeed   uint64   `json:"rls_seed"`
	Cold      []Result `json:"cold"`
	Warm      []Result `json:"warm"`
}

// FreshSeed returns a random seed other than the ones given.
func FreshSeed(used ...uint64) (uint64, error) {
	for {
		var b [8]byte
		if _, err := rand.Read(b[:]); err != nil {
			return 0, fmt.Errorf("draw a seed: %w", err)
		}
		s := binary.LittleEndian.Uint64(b[:]) >> 1
		fresh := s != 0
		for _, u := range used {
			fresh = fresh && s != u
		}
		if fresh {
			return s, nil
		}
	}
}

// WithSeed is a copy of the workload drawing its keys and queries from
// seed.
func (w *Workload) WithSeed(seed uint64) *Workload {
	c := *w
	c.Seed = seed
	return &c
}

// RunColdWarm measures the operations build returns for a seed (two calls
// with the same seed must draw the same keys in the same order): the cold
// pass (every operation as the owner on ownerSeed's keys, then as
// lorebase_app on rlsSeed's), then after(“cold”), then the warm pass on
// new operations of the same seeds, each side making the calls its cold
// pass made, then after(“warm”). floor, when given, sets FloorRatio.
func (h Harness) RunColdWarm(ctx context.Context, build func(seed uint64) []Op, ownerSeed, rlsSeed uint64,
	floor *Result, after func(pass string)) (*ColdWarm, error) {
	cw := &ColdWarm{OwnerSeed: ownerSeed, RLSSeed: rlsSeed}
	h.logf("perf: cold pass (owner seed %d, rls seed %d)", ownerSeed, rlsSeed)
	cold, err := h.Run(ctx, pair(build(ownerSeed), build(rlsSeed)), floor)
	cw.Cold = cold
	if err != nil {
		return cw, err
	}
	if after != nil {
		after("cold")
	}
	h.logf("perf: warm pass (the same calls again)")
	ops := pair(build(ownerSeed), build(rlsSeed))
	warm := make([]Result, len(ops))
	for i, op := range ops {
		warm[i] = Result{Name: op.Name, Target: op.Target}
	}
	for pass := range 2 {
		for i, op := range ops {
			fn, c, role := op.Owner, cold[i].Owner, "owner"
			if pass == 1 {
				fn, c, role = op.RLS, cold[i].RLS, "rls"
			}
			if fn == nil || c == nil {
				continue
			}
			hw := h
			hw.Warmup, hw.Iterations = c.Warmup, c.N
			st, err := hw.Time(ctx, fn)
			if ctx.Err() != nil {
				cw.Warm = warm
				return cw, ctx.Err()
			}
			r := &warm[i]
			switch {
			case err != nil && pass == 0:
				r.OwnerError = err.Error()
			case err != nil:
				r.RLSError = err.Error()
			case pass == 0:
				r.Owner = &st
			default:
				r.RLS = &st
			}
			if err != nil {
				h.logf("perf: %-40s %-5s warm failed: %v", op.Name, role, err)
				continue
			}
			h.logf("perf: %-40s %-5s warm p50 %s p95 %s p99 %s n %d%s", op.Name, role, ms(st.P50), ms(st.P95), ms(st.P99), st.N, cappedMark(st))
		}
	}
	if floor != nil {
		for i := range warm {
			warm[i].FloorRatio = floorRatio(warm[i], *floor)
		}
	}
	cw.Warm = warm
	if after != nil {
		after("warm")
	}
	return cw, nil
}

// pair takes the owner side of the first list and the rls side of the
// second (the same operations in the same order).
func pair(owner, rls []Op) []Op {
	out := make([]Op, len(owner))
	for i, op := range owner {
		out[i] = op
		out[i].RLS = nil
		if i < len(rls) && rls[i].Name == op.Name {
			out[i].RLS = rls[i].RLS
		}
	}
	return out
}

// Miss is a read whose p95 passed its budget.
type Miss struct {
	Name   string        `json:"name"`
	Pass   string        `json:"pass"`
	Role   string        `json:"role"`
	P95    time.Duration `json:"p95_ns"`
	Target time.Duration `json:"target_ns"`
}

// Pass is a named list of results (“reads”, “cold”, “warm”).
type Pass struct {
	Name    string
	Results []Result
}

// OverBudget returns, per read in the order first seen, the worst rls p95
// over its Target among the passes (a read with no Target, no rls Stats or
// within budget in every pass is left out).
func OverBudget(passes ...Pass) []Miss {
	var out []Miss
	at := map[string]int{}
	for _, p := range passes {
		for _, r := range p.Results {
			if r.Target <= 0 || r.RLS == nil || r.RLS.P95 <= r.Target {
				continue
			}
			m := Miss{Name: r.Name, Pass: p.Name, Role: "rls", P95: r.RLS.P95, Target: r.Target}
			if i, ok := at[r.Name]; ok {
				if m.P95 > out[i].P95 {
					out[i] = m
				}
				continue
			}
			at[r.Name] = len(out)
			out = append(out, m)
		}
	}
	return out
}
