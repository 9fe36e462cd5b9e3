package commit

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// Request is a commit as a client sends it.
type Request struct {
	Message      string          `json:"message"`
	Author       string          `json:"author"`
	ExpectedHead *string         `json:"expected_head,omitempty"`
	Provenance   json.RawMessage `json:"provenance,omitempty"`
	Changes      []Change        `json:"changes"`
	// IdempotencyScope is whose Idempotency-Key this is (Keeper: the
	// token's id): keys of different scopes never meet.
	IdempotencyScope string `json:"-"`
}

// Change is one operation of a commit: put, patch, delete, link or unlink.
type Change struct {
	Op         string          `json:"op"`
	Kind       string          `json:"kind,omitempty"`
	Key        string          `json:"key,omitempty"`
	Values     json.RawMessage `json:"values,omitempty"`
	Relation   string          `json:"relation,omitempty"`
	From       string          `json:"from,omitempty"`
	To         string          `json:"to,omitempty"`
	Provenance json.RawMessage `json:"provenance,omitempty"`
	// Vector is the Record's embedding, for a put or patch of a Kind that
	// declares one: an array of the Kind's dims finite numbers.
	Vector json.RawMessage `json:"vector,omitempty"`
	// VectorFrom, for a put without Vector, names a Record version (its
	// seq) whose values the put repeats: the new version takes that
	// version's vector of the Kind's embedding spec, if it has one, instead
	// of being embedded again (a merge carrying a Record unchanged from its
	// source). Never read from JSON.
	VectorFrom int64 `json:"-"`
}

// Result is what a landed commit answers.
type Result struct {
	Revision string `json:"revision"`
	// Number is the Revision's number within its Domain (1, 2, 3...),
	// the seq clients see.
	Number int64 `json:"seq"`
	// Seq is the internal order of Revisions across Domains; never shown.
	Seq     int64    `json:"-"`
	Parents []string `json:"parents"`
	Changes int      `json:"changes"`
	// Replayed is true when an Idempotency-Key matched an earlier commit
	// and this is its first answer again.
	Replayed bool `json:"-"`
}

// Config tunes the pipeline.
type Config struct {
	// CopyThresholdRows: batches of more rows than this go through COPY into
	// a staging table (write.copy_threshold_rows).
	CopyThresholdRows int
	// MaxChanges bounds the changes of one commit.
	MaxChanges int
	// MaxIndexedAttributes bounds the indexed and unique Attributes of a
	// schema (quota.indexed_attributes); 0 is no limit.
	MaxIndexedAttributes int
	// OnSchemaChange, when set, runs inside the transaction of a schema
	// change after the new schema row is written (for example to queue the
	// index builds the new schema needs). Its error rolls the change back.
	OnSchemaChange func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, old, new *schema.Schema) error
	// IndexBuilds, when set, queues per-Attribute index builds of a Kind of
	// a branch in the commit's transaction: an overlay gets them once its
	// own Records of the Kind pass OverlayIndexThreshold.
	IndexBuilds func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, kind string, attributes []string) error
	// IndexName names the per-Attribute index of (Domain, branch, Kind,
	// Attribute), so the pipeline skips Kinds already indexed.
	IndexName func(domainID, branchID int32, kind, attribute string) string
	// OverlayIndexThreshold: own Records of one Kind past which an overlay
	// gets per-Attribute indexes (branches.overlay_index_threshold; below
	// it an attribute query reads the overlay's own Records of the Kind
	// through the (domain_id, branch_id, kind, key) index and filters them;
	// docs/branches.md has the measurement behind the default); 0 is the
	// default, negative never.
	OverlayIndexThreshold int
	// KnownModel reports whether an embedding model is served (a schema
	// naming another is refused); nil serves only schema.ModelHash and
	// schema.ModelClient.
	KnownModel func(model string) bool
	// EmbedJobs, when set, queues in the commit's transaction the embedding
	// of the Records that commit seq wrote on a branch and whose Kind
	// embeds with a model other than schema.ModelClient.
	EmbedJobs func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, seq int64) error
	// IdempotencyTTL is how long an Idempotency-Key is remembered
	// (write.idempotency_ttl); 0 is DefaultIdempotencyTTL.
	IdempotencyTTL time.Duration
	// AnalyzeJobs, when set, queues in the commit's transaction the taking
	// of the Domain's planner statistics again (jobs.QueueAnalyze: at most
	// once a Domain in each jobs.AnalyzePeriod) when the commit creates
	// AnalyzeAfterRows Records and Links or more, or creates some and its
	// Revision number is a multiple of AnalyzeEveryRevisions: a Domain that
	// its partitions' statistics do not know yet is estimated at a row, and
	// lookups by key may scan its branches instead.
	AnalyzeJobs func(ctx context.Context, tx pgx.Tx, domainID int32) error
	// AnalyzeAfterRows is the number of Records and Links a commit creates
	// from which it calls AnalyzeJobs; 0 is DefaultAnalyzeAfterRows.
	AnalyzeAfterRows int
	// AnalyzeEveryRevisions: a commit whose Revision number is a multiple of
	// it and that creates Records or Links calls AnalyzeJobs; 0 is
	// DefaultAnalyzeEveryRevisions.
	AnalyzeEveryRevisions int
}

// DefaultAnalyzeAfterRows is Config.AnalyzeAfterRows when unset.
const DefaultAnalyzeAfterRows = 1000

// DefaultAnalyzeEveryRevisions is Config.AnalyzeEveryRevisions when unset.
const DefaultAnalyzeEveryRevisions = 100

func (c Config) analyzeAfterRows() int {
	if c.AnalyzeAfterRows > 0 {
		return c.AnalyzeAfterRows
	}
	return DefaultAnalyzeAfterRows
}

func (c Config) analyzeEveryRevisions() int64 {
	if c.AnalyzeEveryRevisions > 0 {
		return int64(c.AnalyzeEveryRevisions)
	}
	return DefaultAnalyzeEveryRevisions
}

// DefaultIdempotencyTTL is how long an Idempotency-Key is remembered when
// Config.IdempotencyTTL is 0.
const DefaultIdempotencyTTL = 24 * time.Hour

// Errors the pipeline returns besides *lberr.Error (validation: Invalid or
// Unprocessable) and store.ErrNotFound (no such branch).
var (
	// ErrHeadMoved: expected_head no longer matches the branch head
	// (lberr.Conflict).
	ErrHeadMoved = lberr.New(lberr.Conflict, "the branch head moved: expected_head does not match")
	// ErrIdempotencyReused: an Idempotency-Key was sent again with a
	// different body (lberr.Unprocessable).
	ErrIdempotencyReused = lberr.New(lberr.Unprocessable, "idempotency key reused with a different request")
)

// Pipeline parses, validates, writes and materializes commits.
type Pipeline struct {
	store *store.Store
	cfg   Config
}

// New returns a pipeline over the store.
func New(s *store.Store, cfg Config) *Pipeline {
	def := ConfigFrom(config.Default())
	if cfg.CopyThresholdRows <= 0 {
		cfg.CopyThresholdRows = def.CopyThresholdRows
	}
	if cfg.IdempotencyTTL <= 0 {
		cfg.IdempotencyTTL = DefaultIdempotencyTTL
	}
	if cfg.MaxChanges <= 0 {
		cfg.MaxChanges = def.MaxChanges
	}
	if cfg.OverlayIndexThreshold == 0 {
		cfg.OverlayIndexThreshold = def.OverlayIndexThreshold
	}
	return &Pipeline{store: s, cfg: cfg}
}

// ConfigFrom is the pipeline's part of Keeper's configuration (the hooks
// are left unset).
func ConfigFrom(c config.Config) Config {
	return Config{CopyThresholdRows: c.Write.CopyThresholdRows, MaxChanges: c.Write.MaxChanges,
		OverlayIndexThreshold: c.Branches.OverlayIndexThreshold, IdempotencyTTL: c.Write.IdempotencyTTL,
		MaxIndexedAttributes: c.Quota.IndexedAttributes}
}

// Commit applies a commit to a branch of the Domain, atomically.
// idempotencyKey may be empty.
func (p *Pipeline) Commit(ctx context.Context, domainID int32, branch string, req *Request, idempotencyKey string) (*Result, error) {
	return p.commit(ctx, domainID, branch, req, idempotencyKey)
}

// SchemaRequest replaces a branch's schema (a commit).
type SchemaRequest struct {
	Document     json.RawMessage
	Author       string
	Message      string
	ExpectedHead *string
}

// PutSchema replaces the schema of a branch. An incompatible change (data
// that the new schema would refuse) is an lberr.Unprocessable *lberr.Error naming why.
func (p *Pipeline) PutSchema(ctx context.Context, domainID int32, branch string, req *SchemaRequest) (*Result, error) {
	return p.putSchema(ctx, domainID, branch, req)
}
