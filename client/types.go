package client

import (
	"encoding/json"
	"fmt"
	"sort"
	"time"
)

// Whoami is the caller as its token makes it (GET /v1/whoami).
type Whoami struct {
	Name   string `json:"name"`
	Domain string `json:"domain"`
	// Role is reader, writer or admin.
	Role string `json:"role"`
	// Branches are the patterns a writer may write.
	Branches []string `json:"branches"`
	// Bootstrap is true for the bootstrap admin token (no Domain).
	Bootstrap bool `json:"bootstrap"`
	// Write says, for a branch asked with ?branch=, whether the token may
	// write it.
	Write map[string]bool `json:"write,omitempty"`
}

// DomainInfo is a tenant as the API shows it.
type DomainInfo struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
	// State is ready or deleting (the list shows it; deleting Domains are
	// listed with ListDomainsDeleting only).
	State string `json:"state,omitempty"`
	// Progress and Job are a deleting Domain's deletion.
	Progress *DomainDeletion `json:"progress,omitempty"`
	Job      *JobInfo        `json:"job,omitempty"`
}

// DomainDeletion is how far the deletion of a Domain got: the table it
// deletes from (Phase), the Domain's tables it has emptied of how many,
// and the rows it has deleted.
type DomainDeletion struct {
	Phase      string `json:"phase,omitempty"`
	TablesDone int    `json:"tables_done"`
	Tables     int    `json:"tables"`
	Rows       int64  `json:"rows"`
}

// JobInfo is a background job as the API shows it.
type JobInfo struct {
	Kind    string `json:"kind"`
	State   string `json:"state"`
	Attempt int    `json:"attempt"`
	// LastError says an attempt failed (the cause is in the server log).
	LastError *string `json:"last_error,omitempty"`
}

// TokenRequest mints a token.
type TokenRequest struct {
	Name   string `json:"name"`
	Domain string `json:"domain"`
	// Role is reader, writer or admin.
	Role string `json:"role"`
	// Branches are the patterns a writer may write (default every branch).
	Branches []string `json:"branches,omitempty"`
	// ExpiresIn is how long the token lives (a duration such as "24h").
	ExpiresIn string `json:"expires_in,omitempty"`
}

// Token is a token without its secret.
type Token struct {
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Domain    string     `json:"domain"`
	Role      string     `json:"role"`
	Branches  []string   `json:"branches"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at,omitempty"`
}

// NewToken is a minted token; Secret is shown this once.
type NewToken struct {
	Token
	Secret string `json:"token"`
}

// BranchInfo is a branch: state, fork point, head, background job.
type BranchInfo struct {
	Name         string          `json:"name"`
	Mode         string          `json:"mode"`
	State        string          `json:"state"`
	Base         *string         `json:"base"`
	ForkRevision *string         `json:"fork_revision"`
	Head         *string         `json:"head"`
	Progress     json.RawMessage `json:"progress,omitempty"`
	Own          *struct {
		Records int64 `json:"records"`
		Links   int64 `json:"links"`
		Capped  bool  `json:"capped"`
	} `json:"own,omitempty"`
	Job *struct {
		Kind      string  `json:"kind"`
		State     string  `json:"state"`
		Attempt   int     `json:"attempt"`
		LastError *string `json:"last_error,omitempty"`
	} `json:"job,omitempty"`
	CreatedAt time.Time `json:"created_at"`
}

// Reembed is the progress of the re-embedding of one Kind of a branch
// (progress.embedding.<Kind>), queued by a schema change of its embedding.
type Reembed struct {
	Kind     string `json:"kind"`
	Model    string `json:"model"`
	State    string `json:"state"` // queued, running, done
	Embedded int64  `json:"embedded"`
	// Total is the Kind's Records when the run started.
	Total      int64      `json:"total_estimate"`
	FinishedAt *time.Time `json:"finished_at,omitempty"`
}

// Reembeds returns the branch's re-embeddings, one per Kind, by Kind name.
func (b BranchInfo) Reembeds() []Reembed {
	var p struct {
		Embedding map[string]Reembed `json:"embedding"`
	}
	if json.Unmarshal(b.Progress, &p) != nil || len(p.Embedding) == 0 {
		return nil
	}
	out := make([]Reembed, 0, len(p.Embedding))
	for _, r := range p.Embedding {
		out = append(out, r)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Kind < out[j].Kind })
	return out
}

// JobProgress is the progress of the branch's copy or delete job: Progress
// without the re-embeddings (nil when nothing else is left).
func (b BranchInfo) JobProgress() json.RawMessage {
	var p map[string]json.RawMessage
	if json.Unmarshal(b.Progress, &p) != nil {
		return b.Progress
	}
	delete(p, "embedding")
	if len(p) == 0 {
		return nil
	}
	out, err := json.Marshal(p)
	if err != nil {
		return b.Progress
	}
	return out
}

// CreateBranch forks a branch.
type CreateBranch struct {
	Name string `json:"name"`
	From string `json:"from"`
	// Mode is overlay (default) or copy.
	Mode string `json:"mode,omitempty"`
	// At forks at this Revision instead of the head.
	At string `json:"at,omitempty"`
}

// Schema is a branch's schema.
type Schema struct {
	Document json.RawMessage `json:"document"`
	Compiled json.RawMessage `json:"compiled"`
	Revision *string         `json:"revision"`
}

// Definition decodes the schema's document.
func (s Schema) Definition() (SchemaDocument, error) {
	var d SchemaDocument
	if len(s.Document) == 0 || string(s.Document) == "null" {
		return d, nil
	}
	if err := json.Unmarshal(s.Document, &d); err != nil {
		return d, fmt.Errorf("decode schema document: %w", err)
	}
	return d, nil
}

// SchemaDocument is a schema as written (DESIGN.md section 4): Kinds and
// Relations.
type SchemaDocument struct {
	Kinds     []KindDef     `json:"kinds"`
	Relations []RelationDef `json:"relations"`
}

// Kind returns the definition of a Kind (nil if the schema has none).
func (d *SchemaDocument) Kind(name string) *KindDef {
	for i := range d.Kinds {
		if d.Kinds[i].Name == name {
			return &d.Kinds[i]
		}
	}
	return nil
}

// KindDef is one Kind of a schema.
type KindDef struct {
	Name string `json:"name"`
	// Title names the Attribute shown as a Record's title.
	Title      string         `json:"title,omitempty"`
	Attributes []AttributeDef `json:"attributes"`
}

// AttributeDef is one Attribute of a Kind.
type AttributeDef struct {
	Name string `json:"name"`
	Type string `json:"type"`
	// Kind is the Kind a ref Attribute points to.
	Kind     string `json:"kind,omitempty"`
	Required bool   `json:"required,omitempty"`
	Unique   bool   `json:"unique,omitempty"`
	Indexed  bool   `json:"indexed,omitempty"`
	Search   bool   `json:"search,omitempty"`
	// Values are the choices of an enum.
	Values []string `json:"values,omitempty"`
}

// RelationDef is one Relation of a schema.
type RelationDef struct {
	Name        string `json:"name"`
	From        string `json:"from"`
	To          string `json:"to"`
	Cardinality string `json:"cardinality,omitempty"`
	Inverse     string `json:"inverse,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Change is one change of a commit.
type Change struct {
	// Op is put, patch, delete, link or unlink.
	Op         string          `json:"op"`
	Kind       string          `json:"kind,omitempty"`
	Key        string          `json:"key,omitempty"`
	Values     map[string]any  `json:"values,omitempty"`
	Relation   string          `json:"relation,omitempty"`
	From       string          `json:"from,omitempty"`
	To         string          `json:"to,omitempty"`
	Provenance json.RawMessage `json:"provenance,omitempty"`
	// Vector is the Record's embedding (put or patch of a Kind that
	// declares one with model "client"; any model takes it).
	Vector []float32 `json:"vector,omitempty"`
}

// Provenance says who or what asserted a change and from where.
type Provenance struct {
	Agent      string  `json:"agent,omitempty"`
	Tool       string  `json:"tool,omitempty"`
	Source     string  `json:"source,omitempty"`
	Quote      string  `json:"quote,omitempty"`
	Confidence float64 `json:"confidence,omitempty"`
}

// CommitRequest is a commit.
type CommitRequest struct {
	Message      string      `json:"message"`
	Author       string      `json:"author,omitempty"`
	ExpectedHead string      `json:"expected_head,omitempty"`
	Provenance   *Provenance `json:"provenance,omitempty"`
	Changes      []Change    `json:"changes"`
	// IdempotencyKey makes a retried commit apply once; one is generated
	// when empty.
	IdempotencyKey string `json:"-"`
}

// CommitResult is a committed Revision.
type CommitResult struct {
	Revision string   `json:"revision"`
	Parents  []string `json:"parents"`
	Changes  int      `json:"changes"`
	// Replayed is true when the answer repeats that of an earlier commit
	// with the same Idempotency-Key.
	Replayed bool `json:"-"`
}

// Record is one Record.
type Record struct {
	Key      string          `json:"key"`
	Kind     string          `json:"kind"`
	Title    string          `json:"title"`
	Values   json.RawMessage `json:"values"`
	Revision string          `json:"revision"`
}

// ValueMap decodes the Record's values by Attribute.
func (r Record) ValueMap() (map[string]json.RawMessage, error) {
	var m map[string]json.RawMessage
	if len(r.Values) == 0 {
		return m, nil
	}
	if err := json.Unmarshal(r.Values, &m); err != nil {
		return nil, fmt.Errorf("decode values of %s: %w", r.Key, err)
	}
	return m, nil
}

// RecordPage is a keyset page of Records.
type RecordPage struct {
	Records []Record     `json:"records"`
	Next    string       `json:"next,omitempty"`
	Count   *RecordCount `json:"count,omitempty"`
}

// RecordCount is the number of Records of a listing (RecordQuery.Count):
// exact at any size from the branch's Record counters; where they cannot
// say it (an older Revision), a walk, exact up to 10,000 and beyond that
// 10,000 with Exact false.
type RecordCount struct {
	Records int  `json:"records"`
	Exact   bool `json:"exact"`
}

// Link is a Link of a Record; Origin is "link" or "ref" (a foreign key).
type Link struct {
	Relation string `json:"relation"`
	From     string `json:"from"`
	To       string `json:"to"`
	Origin   string `json:"origin,omitempty"`
}

// Neighborhood is the Records and Links around a Record.
type Neighborhood struct {
	Records []NeighborhoodRecord `json:"records"`
	Links   []Link               `json:"links"`
}

// NeighborhoodRecord is a Record of a neighborhood, Depth Links away from
// the start.
type NeighborhoodRecord struct {
	Key   string `json:"key"`
	Kind  string `json:"kind"`
	Title string `json:"title"`
	Depth int    `json:"depth"`
}

// HistoryEntry is one change of a Record.
type HistoryEntry struct {
	Revision   string          `json:"revision"`
	Seq        int64           `json:"seq"`
	Op         string          `json:"op"`
	Values     json.RawMessage `json:"values"`
	Author     string          `json:"author"`
	Message    string          `json:"message"`
	At         time.Time       `json:"at"`
	Provenance json.RawMessage `json:"provenance"`
}

// HistoryPage is a page of a Record's history, newest first.
type HistoryPage struct {
	Entries []HistoryEntry `json:"entries"`
	Next    string         `json:"next,omitempty"`
}

// Origin names the change behind a value.
type Origin struct {
	Value      json.RawMessage `json:"value,omitempty"`
	Revision   string          `json:"revision"`
	Seq        int64           `json:"seq,omitempty"`
	Author     string          `json:"author"`
	At         time.Time       `json:"at"`
	Provenance json.RawMessage `json:"provenance"`
	Proposal   *string         `json:"proposal,omitempty"`
}

// Trace is the trace id a value's provenance names ("" when none).
func (o Origin) Trace() string {
	var p struct {
		Trace string `json:"trace"`
	}
	_ = json.Unmarshal(o.Provenance, &p)
	return p.Trace
}

// Lineage says where each value of a Record comes from.
type Lineage struct {
	Key     string            `json:"key"`
	Kind    string            `json:"kind"`
	Created Origin            `json:"created"`
	Changes int               `json:"changes"`
	Values  map[string]Origin `json:"values"`
}

// SearchResults are ranked matches and the corrections applied. Ranked is
// the number of matches the ranking considered; Truncated says they were
// the first matches found rather than the best (better ones may exist:
// narrow the query); false means the results are the best of every match.
type SearchResults struct {
	Results []struct {
		Key   string  `json:"key"`
		Kind  string  `json:"kind"`
		Title string  `json:"title"`
		Score float64 `json:"score"`
		Match string  `json:"match"`
	} `json:"results"`
	Corrections map[string][]string `json:"corrections"`
	// Mode is the search run: text, semantic or hybrid.
	Mode string `json:"mode"`
	// Path is how the semantic ranking was found: exact or hnsw.
	Path string `json:"path,omitempty"`
	// FewerThanLimit: fewer Records than the limit matched.
	FewerThanLimit bool `json:"fewer_than_limit"`
	// Ranked is how many matches the text ranking ranked; Truncated: more
	// matched than were ranked (narrow the query).
	Ranked    int  `json:"ranked"`
	Truncated bool `json:"truncated"`
}

// Candidates are the Records a mention may be, best first.
type Candidates struct {
	Candidates []struct {
		Key    string  `json:"key"`
		Kind   string  `json:"kind"`
		Title  string  `json:"title"`
		Score  float64 `json:"score"`
		Reason string  `json:"reason"`
	} `json:"candidates"`
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

// RevisionPage is a page of the log, newest first.
type RevisionPage struct {
	Revisions []RevisionSummary `json:"revisions"`
	Next      string            `json:"next,omitempty"`
}

// Revision is one Revision with its changes.
type Revision struct {
	RevisionSummary
	Branch     string          `json:"branch"`
	Hash       string          `json:"hash"`
	Provenance json.RawMessage `json:"provenance,omitempty"`
	// Changes is one page of the changes, in commit order; ChangesTotal
	// counts them all; Next is the After of the next page ("" at the end).
	Changes      json.RawMessage `json:"changes"`
	ChangesTotal int             `json:"changes_total"`
	Next         string          `json:"next,omitempty"`
}

// ChangeList decodes the page of changes the Revision holds.
func (r Revision) ChangeList() ([]StoredChange, error) {
	var out []StoredChange
	if len(r.Changes) == 0 {
		return out, nil
	}
	if err := json.Unmarshal(r.Changes, &out); err != nil {
		return nil, fmt.Errorf("decode changes of revision %s: %w", r.ID, err)
	}
	return out, nil
}

// StoredChange is one change as a Revision keeps it: a Change with its
// values as written and, for a put or patch, the object (the hash of the
// Record's values) it produced.
type StoredChange struct {
	Op       string          `json:"op"`
	Kind     string          `json:"kind,omitempty"`
	Key      string          `json:"key,omitempty"`
	Values   json.RawMessage `json:"values,omitempty"`
	Relation string          `json:"relation,omitempty"`
	From     string          `json:"from,omitempty"`
	To       string          `json:"to,omitempty"`
	Object   string          `json:"object,omitempty"`
}

// TraceStep is one request of an agent trace.
type TraceStep struct {
	Seq        int64     `json:"seq"`
	At         time.Time `json:"at"`
	Method     string    `json:"method"`
	Route      string    `json:"route"`
	Path       string    `json:"path"`
	Branch     string    `json:"branch,omitempty"`
	Status     int       `json:"status"`
	DurationMS float64   `json:"duration_ms"`
	Revision   string    `json:"revision,omitempty"`
	Token      string    `json:"token,omitempty"`
}

// TracePage is a page of a trace's steps, oldest first.
type TracePage struct {
	ID    string      `json:"id"`
	Steps []TraceStep `json:"steps"`
	Next  string      `json:"next,omitempty"`
}

// Diff is what a branch changed since its merge base with another.
type Diff struct {
	Source    DiffSide     `json:"source"`
	Target    DiffSide     `json:"target"`
	MergeBase *string      `json:"merge_base"`
	Summary   DiffSummary  `json:"summary"`
	Changes   []DiffChange `json:"changes"`
	Next      string       `json:"next,omitempty"`
}

// DiffSummary counts what a diff (or a Proposal) changes.
type DiffSummary struct {
	Records struct {
		Added   int `json:"added"`
		Updated int `json:"updated"`
		Removed int `json:"removed"`
	} `json:"records"`
	Links struct {
		Added   int `json:"added"`
		Removed int `json:"removed"`
	} `json:"links"`
}

// DiffSide names a branch and the Revision a diff read.
type DiffSide struct {
	Branch   string  `json:"branch"`
	Revision *string `json:"revision"`
}

// DiffChange is one changed Record.
type DiffChange struct {
	Key        string          `json:"key"`
	Kind       string          `json:"kind"`
	Op         string          `json:"op"`
	Attributes []DiffAttribute `json:"attributes,omitempty"`
	Links      []DiffLink      `json:"links,omitempty"`
}

// DiffAttribute is one changed Attribute: its value before and after.
type DiffAttribute struct {
	Name   string          `json:"name"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

// DiffLink is one Link added or removed.
type DiffLink struct {
	Op       string `json:"op"`
	Relation string `json:"relation"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// Resolution settles one conflict.
type Resolution struct {
	Conflict    string `json:"conflict,omitempty"`
	Choice      string `json:"choice"`
	Value       any    `json:"value,omitempty"`
	Fingerprint string `json:"fingerprint"`
}

// MergeRequest merges a branch into another without a Proposal.
type MergeRequest struct {
	From         string       `json:"from"`
	Message      string       `json:"message,omitempty"`
	Default      string       `json:"default,omitempty"`
	Resolutions  []Resolution `json:"resolutions,omitempty"`
	ExpectedHead string       `json:"expected_head,omitempty"`
}

// MergeResult is a merge commit (or a fast-forward).
type MergeResult struct {
	Revision    string   `json:"revision"`
	Parents     []string `json:"parents"`
	FastForward bool     `json:"fast_forward"`
	// State is set (to the Proposal's state) when a large merge was
	// queued as a job instead (202): poll the Proposal for its progress.
	State string `json:"state,omitempty"`
}

// ProposalRequest opens a Proposal.
type ProposalRequest struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
	Target      string `json:"target"`
}

// Proposal is a request to merge a branch into another.
type Proposal struct {
	ID          string    `json:"id"`
	Title       string    `json:"title"`
	Description string    `json:"description,omitempty"`
	Source      string    `json:"source"`
	Target      string    `json:"target"`
	State       string    `json:"state"`
	Author      string    `json:"author,omitempty"`
	CreatedAt   time.Time `json:"created_at"`
	// Summary counts the changes (nil until computed).
	Summary   *DiffSummary `json:"summary,omitempty"`
	Conflicts int          `json:"conflicts"`
	Mergeable bool         `json:"mergeable"`
}

// ProposalMerge merges a Proposal.
type ProposalMerge struct {
	ExpectedTargetHead string `json:"expected_target_head,omitempty"`
	Default            string `json:"default,omitempty"`
	Message            string `json:"message,omitempty"`
}

// Conflict is one conflict of a Proposal or a merge.
type Conflict struct {
	ID          string       `json:"id"`
	Code        string       `json:"code"`
	Kind        string       `json:"kind,omitempty"`
	Key         string       `json:"key"`
	Attribute   string       `json:"attribute,omitempty"`
	Base        ConflictSide `json:"base"`
	Target      ConflictSide `json:"target"`
	Source      ConflictSide `json:"source"`
	Fingerprint string       `json:"fingerprint"`
	// Resolution is the choice saved for the conflict (nil while none).
	Resolution *ConflictResolution `json:"resolution,omitempty"`
}

// ConflictSide is one side of a conflict: the value and the Revision and
// author that wrote it.
type ConflictSide struct {
	Value    json.RawMessage `json:"value,omitempty"`
	Revision string          `json:"revision,omitempty"`
	Author   string          `json:"author,omitempty"`
}

// ConflictResolution is a saved resolution: target, source or value.
type ConflictResolution struct {
	Choice string          `json:"choice"`
	Value  json.RawMessage `json:"value,omitempty"`
}

// Page asks for one keyset page: at most Limit items after the cursor
// After (the Next of the previous page).
type Page struct {
	Limit int
	After string
}
