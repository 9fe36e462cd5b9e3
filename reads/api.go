package reads

import (
	"encoding/json"
	"time"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/embed"
	"github.com/lorebase/lorebase/store"
)

// Config tunes the reads. Zero fields take the defaults of DefaultConfig.
type Config struct {
	SearchCandidates     int // store.reads.search_candidates: matches ranked at most
	PartialMinResults    int // search.partial.min_results: fewer full matches add partial ones
	PartialCandidates    int // search.partial.candidates: partial matches ranked at most
	SearchDefaultLimit   int
	SearchMaxLimit       int
	HistoryDefaultLimit  int // read.history.default_limit
	HistoryMaxLimit      int
	PageDefaultLimit     int
	PageMaxLimit         int
	NeighborhoodDefault  int // Records of a neighborhood when no limit is given
	NeighborhoodMaxLimit int
	NeighborhoodMaxDepth int // at most 3
	NeighborhoodFanout   int // Links followed per node and direction
	CountCap             int // Records a count walks at most (DefaultCountCap)
	// Embedders embed the text of a semantic query (nil: the hash
	// embedder only).
	Embedders *embed.Set
	EfSearch  int // search.semantic.ef_search
	RRFK      int // search.hybrid.rrf_k
	// HybridTextWeight and HybridSemanticWeight (search.hybrid.*) are 0
	// to 100 each; 0 leaves that ranking out of a hybrid search. Both 0
	// (a zero Config) take the defaults.
	HybridTextWeight     int
	HybridSemanticWeight int
}

// DefaultConfig is the configuration New completes a Config with: the
// defaults of Keeper's configuration table.
func DefaultConfig() Config { return ConfigFrom(config.Default()) }

// ConfigFrom is the reads' part of Keeper's configuration, with the bounds
// that are not configuration keys.
func ConfigFrom(c config.Config) Config {
	return Config{
		SearchCandidates:     c.Store.Reads.SearchCandidates,
		PartialMinResults:    c.Search.Partial.MinResults,
		PartialCandidates:    c.Search.Partial.Candidates,
		SearchDefaultLimit:   20,
		SearchMaxLimit:       100,
		HistoryDefaultLimit:  c.Read.History.DefaultLimit,
		HistoryMaxLimit:      1000,
		PageDefaultLimit:     c.Read.Page.DefaultLimit,
		PageMaxLimit:         c.Read.Page.MaxLimit,
		NeighborhoodDefault:  200,
		NeighborhoodMaxLimit: c.Read.Neighborhood.MaxLimit,
		NeighborhoodMaxDepth: c.Read.Neighborhood.MaxDepth,
		NeighborhoodFanout:   20,
		CountCap:             DefaultCountCap,
		EfSearch:             c.Search.Semantic.EfSearch,
		RRFK:                 c.Search.Hybrid.RRFK,
		HybridTextWeight:     c.Search.Hybrid.TextWeight,
		HybridSemanticWeight: c.Search.Hybrid.SemanticWeight,
	}
}

// Reader serves the agent reads of a Domain's branches.
type Reader struct {
	store *store.Store
	cfg   Config
	// levels holds the branches a get at the head last found reading
	// through levels (an overlay, a copy still copying): Get reads them by
	// getLevelsSQL, every other branch by getOwnedSQL. A hint only: both
	// statements answer every branch.
	levels *levelsHints
}

// New returns a Reader.
func New(s *store.Store, cfg Config) *Reader {
	def := DefaultConfig()
	for _, f := range []struct {
		v *int
		d int
	}{
		{&cfg.SearchCandidates, def.SearchCandidates},
		{&cfg.PartialCandidates, def.PartialCandidates},
		{&cfg.SearchDefaultLimit, def.SearchDefaultLimit},
		{&cfg.SearchMaxLimit, def.SearchMaxLimit},
		{&cfg.HistoryDefaultLimit, def.HistoryDefaultLimit},
		{&cfg.HistoryMaxLimit, def.HistoryMaxLimit},
		{&cfg.PageDefaultLimit, def.PageDefaultLimit},
		{&cfg.PageMaxLimit, def.PageMaxLimit},
		{&cfg.NeighborhoodDefault, def.NeighborhoodDefault},
		{&cfg.NeighborhoodMaxLimit, def.NeighborhoodMaxLimit},
		{&cfg.NeighborhoodMaxDepth, def.NeighborhoodMaxDepth},
		{&cfg.NeighborhoodFanout, def.NeighborhoodFanout},
		{&cfg.CountCap, def.CountCap},
		{&cfg.EfSearch, def.EfSearch},
		{&cfg.RRFK, def.RRFK},
	} {
		if *f.v <= 0 {
			*f.v = f.d
		}
	}
	if cfg.HybridTextWeight <= 0 && cfg.HybridSemanticWeight <= 0 {
		cfg.HybridTextWeight, cfg.HybridSemanticWeight = def.HybridTextWeight, def.HybridSemanticWeight
	}
	cfg.HybridTextWeight, cfg.HybridSemanticWeight = max(cfg.HybridTextWeight, 0), max(cfg.HybridSemanticWeight, 0)
	if cfg.PartialMinResults < 0 {
		cfg.PartialMinResults = 0
	} else if cfg.PartialMinResults == 0 {
		cfg.PartialMinResults = def.PartialMinResults
	}
	if cfg.Embedders == nil {
		cfg.Embedders = embed.NewSet(nil)
	}
	if cfg.NeighborhoodMaxDepth > 3 {
		cfg.NeighborhoodMaxDepth = 3
	}
	return &Reader{store: s, cfg: cfg, levels: &levelsHints{m: map[levelsHint]struct{}{}}}
}

// Record is one Record as the API shows it.
type Record struct {
	Key      string          `json:"key"`
	Kind     string          `json:"kind"`
	Title    string          `json:"title"`
	Values   json.RawMessage `json:"values"`
	Revision string          `json:"revision"`
}

// PageQuery selects a keyset page of Records.
type PageQuery struct {
	Kind      string
	After     string
	Limit     int
	Attribute string // with Value: query by an indexed Attribute
	Value     string
	At        string
	// Count asks for the number of Records of the listing (of the Kind,
	// at the head or as of At): exact from the branch's Record counters
	// where they can say it, else walked up to the Reader's count cap.
	Count bool
}

// DefaultCountCap bounds the Records a count walks where the branch's
// Record counters cannot answer (a branch without counters, a Revision
// older than they reach back): beyond it the count says "at least
// DefaultCountCap" (Exact false). Its cost is at most that of one page of
// that many Records. At most 10,000 (lb_page's bound).
const DefaultCountCap = 10000

// RecordCount is the number of Records of a listing: exact (from the
// branch's counters, whatever the number, or walked up to the Reader's
// count cap), else the cap with Exact false.
type RecordCount struct {
	Records int64 `json:"records"`
	Exact   bool  `json:"exact"`
}

// Page is a keyset page; Next is the key to pass as After ("" at the end).
type Page struct {
	Records []Record     `json:"records"`
	Next    string       `json:"next,omitempty"`
	Count   *RecordCount `json:"count,omitempty"`
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

// Revision is one Revision with a page of its changes.
type Revision struct {
	RevisionSummary
	Branch     string          `json:"branch"`
	Hash       string          `json:"hash"`
	Provenance json.RawMessage `json:"provenance,omitempty"`
	// Changes is one page of the changes, in commit order; ChangesTotal
	// counts them all and Next, when more follow, is the after of the
	// next page.
	Changes      json.RawMessage `json:"changes"`
	ChangesTotal int             `json:"changes_total"`
	Next         string          `json:"next,omitempty"`
}
