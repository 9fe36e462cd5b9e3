package perf

import (
	"flag"
	"fmt"
	"sort"
	"strings"

	"github.com/lorebase/lorebase/internal/supply"
)

// CommonFlags are the flags perf/cmd/supply and perf/cmd/bench share.
type CommonFlags struct {
	Scale        int
	Seed         uint64
	ExtraLinks   int
	Replicas     int
	BatchSize    int
	DatabaseURL  string
	SeedDatabase string
	Database     string
	Keep         bool
	InPlace      bool
	Durable      bool
	Settings     SettingFlags
	Profile      string
}

// Register adds the flags to fs.
func (c *CommonFlags) Register(fs *flag.FlagSet) {
	fs.IntVar(&c.Scale, "scale", 5, "dataset scale: about 185 Records per unit (540: 100k, 5406: 1M)")
	fs.Uint64Var(&c.Seed, "seed", 1, "dataset seed")
	fs.IntVar(&c.ExtraLinks, "extra-links", 4, "supplied_by and stocked_at Links per Part beyond the first of each")
	fs.IntVar(&c.Replicas, "replicas", 0, "load scale/replicas through the commit pipeline, then copy its materialized rows replicas-1 times with renumbered keys (set-based SQL)")
	fs.IntVar(&c.BatchSize, "batch-size", DefaultBatchSize, "changes per load commit")
	fs.StringVar(&c.DatabaseURL, "database-url", "", "a running server to create databases in (default: LOREBASE_TEST_DATABASE_URL, LOREBASE_DATABASE_URL, else a throwaway cluster)")
	fs.StringVar(&c.SeedDatabase, "seed-database", "", "load once into this database and keep it; each run works on a fresh copy of it")
	fs.StringVar(&c.Database, "database", "", "name of the database to create and measure (default: a random name)")
	fs.BoolVar(&c.InPlace, "in-place", false, "with --seed-database: measure the seed database itself, not a copy (the run's commits and branches stay in it)")
	fs.BoolVar(&c.Keep, "keep", false, "keep the measured database afterwards")
	fs.BoolVar(&c.Durable, "durable", true, "throwaway cluster only: keep fsync and synchronous_commit on")
	fs.StringVar(&c.Profile, "profile", "", "storage profile (dev, 1m, 10m) whose table parameters are applied to the loaded database after migrating it")
	fs.Var(&c.Settings, "pg", "throwaway cluster only: a postgresql.conf setting name=value over the defaults (repeatable)")
}

// SupplyConfig is the dataset the flags select.
func (c *CommonFlags) SupplyConfig() supply.Config {
	return supply.Config{Seed: c.Seed, Scale: c.Scale, ExtraLinks: c.ExtraLinks, Replicas: c.Replicas}
}

// ServerOptions are the server the flags select.
func (c *CommonFlags) ServerOptions() ServerOptions {
	settings := DefaultSettings()
	for k, v := range c.Settings {
		settings[k] = v
	}
	return ServerOptions{URL: c.DatabaseURL, Settings: settings, Durable: c.Durable}
}

// SettingFlags collects name=value flags.
type SettingFlags map[string]string

// String implements flag.Value.
func (s *SettingFlags) String() string {
	if s == nil {
		return ""
	}
	out := make([]string, 0, len(*s))
	for k, v := range *s {
		out = append(out, k+"="+v)
	}
	sort.Strings(out)
	return strings.Join(out, ",")
}

// Set implements flag.Value.
func (s *SettingFlags) Set(v string) error {
	k, val, ok := strings.Cut(v, "=")
	if !ok || k == "" {
		return fmt.Errorf("want name=value, got %q", v)
	}
	if *s == nil {
		*s = SettingFlags{}
	}
	(*s)[k] = val
	return nil
}
