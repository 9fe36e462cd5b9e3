package config

import "time"

// Config is Keeper's configuration. The table in keys.go names the key of
// every field.
type Config struct {
	// Listen is the address the HTTP server listens on.
	Listen   string
	Database Database
	HTTP     HTTP
	Store    Store
	Search   Search
	// Embeddings configures the HTTP embedder of semantic search.
	Embeddings Embeddings
	Read       Read
	Write      Write
	Jobs       Jobs
	Branches   Branches
	Merge      Merge
	Auth       Auth
	Quota      Quota
	// AdminToken is the bootstrap admin's bearer token; empty disables it.
	AdminToken string
}

// Database is the database.* section.
type Database struct {
	URL              string
	StatementTimeout time.Duration
	MaxConns         int
	// AppURL is the request connections' login role (a member of
	// lorebase_app only); empty: requests use URL with SET ROLE.
	AppURL string
	// OwnerMaxConns sizes the owner's pool (jobs, token lookups).
	OwnerMaxConns int
}

// HTTP is the http.* section.
type HTTP struct {
	MaxBodyBytes    int64
	ReadTimeout     time.Duration
	WriteTimeout    time.Duration
	ShutdownTimeout time.Duration
	// RequestTimeout is every request's deadline.
	RequestTimeout time.Duration
	// DomainConcurrency bounds one Domain's requests in flight.
	DomainConcurrency int
	// BodyConcurrency bounds the request bodies read at once.
	BodyConcurrency int
	RateLimit       RateLimit
	// CacheMaxBytes bounds the response cache of reads (0 keeps nothing).
	CacheMaxBytes int64
	// TraceQueue bounds the trace steps waiting to be written.
	TraceQueue int
}

// RateLimit is the http.rate_limit.* section: per token and per Keeper
// instance; 0 requests per second turns a class off.
type RateLimit struct {
	RequestsPerSecond      int
	Burst                  int
	HeavyRequestsPerSecond int
	HeavyBurst             int
}

// Store is the store.* section.
type Store struct {
	Reads StoreReads
}

// StoreReads is the store.reads.* section.
type StoreReads struct {
	SearchCandidates int
}

// Search is the search.* section.
type Search struct {
	Partial  SearchPartial
	Semantic SearchSemantic
	Hybrid   SearchHybrid
}

// SearchSemantic is the search.semantic.* section.
type SearchSemantic struct {
	EfSearch int
}

// SearchHybrid is the search.hybrid.* section.
type SearchHybrid struct {
	RRFK           int
	TextWeight     int
	SemanticWeight int
}

// Embeddings is the embeddings.* section: the HTTP embedder.
type Embeddings struct {
	URL               string
	Model             string
	APIKey            string
	BatchSize         int
	RequestsPerSecond int
	MaxRetries        int
}

// SearchPartial is the search.partial.* section.
type SearchPartial struct {
	MinResults int
	Candidates int
}

// Read is the read.* section.
type Read struct {
	History      Limit
	Page         PageLimit
	Neighborhood Neighborhood
	// AtMaxChanges bounds the changes a read as of a Revision replays.
	AtMaxChanges int
}

// Limit holds a default page size.
type Limit struct {
	DefaultLimit int
}

// PageLimit holds a default and a maximum page size.
type PageLimit struct {
	DefaultLimit int
	MaxLimit     int
}

// Neighborhood bounds neighborhood reads.
type Neighborhood struct {
	MaxLimit int
	MaxDepth int
}

// Write is the write.* section.
type Write struct {
	CopyThresholdRows int
	MaxChanges        int
	IdempotencyTTL    time.Duration
}

// Jobs is the jobs.* section.
type Jobs struct {
	BatchTarget    time.Duration
	BatchContended time.Duration
	StopTimeout    time.Duration
	// RescueStuckAfter: a running job older than this is presumed dead.
	RescueStuckAfter time.Duration
	// SweepInterval: how often stuck branches and expired keys are swept.
	SweepInterval time.Duration
	// KeepWarmInterval: how often the write path's primary keys are kept
	// in shared buffers (jobs.Warmer); 0 never.
	KeepWarmInterval time.Duration
	// Workers is how many jobs run at once.
	Workers int
}

// Quota is the quota.* section: limits per Domain.
type Quota struct {
	Branches          int
	IndexedAttributes int
	CopiesInFlight    int
}

// Branches is the branches.* section.
type Branches struct {
	OverlayIndexThreshold int
}

// Merge is the merge.* section.
type Merge struct {
	JobThreshold int
}

// Auth is the auth.* section.
type Auth struct {
	TokenCache time.Duration
}
