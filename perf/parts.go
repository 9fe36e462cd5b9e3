package perf

import (
	"fmt"
	"slices"
	"strings"
)

// The parts of a bench run that --parts names.
const (
	// PartReads is the primary-key floor and every read of design section 6.
	PartReads = "reads"
	// PartWrites is the commits of 1,000 and 10,000 changes.
	PartWrites = "writes"
	// PartConcurrency is the concurrent clients over two Domains, with and
	// without a writer, and their leak checks.
	PartConcurrency = "concurrency"
	// PartBranches is the overlays, the copy and its deletion, and the
	// overlay against copy reads.
	PartBranches = "branches"
	// PartMerges is the Proposals and merges.
	PartMerges = "merges"
)

// PartNames returns the names --parts accepts, in the order a run
// measures them.
func PartNames() []string {
	return []string{PartReads, PartWrites, PartConcurrency, PartBranches, PartMerges}
}

// Parts is the set of parts a bench run measures.
type Parts map[string]bool

// ParseParts reads a comma-separated list of part names; "" and "all" name
// every part. An unknown or repeated name is an error that lists the valid
// ones.
func ParseParts(s string) (Parts, error) {
	s = strings.TrimSpace(s)
	out := Parts{}
	if s == "" || s == "all" {
		for _, n := range PartNames() {
			out[n] = true
		}
		return out, nil
	}
	for _, f := range strings.Split(s, ",") {
		n := strings.TrimSpace(f)
		if !slices.Contains(PartNames(), n) {
			return nil, fmt.Errorf("--parts: %q is not a part; want a comma-separated list of %s (or all)", n, strings.Join(PartNames(), ", "))
		}
		if out[n] {
			return nil, fmt.Errorf("--parts: %q is named twice", n)
		}
		out[n] = true
	}
	return out, nil
}

// Has reports whether the run measures part n.
func (p Parts) Has(n string) bool { return p[n] }

// List returns the parts in the order a run measures them.
func (p Parts) List() []string {
	var out []string
	for _, n := range PartNames() {
		if p[n] {
			out = append(out, n)
		}
	}
	return out
}

// Skipped says why a part was not measured ("" when it is).
func (p Parts) Skipped(n string) string {
	if p.Has(n) {
		return ""
	}
	return "not in --parts " + strings.Join(p.List(), ",")
}
