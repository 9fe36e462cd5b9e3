package keeper

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// Config is Keeper's configuration: an optional YAML file, then one
// environment variable per key (LOREBASE_ + the key upper-cased, dots
// replaced by underscores), then validation. docs/configuration.md describes
// every key.
type Config struct {
	// Listen is the address the HTTP server listens on (listen).
	Listen string `yaml:"listen"`
	// Database is the PostgreSQL connection (database.*).
	Database DatabaseConfig `yaml:"database"`
	// HTTP tunes the HTTP server (http.*).
	HTTP HTTPConfig `yaml:"http"`
	// Store tunes the database layer (store.*).
	Store StoreConfig `yaml:"store"`
	// Search tunes full-text search (search.*).
	Search SearchConfig `yaml:"search"`
	// Read tunes the reads' page sizes (read.*).
	Read ReadConfig `yaml:"read"`
	// Write tunes the commit pipeline (write.*).
	Write WriteConfig `yaml:"write"`
	// Jobs tunes the background jobs (jobs.*).
	Jobs JobsConfig `yaml:"jobs"`
	// Branches tunes branches (branches.*).
	Branches BranchesConfig `yaml:"branches"`
	// Auth tunes authentication (auth.*).
	Auth AuthConfig `yaml:"auth"`
	// Quota holds the limits per Domain (quota.*).
	Quota QuotaConfig `yaml:"quota"`
	// AdminToken is the bootstrap admin's bearer token (admin_token); empty
	// disables the bootstrap admin.
	AdminToken string `yaml:"admin_token"`
}

// DatabaseConfig is the database.* section.
type DatabaseConfig struct {
	// URL is the owner's connection URL (database.url).
	URL string `yaml:"url"`
	// StatementTimeoutMS bounds every statement (database.statement_timeout_ms).
	StatementTimeoutMS int `yaml:"statement_timeout_ms"`
	// MaxConns is the request pool's size; 0 is pgxpool's default (database.max_conns).
	MaxConns int `yaml:"max_conns"`
	// AppURL is the request connections' URL (database.app_url): a login
	// role that is a member of lorebase_app only. keeper migrate creates it.
	// Empty: requests use the owner's connection with SET ROLE (weaker).
	AppURL string `yaml:"app_url"`
	// OwnerMaxConns is the owner's pool size: jobs, token lookups
	// (database.owner_max_conns; 0 is pgxpool's default).
	OwnerMaxConns int `yaml:"owner_max_conns"`
}

// HTTPConfig is the http.* section.
type HTTPConfig struct {
	// MaxBodyBytes bounds a request body; larger is 413 (http.max_body_bytes).
	MaxBodyBytes int64 `yaml:"max_body_bytes"`
	// ReadTimeoutMS bounds reading a whole request (http.read_timeout_ms).
	ReadTimeoutMS int `yaml:"read_timeout_ms"`
	// WriteTimeoutMS bounds handling and writing a response (http.write_timeout_ms).
	WriteTimeoutMS int `yaml:"write_timeout_ms"`
	// ShutdownTimeoutMS bounds the graceful shutdown (http.shutdown_timeout_ms).
	ShutdownTimeoutMS int `yaml:"shutdown_timeout_ms"`
	// RequestTimeout is every request's deadline (http.request_timeout).
	RequestTimeout time.Duration `yaml:"request_timeout"`
	// DomainConcurrency bounds the requests of one Domain in flight at
	// once; more are answered 503 with Retry-After (http.domain_concurrency).
	DomainConcurrency int `yaml:"domain_concurrency"`
	// BodyConcurrency bounds the request bodies being read and decoded at
	// once (http.body_concurrency).
	BodyConcurrency int `yaml:"body_concurrency"`
}

// StoreConfig is the store.* section.
type StoreConfig struct {
	Reads StoreReadsConfig `yaml:"reads"`
}

// StoreReadsConfig is the store.reads.* section.
type StoreReadsConfig struct {
	// SearchCandidates bounds the matches a search ranks (store.reads.search_candidates).
	SearchCandidates int `yaml:"search_candidates"`
}

// SearchConfig is the search.* section.
type SearchConfig struct {
	Partial SearchPartialConfig `yaml:"partial"`
}

// SearchPartialConfig is the search.partial.* section.
type SearchPartialConfig struct {
	// MinResults: fewer every-term matches than this turn on partial
	// matching (search.partial.min_results).
	MinResults int `yaml:"min_results"`
	// Candidates bounds the partial matches ranked (search.partial.candidates).
	Candidates int `yaml:"candidates"`
}

// ReadConfig is the read.* section.
type ReadConfig struct {
	History      LimitConfig        `yaml:"history"`
	Page         PageLimitConfig    `yaml:"page"`
	Neighborhood NeighborhoodConfig `yaml:"neighborhood"`
}

// LimitConfig holds a default page size.
type LimitConfig struct {
	DefaultLimit int `yaml:"default_limit"`
}

// PageLimitConfig holds a default and a maximum page size.
type PageLimitConfig struct {
	DefaultLimit int `yaml:"default_limit"`
	MaxLimit     int `yaml:"max_limit"`
}

// NeighborhoodConfig bounds neighborhood reads.
type NeighborhoodConfig struct {
	MaxLimit int `yaml:"max_limit"`
	MaxDepth int `yaml:"max_depth"`
}

// WriteConfig is the write.* section.
type WriteConfig struct {
	// CopyThresholdRows: larger batches go through COPY (write.copy_threshold_rows).
	CopyThresholdRows int `yaml:"copy_threshold_rows"`
	// MaxChanges bounds the changes of one commit (write.max_changes).
	MaxChanges int `yaml:"max_changes"`
	// IdempotencyTTL is how long an Idempotency-Key is remembered (write.idempotency_ttl).
	IdempotencyTTL time.Duration `yaml:"idempotency_ttl"`
}

// JobsConfig is the jobs.* section.
type JobsConfig struct {
	// BatchTargetMS is how long a job batch aims to hold a branch lock (jobs.batch_target_ms).
	BatchTargetMS int `yaml:"batch_target_ms"`
	// BatchContendedMS is the target once a commit waited (jobs.batch_contended_ms).
	BatchContendedMS int `yaml:"batch_contended_ms"`
	// RescueStuckAfter: a running job not finished after this long is
	// presumed dead (its Keeper killed) and run again (jobs.rescue_stuck_after).
	RescueStuckAfter time.Duration `yaml:"rescue_stuck_after"`
	// SweepInterval: how often branches left copying or deleting without a
	// live job get their job again, and expired idempotency keys go
	// (jobs.sweep_interval).
	SweepInterval time.Duration `yaml:"sweep_interval"`
	// Workers is the number of jobs run at once (jobs.workers).
	Workers int `yaml:"workers"`
}

// QuotaConfig is the quota.* section: limits per Domain.
type QuotaConfig struct {
	// Branches bounds the branches of a Domain (quota.branches).
	Branches int `yaml:"branches"`
	// IndexedAttributes bounds the indexed and unique Attributes of a
	// branch's schema (quota.indexed_attributes).
	IndexedAttributes int `yaml:"indexed_attributes"`
	// CopiesInFlight bounds the copy branches of a Domain still copying
	// (quota.copies_in_flight).
	CopiesInFlight int `yaml:"copies_in_flight"`
}

// AuthConfig is the auth.* section.
type AuthConfig struct {
	// TokenCacheMS: how long a resolved bearer token is kept in memory
	// (auth.token_cache_ms; 0 looks every request's token up).
	TokenCacheMS int `yaml:"token_cache_ms"`
}

// BranchesConfig is the branches.* section.
type BranchesConfig struct {
	// OverlayIndexThreshold: own Records of one Kind past which an overlay
	// gets per-Attribute indexes of its own (branches.overlay_index_threshold).
	OverlayIndexThreshold int `yaml:"overlay_index_threshold"`
}

// DefaultConfig is the configuration without file or environment.
func DefaultConfig() Config {
	return Config{
		Listen: "127.0.0.1:8080",
		Database: DatabaseConfig{
			StatementTimeoutMS: 30000,
		},
		HTTP: HTTPConfig{
			MaxBodyBytes:      32 << 20,
			ReadTimeoutMS:     60000,
			WriteTimeoutMS:    120000,
			ShutdownTimeoutMS: 20000,
			RequestTimeout:    30 * time.Second,
			DomainConcurrency: 32,
			BodyConcurrency:   8,
		},
		Store:  StoreConfig{Reads: StoreReadsConfig{SearchCandidates: 1000}},
		Search: SearchConfig{Partial: SearchPartialConfig{MinResults: 5, Candidates: 100}},
		Read: ReadConfig{
			History:      LimitConfig{DefaultLimit: 20},
			Page:         PageLimitConfig{DefaultLimit: 50, MaxLimit: 1000},
			Neighborhood: NeighborhoodConfig{MaxLimit: 1000, MaxDepth: 3},
		},
		Write: WriteConfig{CopyThresholdRows: 500, MaxChanges: 50000, IdempotencyTTL: 24 * time.Hour},
		Jobs: JobsConfig{BatchTargetMS: 200, BatchContendedMS: 50, RescueStuckAfter: 2 * time.Minute,
			SweepInterval: time.Minute, Workers: 2},
		Quota:    QuotaConfig{Branches: 10000, IndexedAttributes: 64, CopiesInFlight: 4},
		Branches: BranchesConfig{OverlayIndexThreshold: commit.DefaultOverlayIndexThreshold},
		Auth:     AuthConfig{TokenCacheMS: 5000},
	}
}

// configKey is one configuration key and where its value lives.
type configKey struct {
	name string // dotted key, e.g. "http.max_body_bytes"
	ptr  any    // *string, *int, *int64 or *time.Duration
}

// keys lists every key with a pointer into c.
func (c *Config) keys() []configKey {
	return []configKey{
		{"listen", &c.Listen},
		{"database.url", &c.Database.URL},
		{"database.statement_timeout_ms", &c.Database.StatementTimeoutMS},
		{"database.max_conns", &c.Database.MaxConns},
		{"database.app_url", &c.Database.AppURL},
		{"database.owner_max_conns", &c.Database.OwnerMaxConns},
		{"http.max_body_bytes", &c.HTTP.MaxBodyBytes},
		{"http.read_timeout_ms", &c.HTTP.ReadTimeoutMS},
		{"http.write_timeout_ms", &c.HTTP.WriteTimeoutMS},
		{"http.shutdown_timeout_ms", &c.HTTP.ShutdownTimeoutMS},
		{"http.request_timeout", &c.HTTP.RequestTimeout},
		{"http.domain_concurrency", &c.HTTP.DomainConcurrency},
		{"http.body_concurrency", &c.HTTP.BodyConcurrency},
		{"store.reads.search_candidates", &c.Store.Reads.SearchCandidates},
		{"search.partial.min_results", &c.Search.Partial.MinResults},
		{"search.partial.candidates", &c.Search.Partial.Candidates},
		{"read.history.default_limit", &c.Read.History.DefaultLimit},
		{"read.page.default_limit", &c.Read.Page.DefaultLimit},
		{"read.page.max_limit", &c.Read.Page.MaxLimit},
		{"read.neighborhood.max_limit", &c.Read.Neighborhood.MaxLimit},
		{"read.neighborhood.max_depth", &c.Read.Neighborhood.MaxDepth},
		{"write.copy_threshold_rows", &c.Write.CopyThresholdRows},
		{"write.max_changes", &c.Write.MaxChanges},
		{"write.idempotency_ttl", &c.Write.IdempotencyTTL},
		{"jobs.batch_target_ms", &c.Jobs.BatchTargetMS},
		{"jobs.batch_contended_ms", &c.Jobs.BatchContendedMS},
		{"jobs.rescue_stuck_after", &c.Jobs.RescueStuckAfter},
		{"jobs.sweep_interval", &c.Jobs.SweepInterval},
		{"jobs.workers", &c.Jobs.Workers},
		{"quota.branches", &c.Quota.Branches},
		{"quota.indexed_attributes", &c.Quota.IndexedAttributes},
		{"quota.copies_in_flight", &c.Quota.CopiesInFlight},
		{"branches.overlay_index_threshold", &c.Branches.OverlayIndexThreshold},
		{"auth.token_cache_ms", &c.Auth.TokenCacheMS},
		{"admin_token", &c.AdminToken},
	}
}

// ConfigKeys lists every configuration key, dotted.
func ConfigKeys() []string {
	var c Config
	ks := c.keys()
	names := make([]string, len(ks))
	for i, k := range ks {
		names[i] = k.name
	}
	return names
}

// EnvName is the environment variable overriding a configuration key:
// LOREBASE_ + the key upper-cased with dots replaced by underscores
// (store.reads.search_candidates → LOREBASE_STORE_READS_SEARCH_CANDIDATES).
func EnvName(key string) string {
	return "LOREBASE_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// ConfigFileEnv names the environment variable holding the configuration
// file's path when no --config flag is given.
const ConfigFileEnv = "LOREBASE_CONFIG"

// LoadConfig reads the configuration: the defaults, then the YAML file at
// path (skipped when path is empty), then the environment (getenv, usually
// os.Getenv; nil means os.Getenv), then validates it.
func LoadConfig(path string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := DefaultConfig()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("read configuration file: %w", err)
		}
		if err := yaml.UnmarshalWithOptions(data, &cfg, yaml.DisallowUnknownField()); err != nil {
			return cfg, fmt.Errorf("configuration file %s: %s", path, yaml.FormatError(err, false, true))
		}
	}
	if err := cfg.applyEnv(getenv); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

func (c *Config) applyEnv(getenv func(string) string) error {
	var errs []error
	for _, k := range c.keys() {
		env := EnvName(k.name)
		v, ok := lookup(getenv, env)
		if !ok {
			continue
		}
		switch p := k.ptr.(type) {
		case *string:
			*p = v
		case *int:
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %q is not an integer", env, k.name, v))
				continue
			}
			*p = n
		case *int64:
			n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %q is not an integer", env, k.name, v))
				continue
			}
			*p = n
		case *time.Duration:
			d, err := time.ParseDuration(strings.TrimSpace(v))
			if err != nil {
				errs = append(errs, fmt.Errorf("%s (%s): %q is not a duration (for example 30s, 5m, 24h)", env, k.name, v))
				continue
			}
			*p = d
		}
	}
	return errors.Join(errs...)
}

// lookup treats an empty variable as unset, so `LOREBASE_X= keeper serve`
// keeps the file's or the default value.
func lookup(getenv func(string) string, name string) (string, bool) {
	v := getenv(name)
	return v, v != ""
}

// Validate checks every key and reports all that are wrong.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, format string, args ...any) {
		errs = append(errs, fmt.Errorf("%s (%s): %s", key, EnvName(key), fmt.Sprintf(format, args...)))
	}
	if _, _, err := net.SplitHostPort(c.Listen); err != nil {
		bad("listen", "%q is not host:port (for example 127.0.0.1:8080)", c.Listen)
	}
	positive := []struct {
		key string
		v   int
	}{
		{"database.statement_timeout_ms", c.Database.StatementTimeoutMS},
		{"http.read_timeout_ms", c.HTTP.ReadTimeoutMS},
		{"http.write_timeout_ms", c.HTTP.WriteTimeoutMS},
		{"http.shutdown_timeout_ms", c.HTTP.ShutdownTimeoutMS},
		{"store.reads.search_candidates", c.Store.Reads.SearchCandidates},
		{"search.partial.min_results", c.Search.Partial.MinResults},
		{"search.partial.candidates", c.Search.Partial.Candidates},
		{"read.history.default_limit", c.Read.History.DefaultLimit},
		{"read.page.default_limit", c.Read.Page.DefaultLimit},
		{"read.page.max_limit", c.Read.Page.MaxLimit},
		{"read.neighborhood.max_limit", c.Read.Neighborhood.MaxLimit},
		{"read.neighborhood.max_depth", c.Read.Neighborhood.MaxDepth},
		{"write.copy_threshold_rows", c.Write.CopyThresholdRows},
		{"write.max_changes", c.Write.MaxChanges},
		{"jobs.batch_target_ms", c.Jobs.BatchTargetMS},
		{"jobs.batch_contended_ms", c.Jobs.BatchContendedMS},
		{"branches.overlay_index_threshold", c.Branches.OverlayIndexThreshold},
		{"http.domain_concurrency", c.HTTP.DomainConcurrency},
		{"http.body_concurrency", c.HTTP.BodyConcurrency},
		{"jobs.workers", c.Jobs.Workers},
		{"quota.branches", c.Quota.Branches},
		{"quota.indexed_attributes", c.Quota.IndexedAttributes},
		{"quota.copies_in_flight", c.Quota.CopiesInFlight},
	}
	durations := []struct {
		key string
		v   time.Duration
	}{
		{"http.request_timeout", c.HTTP.RequestTimeout},
		{"write.idempotency_ttl", c.Write.IdempotencyTTL},
		{"jobs.rescue_stuck_after", c.Jobs.RescueStuckAfter},
		{"jobs.sweep_interval", c.Jobs.SweepInterval},
	}
	for _, d := range durations {
		if d.v <= 0 {
			bad(d.key, "must be a positive duration (for example 30s), got %s", d.v)
		}
	}
	if c.Database.OwnerMaxConns < 0 || c.Database.OwnerMaxConns > 10000 {
		bad("database.owner_max_conns", "must be between 0 (the driver's default) and 10000, got %d", c.Database.OwnerMaxConns)
	}
	if c.Database.AppURL != "" && c.Database.AppURL == c.Database.URL {
		bad("database.app_url", "must log in as the request role, not as the owner of database.url")
	}
	for _, p := range positive {
		if p.v <= 0 {
			bad(p.key, "must be a positive integer, got %d", p.v)
		}
	}
	if c.Auth.TokenCacheMS < 0 {
		bad("auth.token_cache_ms", "must be 0 (no cache) or a positive number of milliseconds, got %d", c.Auth.TokenCacheMS)
	}
	if c.Database.MaxConns < 0 || c.Database.MaxConns > 10000 {
		bad("database.max_conns", "must be between 0 (the driver's default) and 10000, got %d", c.Database.MaxConns)
	}
	if c.HTTP.MaxBodyBytes < 1024 {
		bad("http.max_body_bytes", "must be at least 1024, got %d", c.HTTP.MaxBodyBytes)
	}
	if c.Read.Page.DefaultLimit > c.Read.Page.MaxLimit {
		bad("read.page.default_limit", "%d exceeds read.page.max_limit %d", c.Read.Page.DefaultLimit, c.Read.Page.MaxLimit)
	}
	if c.Read.History.DefaultLimit > c.Read.Page.MaxLimit {
		bad("read.history.default_limit", "%d exceeds read.page.max_limit %d", c.Read.History.DefaultLimit, c.Read.Page.MaxLimit)
	}
	if c.Jobs.BatchContendedMS > c.Jobs.BatchTargetMS {
		bad("jobs.batch_contended_ms", "%d exceeds jobs.batch_target_ms %d", c.Jobs.BatchContendedMS, c.Jobs.BatchTargetMS)
	}
	if c.AdminToken != "" && len(c.AdminToken) < 16 {
		bad("admin_token", "must be at least 16 characters (or empty to disable the bootstrap admin)")
	}
	for _, r := range c.AdminToken {
		if r <= ' ' || r == 0x7f {
			bad("admin_token", "must not contain spaces or control characters")
			break
		}
	}
	return errors.Join(errs...)
}

// StoreConfig is the pool configuration.
func (c *Config) StoreConfig() store.Config {
	return store.Config{
		StatementTimeout: time.Duration(c.Database.StatementTimeoutMS) * time.Millisecond,
		MaxConns:         int32(c.Database.MaxConns),
		OwnerMaxConns:    int32(c.Database.OwnerMaxConns),
		AppURL:           c.Database.AppURL,
	}
}

// CommitConfig is the commit pipeline's configuration.
func (c *Config) CommitConfig() commit.Config {
	return commit.Config{CopyThresholdRows: c.Write.CopyThresholdRows, MaxChanges: c.Write.MaxChanges,
		OverlayIndexThreshold: c.Branches.OverlayIndexThreshold, IdempotencyTTL: c.Write.IdempotencyTTL}
}

// ReadsConfig is the reads' configuration.
func (c *Config) ReadsConfig() reads.Config {
	return reads.Config{
		SearchCandidates:     c.Store.Reads.SearchCandidates,
		PartialMinResults:    c.Search.Partial.MinResults,
		PartialCandidates:    c.Search.Partial.Candidates,
		HistoryDefaultLimit:  c.Read.History.DefaultLimit,
		PageDefaultLimit:     c.Read.Page.DefaultLimit,
		PageMaxLimit:         c.Read.Page.MaxLimit,
		NeighborhoodMaxLimit: c.Read.Neighborhood.MaxLimit,
		NeighborhoodMaxDepth: c.Read.Neighborhood.MaxDepth,
	}
}

func ms(n int) time.Duration { return time.Duration(n) * time.Millisecond }
