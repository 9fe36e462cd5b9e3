package perf

import (
	"bufio"
	"context"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/lorebase/lorebase/store"
)

// Machine describes the computer a run measured on.
type Machine struct {
	CPU         string `json:"cpu"`
	Cores       int    `json:"cores"`
	MemoryBytes int64  `json:"memory_bytes"`
	OS          string `json:"os"`
	Go          string `json:"go"`
	// HugePages are the host's huge pages when the run began
	// (/proc/meminfo): reserved, and in use or promised to a mapping (a
	// server on this host with huge_pages try or on maps its shared
	// memory on them). Empty where not known.
	HugePages string `json:"huge_pages,omitempty"`
}

// ReadMachine reads the CPU model (/proc/cpuinfo), cores, memory and huge
// pages (/proc/meminfo); fields it cannot read stay empty.
func ReadMachine() Machine {
	m := Machine{Cores: runtime.NumCPU(), MemoryBytes: memoryBytes(), OS: runtime.GOOS + "/" + runtime.GOARCH, Go: runtime.Version()}
	if h, ok := readHugePages(); ok {
		m.HugePages = h.String()
	}
	if f, err := os.Open("/proc/cpuinfo"); err == nil {
		defer f.Close() //nolint:errcheck // read only
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			if k, v, ok := strings.Cut(sc.Text(), ":"); ok && strings.TrimSpace(k) == "model name" {
				m.CPU = strings.TrimSpace(v)
				break
			}
		}
	}
	return m
}

// memoryBytes is MemTotal of /proc/meminfo, or 4 GiB where it cannot be read.
func memoryBytes() int64 {
	const fallback = 4 << 30
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return fallback
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemTotal:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			if err == nil {
				return kb << 10
			}
		}
	}
	return fallback
}

// Postgres describes the server a run measured.
type Postgres struct {
	Version  string            `json:"version"`
	Settings map[string]string `json:"settings"`
}

// reportedSettings are the server settings a report shows.
// It is a lookup table, never written.
var reportedSettings = []string{"shared_buffers", "effective_cache_size", "work_mem", "maintenance_work_mem",
	"random_page_cost", "jit", "fsync", "synchronous_commit", "max_wal_size", "wal_compression", "max_connections"}

// ReadPostgres reads the server version and the reported settings.
func ReadPostgres(ctx context.Context, s *store.Store) (Postgres, error) {
	p := Postgres{Settings: map[string]string{}}
	if err := s.Pool.QueryRow(ctx, `SHOW server_version`).Scan(&p.Version); err != nil {
		return p, fmt.Errorf("read server version: %w", err)
	}
	rows, err := s.Pool.Query(ctx, `SELECT name, current_setting(name) FROM pg_settings WHERE name = ANY($1)`, reportedSettings)
	if err != nil {
		return p, fmt.Errorf("read settings: %w", err)
	}
	var k, v string
	if _, err := pgx.ForEachRow(rows, []any{&k, &v}, func() error {
		p.Settings[k] = v
		return nil
	}); err != nil {
		return p, fmt.Errorf("read settings: %w", err)
	}
	return p, nil
}

// Dataset describes the measured data.
type Dataset struct {
	Seed          uint64         `json:"seed"`
	Scale         int            `json:"scale"`
	ExtraLinks    int            `json:"extra_links"`
	Records       int64          `json:"records"`
	Links         int64          `json:"links"` // every Link of main, foreign-key Links included
	StoredLinks   int64          `json:"stored_links"`
	ByKind        map[string]int `json:"by_kind"`
	Revisions     int64          `json:"revisions"`
	DatabaseBytes int64          `json:"database_bytes"`
	DatabaseSize  string         `json:"database_size"`
}

// ReadDataset counts the Records and Links of main in the Domain and sizes
// the database (as the owner).
func ReadDataset(ctx context.Context, s *store.Store, domainID int32) (Dataset, error) {
	d := Dataset{ByKind: map[string]int{}}
	branch := `(SELECT id FROM refs WHERE domain_id = $1 AND name = 'main')`
	rows, err := s.Pool.Query(ctx, `SELECT kind, count(*) FROM mat_records
		WHERE domain_id = $1 AND branch_id = `+branch+` AND NOT deleted GROUP BY kind`, domainID)
	if err != nil {
		return d, fmt.Errorf("count records: %w", err)
	}
	var k string
	var n int
	if _, err := pgx.ForEachRow(rows, []any{&k, &n}, func() error {
		d.ByKind[k] = n
		d.Records += int64(n)
		return nil
	}); err != nil {
		return d, fmt.Errorf("count records: %w", err)
	}
	err = s.Pool.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE origin = 'l') FROM mat_links
		WHERE domain_id = $1 AND branch_id = `+branch+` AND NOT deleted`, domainID).Scan(&d.Links, &d.StoredLinks)
	if err != nil {
		return d, fmt.Errorf("count links: %w", err)
	}
	if err := s.Pool.QueryRow(ctx, `SELECT count(*) FROM revisions WHERE domain_id = $1`, domainID).Scan(&d.Revisions); err != nil {
		return d, fmt.Errorf("count revisions: %w", err)
	}
	err = s.Pool.QueryRow(ctx, `SELECT pg_database_size(current_database()), pg_size_pretty(pg_database_size(current_database()))`).
		Scan(&d.DatabaseBytes, &d.DatabaseSize)
	if err != nil {
		return d, fmt.Errorf("size database: %w", err)
	}
	return d, nil
}

// CPUProbeSQL is the server CPU probe's statement: three million integers
// summed in one backend, reading no table and writing no temporary file
// (the set-returning function in the select list yields its values one at
// a time; in FROM it would collect them in a tuplestore, which spills past
// work_mem and times the disk too).
const CPUProbeSQL = `SELECT sum(x) FROM (SELECT generate_series(1, 3000000) x) s`

// CPUProbeRuns is how many times a probe runs the statement.
const CPUProbeRuns = 5

// CPUProbe is how long the server took for CPUProbeSQL at one moment of a
// run: on a machine shared with others, two runs of the same code differ
// as the machine's speed does, and the probe at each run's start and end
// shows how far it moved.
type CPUProbe struct {
	// At names the moment ("start", "end").
	At string `json:"at"`
	// Median and Min are over CPUProbeRuns runs in a row, each timed from
	// the client (one loopback round trip included).
	Median time.Duration `json:"median_ns"`
	Min    time.Duration `json:"min_ns"`
}

// ProbeCPU runs CPUProbeSQL CPUProbeRuns times on one connection of pool.
func ProbeCPU(ctx context.Context, pool *pgxpool.Pool, at string) (CPUProbe, error) {
	conn, err := pool.Acquire(ctx)
	if err != nil {
		return CPUProbe{}, fmt.Errorf("cpu probe: %w", err)
	}
	defer conn.Release()
	lat := make([]time.Duration, 0, CPUProbeRuns)
	for range CPUProbeRuns {
		var sum int64
		start := time.Now()
		if err := conn.QueryRow(ctx, CPUProbeSQL).Scan(&sum); err != nil {
			return CPUProbe{}, fmt.Errorf("cpu probe: %w", err)
		}
		lat = append(lat, time.Since(start))
	}
	slices.Sort(lat)
	return CPUProbe{At: at, Median: lat[len(lat)/2], Min: lat[0]}, nil
}
