package reads

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/lorebase/lorebase/store"
)

// Config tunes the reads.
type Config struct {
	SearchCandidates     int // store.reads.search_candidates
	PartialMinResults    int // search.partial.min_results
	PartialCandidates    int // search.partial.candidates
	HistoryDefaultLimit  int // read.history.default_limit
	PageDefaultLimit     int
	PageMaxLimit         int
	NeighborhoodMaxLimit int
	NeighborhoodMaxDepth int
}

// Reader serves the agent reads of a Domain's branches.
type Reader struct {
	store *store.Store
	cfg   Config
}

// New returns a Reader.
func New(s *store.Store, cfg Config) *Reader { return &Reader{store: s, cfg: cfg} }

// Record is one Record as the API shows it.
type Record struct {
	Key      string          `json:"key"`
	Kind     string          `json:"kind"`
	Title    string          `json:"title"`
	Values   json.RawMessage `json:"values"`
	Revision string          `json:"revision"`
}

// Get reads one Record by key; at is a Revision id ("" for the head).
// A missing Record is store.ErrNotFound.
func (r *Reader) Get(ctx context.Context, domainID int32, branch, key, at string) (*Record, error) {
	return nil, errors.New("not implemented")
}

// PageQuery selects a keyset page of Records.
type PageQuery struct {
	Kind      string
	After     string
	Limit     int
	Attribute string // with Value: query by an indexed Attribute
	Value     string
	At        string
}

// Page is a keyset page; Next is the key to pass as After ("" at the end).
type Page struct {
	Records []Record `json:"records"`
	Next    string   `json:"next,omitempty"`
}

// Page reads a keyset page of Records of a Kind, optionally where an
// Attribute equals a value.
func (r *Reader) Page(ctx context.Context, domainID int32, branch string, q PageQuery) (*Page, error) {
	return nil, errors.New("not implemented")
}

// RevisionSummary is one entry of a branch's log.
type RevisionSummary struct {
	ID      string    `json:"id"`
	Seq     int64     `json:"seq"`
	Parents []string  `json:"parents"`
	Author  string    `json:"author"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

// RevisionPage is a page of a branch's log, newest first.
type RevisionPage struct {
	Revisions []RevisionSummary `json:"revisions"`
	Next      string            `json:"next,omitempty"`
}

// Revisions reads a branch's log, newest first, before a Revision id.
func (r *Reader) Revisions(ctx context.Context, domainID int32, branch string, limit int, before string) (*RevisionPage, error) {
	return nil, errors.New("not implemented")
}

// Revision is one Revision with its changes.
type Revision struct {
	RevisionSummary
	Branch     string          `json:"branch"`
	Hash       string          `json:"hash"`
	Provenance json.RawMessage `json:"provenance,omitempty"`
	Changes    json.RawMessage `json:"changes"`
}

// Revision reads one Revision of the Domain by id.
func (r *Reader) Revision(ctx context.Context, domainID int32, id string) (*Revision, error) {
	return nil, errors.New("not implemented")
}
