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
	// MaxConns is the pool size; 0 is pgxpool's default (database.max_conns).
	MaxConns int `yaml:"max_conns"`
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
	// RateLimit limits requests per token (http.rate_limit.*).
	RateLimit RateLimitConfig `yaml:"rate_limit"`
	// CacheMaxBytes bounds the response cache of reads; 0 keeps no
	// answers (ETags and 304 still work) (http.cache_max_bytes).
	CacheMaxBytes int64 `yaml:"cache_max_bytes"`
	// TraceQueue bounds the trace steps waiting to be written; a full
	// queue drops steps (http.trace_queue).
	TraceQueue int `yaml:"trace_queue"`
}

// RateLimitConfig is the http.rate_limit.* section: per token and per
// Keeper instance; 0 requests per second turns a class off.
type RateLimitConfig struct {
	// RequestsPerSecond is the average rate of every call (http.rate_limit.requests_per_second).
	RequestsPerSecond int `yaml:"requests_per_second"`
	// Burst is how many calls may come at once (http.rate_limit.burst; at least requests_per_second).
	Burst int `yaml:"burst"`
	// HeavyRequestsPerSecond is the tighter rate of search, neighborhood
	// and merge calls (http.rate_limit.heavy_requests_per_second).
	HeavyRequestsPerSecond int `yaml:"heavy_requests_per_second"`
	// HeavyBurst is their burst (http.rate_limit.heavy_burst).
	HeavyBurst int `yaml:"heavy_burst"`
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
}

// JobsConfig is the jobs.* section.
type JobsConfig struct {
	// BatchTargetMS is how long a job batch aims to hold a branch lock (jobs.batch_target_ms).
	BatchTargetMS int `yaml:"batch_target_ms"`
	// BatchContendedMS is the target once a commit waited (jobs.batch_contended_ms).
	BatchContendedMS int `yaml:"batch_contended_ms"`
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
			CacheMaxBytes:     64 << 20,
			TraceQueue:        10000,
		},
		Store:  StoreConfig{Reads: StoreReadsConfig{SearchCandidates: 1000}},
		Search: SearchConfig{Partial: SearchPartialConfig{MinResults: 5, Candidates: 100}},
		Read: ReadConfig{
			History:      LimitConfig{DefaultLimit: 20},
			Page:         PageLimitConfig{DefaultLimit: 50, MaxLimit: 1000},
			Neighborhood: NeighborhoodConfig{MaxLimit: 1000, MaxDepth: 3},
		},
		Write:    WriteConfig{CopyThresholdRows: 500, MaxChanges: 50000},
		Jobs:     JobsConfig{BatchTargetMS: 200, BatchContendedMS: 50},
		Branches: BranchesConfig{OverlayIndexThreshold: commit.DefaultOverlayIndexThreshold},
		Auth:     AuthConfig{TokenCacheMS: 5000},
	}
}

// configKey is one configuration key and where its value lives.
type configKey struct {
	name string // dotted key, e.g. "http.max_body_bytes"
	ptr  any    // *string, *int or *int64
}

// keys lists every key with a pointer into c.
func (c *Config) keys() []configKey {
	return []configKey{
		{"listen", &c.Listen},
		{"database.url", &c.Database.URL},
		{"database.statement_timeout_ms", &c.Database.StatementTimeoutMS},
		{"database.max_conns", &c.Database.MaxConns},
		{"http.max_body_bytes", &c.HTTP.MaxBodyBytes},
		{"http.read_timeout_ms", &c.HTTP.ReadTimeoutMS},
		{"http.write_timeout_ms", &c.HTTP.WriteTimeoutMS},
		{"http.shutdown_timeout_ms", &c.HTTP.ShutdownTimeoutMS},
		{"http.rate_limit.requests_per_second", &c.HTTP.RateLimit.RequestsPerSecond},
		{"http.rate_limit.burst", &c.HTTP.RateLimit.Burst},
		{"http.rate_limit.heavy_requests_per_second", &c.HTTP.RateLimit.HeavyRequestsPerSecond},
		{"http.rate_limit.heavy_burst", &c.HTTP.RateLimit.HeavyBurst},
		{"http.cache_max_bytes", &c.HTTP.CacheMaxBytes},
		{"http.trace_queue", &c.HTTP.TraceQueue},
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
		{"jobs.batch_target_ms", &c.Jobs.BatchTargetMS},
		{"jobs.batch_contended_ms", &c.Jobs.BatchContendedMS},
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
	}
	for _, p := range positive {
		if p.v <= 0 {
			bad(p.key, "must be a positive integer, got %d", p.v)
		}
	}
	for _, k := range []struct {
		key string
		v   int
	}{
		{"http.rate_limit.requests_per_second", c.HTTP.RateLimit.RequestsPerSecond},
		{"http.rate_limit.burst", c.HTTP.RateLimit.Burst},
		{"http.rate_limit.heavy_requests_per_second", c.HTTP.RateLimit.HeavyRequestsPerSecond},
		{"http.rate_limit.heavy_burst", c.HTTP.RateLimit.HeavyBurst},
	} {
		if k.v < 0 || k.v > 1000000 {
			bad(k.key, "must be 0 (off) to 1000000, got %d", k.v)
		}
	}
	if c.HTTP.CacheMaxBytes < 0 {
		bad("http.cache_max_bytes", "must be 0 (no cache) or a positive number of bytes, got %d", c.HTTP.CacheMaxBytes)
	}
	if c.HTTP.TraceQueue < 1 || c.HTTP.TraceQueue > 10000000 {
		bad("http.trace_queue", "must be 1 to 10000000, got %d", c.HTTP.TraceQueue)
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
	}
}

// CommitConfig is the commit pipeline's configuration.
func (c *Config) CommitConfig() commit.Config {
	return commit.Config{CopyThresholdRows: c.Write.CopyThresholdRows, MaxChanges: c.Write.MaxChanges,
		OverlayIndexThreshold: c.Branches.OverlayIndexThreshold}
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
