package storagecli

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// Setting is one PostgreSQL server setting of a profile, written as
// ALTER SYSTEM would take it.
type Setting struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// Param is one table storage parameter.
type Param struct {
	Name  string `json:"name"`
	Value string `json:"value"`
}

// TableParams are the storage parameters of every partition of a
// hash-partitioned table (Table is the parent, e.g. mat_records).
type TableParams struct {
	Table  string  `json:"table"`
	Params []Param `json:"params"`
}

// Profile is a set of server settings and table storage parameters sized
// for the memory PostgreSQL has.
type Profile struct {
	Name string `json:"name"`
	// Memory is the memory the profile assumes PostgreSQL has, in bytes.
	Memory int64 `json:"memory"`
	// Tier names the table parameters chosen by size: small, medium, large.
	Tier     string        `json:"tier"`
	Settings []Setting     `json:"settings"`
	Tables   []TableParams `json:"tables"`
}

// Setting returns the value of the named setting, "" when the profile has
// none.
func (p *Profile) Setting(name string) string {
	for _, s := range p.Settings {
		if s.Name == name {
			return s.Value
		}
	}
	return ""
}

// Limits of ForMemory.
const (
	// MinMemory is the least memory a profile is computed for.
	MinMemory = 512 * mB
	// MaxMemory is the most memory a profile is computed for.
	MaxMemory = 64 * tB
)

// named profiles: the memory each assumes.
var namedMemory = map[string]int64{
	"dev": 2 * gB,
	"1m":  8 * gB,
	"10m": 64 * gB,
}

// ProfileNames lists the named profiles, smallest first.
func ProfileNames() []string {
	names := make([]string, 0, len(namedMemory))
	for n := range namedMemory {
		names = append(names, n)
	}
	sort.Slice(names, func(i, j int) bool { return namedMemory[names[i]] < namedMemory[names[j]] })
	return names
}

// Named returns a named profile: dev (a laptop or CI machine, 2 GiB for
// PostgreSQL), 1m (a million Records, 8 GiB, which keeps their whole read
// set of about 5.5 GB resident) or 10m (ten million Records, 64 GiB, for a
// read set of about 44 GB). Each is ForMemory of that memory.
func Named(name string) (*Profile, error) {
	mem, ok := namedMemory[name]
	if !ok {
		return nil, fmt.Errorf("unknown profile %q (profiles: %s)", name, strings.Join(ProfileNames(), ", "))
	}
	p, err := ForMemory(mem)
	if err != nil {
		return nil, err
	}
	p.Name = name
	return p, nil
}

// ForMemory computes the profile for PostgreSQL having mem bytes (the
// machine's memory when it runs nothing else). The formulas, with M the
// memory and sizes rounded down to whole MB:
//
//	shared_buffers               M/4
//	effective_cache_size         3M/4
//	work_mem                     M/512, between 4MB and 256MB
//	maintenance_work_mem         M/16, between 64MB and 2GB
//	max_wal_size                 M/4, between 1GB and 16GB
//	min_wal_size                 max_wal_size/4
//	checkpoint_completion_target 0.9
//	random_page_cost             1.1 (SSD)
//	effective_io_concurrency     200 (SSD)
//	jit                          off
//	wal_compression              lz4
//	autovacuum_vacuum_scale_factor  0.05
//	autovacuum_analyze_scale_factor 0.02
//
// The table tier is small below 4 GiB, medium below 32 GiB, large from
// there (see tierParams).
func ForMemory(mem int64) (*Profile, error) {
	if mem < MinMemory || mem > MaxMemory {
		return nil, fmt.Errorf("memory %s is out of range: a profile needs between %s and %s",
			HumanSize(mem), FormatSetting(MinMemory), FormatSetting(MaxMemory))
	}
	maxWAL := clamp(floorMB(mem/4), 1*gB, 16*gB)
	p := &Profile{
		Name:   "memory-" + FormatSetting(floorMB(mem)),
		Memory: mem,
		Settings: []Setting{
			{"shared_buffers", FormatSetting(floorMB(mem / 4))},
			{"effective_cache_size", FormatSetting(floorMB(mem / 4 * 3))},
			{"work_mem", FormatSetting(clamp(floorMB(mem/512), 4*mB, 256*mB))},
			{"maintenance_work_mem", FormatSetting(clamp(floorMB(mem/16), 64*mB, 2*gB))},
			{"max_wal_size", FormatSetting(maxWAL)},
			{"min_wal_size", FormatSetting(floorMB(maxWAL / 4))},
			{"checkpoint_completion_target", "0.9"},
			{"random_page_cost", "1.1"},
			{"effective_io_concurrency", "200"},
			{"jit", "off"},
			{"wal_compression", "lz4"},
			{"autovacuum_vacuum_scale_factor", "0.05"},
			{"autovacuum_analyze_scale_factor", "0.02"},
		},
	}
	switch {
	case mem < 4*gB:
		p.Tier = "small"
	case mem < 32*gB:
		p.Tier = "medium"
	default:
		p.Tier = "large"
	}
	p.Tables = tierParams(p.Tier)
	return p, nil
}

// tierParams are the storage parameters of the large partitions per tier.
//
// mat_records rows are rewritten by every put and patch: from the medium
// tier a fill factor of 90 leaves room on each page for the new version
// (a HOT update where no indexed column changed), so a Domain's Records stay
// on the pages they were on. mat_links and mat_history are insert-mostly
// (history only grows; Links are inserted and deleted) and stay packed.
// Autovacuum and analyze run after a fraction of a partition changed; on
// partitions of millions of rows the default 20% (vacuum) and 10% (analyze)
// wait too long, so the fractions fall as the tier grows and the threshold
// keeps small partitions from being vacuumed for a handful of rows.
func tierParams(tier string) []TableParams {
	type av struct{ vacuum, threshold, analyze string }
	var recFill string
	var hot, hist av
	switch tier {
	case "small":
		recFill = "100"
		hot = av{"0.05", "500", "0.02"}
		hist = av{"0.1", "500", "0.05"}
	case "medium":
		recFill = "90"
		hot = av{"0.02", "1000", "0.01"}
		hist = av{"0.05", "1000", "0.02"}
	default:
		recFill = "90"
		hot = av{"0.01", "10000", "0.005"}
		hist = av{"0.02", "10000", "0.01"}
	}
	params := func(fill string, a av) []Param {
		return []Param{
			{"fillfactor", fill},
			{"autovacuum_vacuum_scale_factor", a.vacuum},
			{"autovacuum_vacuum_threshold", a.threshold},
			{"autovacuum_analyze_scale_factor", a.analyze},
		}
	}
	return []TableParams{
		{Table: "mat_records", Params: params(recFill, hot)},
		{Table: "mat_links", Params: params("100", hot)},
		{Table: "mat_history", Params: params("100", hist)},
	}
}

func floorMB(b int64) int64 { return b / mB * mB }

func clamp(v, lo, hi int64) int64 {
	return max(lo, min(v, hi))
}

// tableParamSpec is the range of a table storage parameter this command
// sets.
type tableParamSpec struct {
	integer  bool
	min, max float64
}

var tableParamSpecs = map[string]tableParamSpec{
	"fillfactor":                      {integer: true, min: 10, max: 100},
	"autovacuum_vacuum_scale_factor":  {min: 0, max: 100},
	"autovacuum_vacuum_threshold":     {integer: true, min: 0, max: 2147483647},
	"autovacuum_analyze_scale_factor": {min: 0, max: 100},
	"autovacuum_analyze_threshold":    {integer: true, min: 0, max: 2147483647},
}

// partitionedTables are the parents whose partitions a profile tunes.
var partitionedTables = map[string]bool{"mat_records": true, "mat_links": true, "mat_history": true}

// parseTableParam validates a table storage parameter and returns its
// value as a number.
func parseTableParam(name, value string) (float64, error) {
	spec, ok := tableParamSpecs[name]
	if !ok {
		return 0, fmt.Errorf("table parameter %q is not supported", name)
	}
	f, err := strconv.ParseFloat(strings.TrimSpace(value), 64)
	if err != nil {
		return 0, fmt.Errorf("table parameter %s = %q: not a number", name, value)
	}
	if spec.integer && f != float64(int64(f)) {
		return 0, fmt.Errorf("table parameter %s = %q: not an integer", name, value)
	}
	if f < spec.min || f > spec.max {
		return 0, fmt.Errorf("table parameter %s = %q: out of range %g..%g", name, value, spec.min, spec.max)
	}
	return f, nil
}

// Validate checks the parts of a profile that need no server: table
// parameters and their tables. Server settings are validated against
// pg_settings by Plan.
func (p *Profile) Validate() error {
	var problems []string
	for _, t := range p.Tables {
		if !partitionedTables[t.Table] {
			problems = append(problems, fmt.Sprintf("table %q is not tuned by storage profiles", t.Table))
		}
		for _, prm := range t.Params {
			if _, err := parseTableParam(prm.Name, prm.Value); err != nil {
				problems = append(problems, t.Table+": "+err.Error())
			}
		}
	}
	seen := map[string]bool{}
	for _, s := range p.Settings {
		if seen[s.Name] {
			problems = append(problems, fmt.Sprintf("setting %s appears twice", s.Name))
		}
		seen[s.Name] = true
		if strings.ContainsRune(s.Value, 0) || strings.ContainsRune(s.Name, 0) {
			problems = append(problems, fmt.Sprintf("setting %q holds a NUL byte", s.Name))
		}
	}
	if len(problems) > 0 {
		return fmt.Errorf("invalid profile %s: %s", p.Name, strings.Join(problems, "; "))
	}
	return nil
}
