package client

import (
	"context"
	"encoding/json"
	"fmt"
	"iter"
	"net/http"
	"strconv"
	"strings"
)

// each walks keyset pages: fetch answers a page's items and the cursor of
// the next ("" on the last).
func each[T any](ctx context.Context, fetch func(ctx context.Context, after string) ([]T, string, error)) iter.Seq2[T, error] {
	return func(yield func(T, error) bool) {
		after := ""
		for {
			items, next, err := fetch(ctx, after)
			if err != nil {
				var zero T
				yield(zero, err)
				return
			}
			for _, it := range items {
				if !yield(it, nil) {
					return
				}
			}
			if next == "" || next == after {
				return
			}
			after = next
		}
	}
}

func get(path string, q ...string) request {
	return request{method: http.MethodGet, path: path, query: query(q...), retry: true}
}

// Health reports whether the Keeper answers (GET /healthz).
func (c *Client) Health(ctx context.Context) error {
	_, err := c.do(ctx, get("/healthz"), nil)
	return err
}

// Readiness is the answer of GET /readyz.
type Readiness struct {
	Status     string `json:"status"`
	Database   string `json:"database"`
	Migrations *struct {
		Current      int  `json:"current"`
		Latest       int  `json:"latest"`
		Dirty        bool `json:"dirty"`
		RiverCurrent int  `json:"river_current"`
		RiverLatest  int  `json:"river_latest"`
	} `json:"migrations,omitempty"`
	Missing []string `json:"missing,omitempty"`
}

// Ready reads GET /readyz: the database answers and its migrations are up
// to date. A Keeper that is not ready answers a *Problem with status 503
// whose Detail holds what is missing.
func (c *Client) Ready(ctx context.Context) (*Readiness, error) {
	var raw []byte
	_, err := c.do(ctx, request{method: http.MethodGet, path: "/readyz"}, &raw)
	var out Readiness
	if err == nil {
		err = json.Unmarshal(raw, &out)
	}
	return &out, err
}

// Metrics reads GET /metrics, the Prometheus text exposition.
func (c *Client) Metrics(ctx context.Context) ([]byte, error) {
	var out []byte
	_, err := c.do(ctx, get("/metrics"), &out)
	return out, err
}

// OpenAPI is the API's OpenAPI 3.1 document (GET /v1/openapi.json).
func (c *Client) OpenAPI(ctx context.Context) ([]byte, error) {
	var out []byte
	_, err := c.do(ctx, get("/v1/openapi.json"), &out)
	return out, err
}

// CreateDomain creates a Domain with branch main (bootstrap admin).
func (c *Client) CreateDomain(ctx context.Context, name string) (*DomainInfo, error) {
	var out DomainInfo
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/domains", body: map[string]string{"name": name}}, &out)
	return &out, err
}

// Whoami says who the token is: name, Domain, role, branch patterns.
func (c *Client) Whoami(ctx context.Context) (*Whoami, error) {
	var out Whoami
	_, err := c.do(ctx, get("/v1/whoami"), &out)
	return &out, err
}

// ListDomains lists every Domain (bootstrap admin).
func (c *Client) ListDomains(ctx context.Context) ([]DomainInfo, error) {
	var out struct {
		Domains []DomainInfo `json:"domains"`
	}
	_, err := c.do(ctx, get("/v1/domains"), &out)
	return out.Domains, err
}

// ListDomainsDeleting lists every Domain, those being deleted included
// with their deletion's progress and job (bootstrap admin).
func (c *Client) ListDomainsDeleting(ctx context.Context) ([]DomainInfo, error) {
	var out struct {
		Domains []DomainInfo `json:"domains"`
	}
	_, err := c.do(ctx, get("/v1/domains", "deleting", "true"), &out)
	return out.Domains, err
}

// CreateToken mints a token; its secret is in the answer only.
func (c *Client) CreateToken(ctx context.Context, req TokenRequest) (*NewToken, error) {
	var out NewToken
	_, err := c.do(ctx, request{method: http.MethodPost, path: "/v1/tokens", body: req}, &out)
	return &out, err
}

// Domain is a handle on one Domain.
type Domain struct {
	c    *Client
	name string
	path string
}

// Domain returns a handle on the Domain name.
func (c *Client) Domain(name string) *Domain {
	return &Domain{c: c, name: name, path: "/v1/domains/" + esc(name)}
}

// Get shows the Domain.
func (d *Domain) Get(ctx context.Context) (*DomainInfo, error) {
	var out DomainInfo
	_, err := d.c.do(ctx, get(d.path), &out)
	return &out, err
}

// Delete deletes the Domain (bootstrap admin): it is gone at once and its
// tokens are revoked; a job removes its data, after which its name is free.
func (d *Domain) Delete(ctx context.Context) error {
	_, err := d.c.do(ctx, request{method: http.MethodDelete, path: d.path, retry: true}, nil)
	return err
}

// TokensPage lists one page of the Domain's tokens (admin).
func (d *Domain) TokensPage(ctx context.Context, p Page) ([]Token, string, error) {
	var out struct {
		Tokens []Token `json:"tokens"`
		Next   string  `json:"next"`
	}
	_, err := d.c.do(ctx, get(d.path+"/tokens", "limit", itoa(p.Limit), "after", p.After), &out)
	return out.Tokens, out.Next, err
}

// Tokens walks every token of the Domain (admin).
func (d *Domain) Tokens(ctx context.Context) iter.Seq2[Token, error] {
	return each(ctx, func(ctx context.Context, after string) ([]Token, string, error) {
		return d.TokensPage(ctx, Page{After: after})
	})
}

// RevokeToken revokes a token by id (admin).
func (d *Domain) RevokeToken(ctx context.Context, id string) error {
	_, err := d.c.do(ctx, request{method: http.MethodDelete, path: d.path + "/tokens/" + esc(id), retry: true}, nil)
	return err
}

// Revision reads one Revision with the first page of its changes (the
// server's default page size); RevisionPage reads any page and
// RevisionChanges walks them all.
func (d *Domain) Revision(ctx context.Context, id string) (*Revision, error) {
	return d.RevisionPage(ctx, id, Page{})
}

// RevisionPage reads one Revision with one keyset page of its changes:
// Changes holds the page, ChangesTotal counts all of them, Next is the
// After of the following page ("" after the last).
func (d *Domain) RevisionPage(ctx context.Context, id string, p Page) (*Revision, error) {
	var out Revision
	_, err := d.c.do(ctx, get(d.path+"/revisions/"+esc(id), "limit", itoa(p.Limit), "after", p.After), &out)
	return &out, err
}

// RevisionChanges walks every change of a Revision, in commit order, a
// page at a time.
func (d *Domain) RevisionChanges(ctx context.Context, id string) iter.Seq2[json.RawMessage, error] {
	return each(ctx, func(ctx context.Context, after string) ([]json.RawMessage, string, error) {
		rv, err := d.RevisionPage(ctx, id, Page{After: after})
		if err != nil {
			return nil, "", err
		}
		var changes []json.RawMessage
		if err := json.Unmarshal(rv.Changes, &changes); err != nil {
			return nil, "", fmt.Errorf("decode changes of revision %s: %w", id, err)
		}
		return changes, rv.Next, nil
	})
}

// TracePage reads one page of a trace's steps, oldest first.
func (d *Domain) TracePage(ctx context.Context, id string, p Page) (*TracePage, error) {
	var out TracePage
	_, err := d.c.do(ctx, get(d.path+"/traces/"+esc(id), "limit", itoa(p.Limit), "after", p.After), &out)
	return &out, err
}

// TraceSteps walks every step of a trace.
func (d *Domain) TraceSteps(ctx context.Context, id string) iter.Seq2[TraceStep, error] {
	return each(ctx, func(ctx context.Context, after string) ([]TraceStep, string, error) {
		p, err := d.TracePage(ctx, id, Page{After: after})
		if err != nil {
			return nil, "", err
		}
		return p.Steps, p.Next, nil
	})
}

// BranchesPage lists one page of branches by name.
func (d *Domain) BranchesPage(ctx context.Context, p Page) ([]BranchInfo, string, error) {
	var out struct {
		Branches []BranchInfo `json:"branches"`
		Next     string       `json:"next"`
	}
	_, err := d.c.do(ctx, get(d.path+"/branches", "limit", itoa(p.Limit), "after", p.After), &out)
	return out.Branches, out.Next, err
}

// Branches walks every branch by name.
func (d *Domain) Branches(ctx context.Context) iter.Seq2[BranchInfo, error] {
	return each(ctx, func(ctx context.Context, after string) ([]BranchInfo, string, error) {
		return d.BranchesPage(ctx, Page{After: after})
	})
}

// CreateBranch forks a branch (an overlay is ready at once; a copy fills
// in the background, see BranchInfo.State).
func (d *Domain) CreateBranch(ctx context.Context, req CreateBranch) (*BranchInfo, error) {
	var out BranchInfo
	_, err := d.c.do(ctx, request{method: http.MethodPost, path: d.path + "/branches", body: req}, &out)
	return &out, err
}

// CreateProposal opens a Proposal to merge req.Source into req.Target.
func (d *Domain) CreateProposal(ctx context.Context, req ProposalRequest) (*Proposal, error) {
	if req.Target == "" {
		req.Target = "main"
	}
	var out Proposal
	_, err := d.c.do(ctx, request{method: http.MethodPost, path: d.path + "/proposals", body: req}, &out)
	return &out, err
}

// ProposalsPage lists one page of Proposals in a state ("" for all).
func (d *Domain) ProposalsPage(ctx context.Context, state string, p Page) ([]Proposal, string, error) {
	var out struct {
		Proposals []Proposal `json:"proposals"`
		Next      string     `json:"next"`
	}
	_, err := d.c.do(ctx, get(d.path+"/proposals", "state", state, "limit", itoa(p.Limit), "after", p.After), &out)
	return out.Proposals, out.Next, err
}

// Proposals walks the Proposals in a state ("" for all).
func (d *Domain) Proposals(ctx context.Context, state string) iter.Seq2[Proposal, error] {
	return each(ctx, func(ctx context.Context, after string) ([]Proposal, string, error) {
		return d.ProposalsPage(ctx, state, Page{After: after})
	})
}

func (d *Domain) proposalPath(id string) string { return d.path + "/proposals/" + esc(id) }

// Proposal shows a Proposal.
func (d *Domain) Proposal(ctx context.Context, id string) (*Proposal, error) {
	var out Proposal
	_, err := d.c.do(ctx, get(d.proposalPath(id)), &out)
	return &out, err
}

// ProposalDiff reads one page of a Proposal's diff.
func (d *Domain) ProposalDiff(ctx context.Context, id string, p Page) (*Diff, error) {
	var out Diff
	_, err := d.c.do(ctx, get(d.proposalPath(id)+"/diff", "limit", itoa(p.Limit), "after", p.After), &out)
	return &out, err
}

// Conflicts lists a Proposal's conflicts with their resolutions.
func (d *Domain) Conflicts(ctx context.Context, id string) ([]Conflict, error) {
	var out struct {
		Conflicts []Conflict `json:"conflicts"`
	}
	_, err := d.c.do(ctx, get(d.proposalPath(id)+"/conflicts"), &out)
	return out.Conflicts, err
}

// ResolveConflict resolves one conflict; a stale fingerprint is a 409.
func (d *Domain) ResolveConflict(ctx context.Context, id, conflict string, r Resolution) error {
	r.Conflict = ""
	_, err := d.c.do(ctx, request{method: http.MethodPut, path: d.proposalPath(id) + "/conflicts/" + esc(conflict) + "/resolution",
		body: r, retry: true}, nil)
	return err
}

// ClearResolution clears a conflict's resolution.
func (d *Domain) ClearResolution(ctx context.Context, id, conflict string) error {
	_, err := d.c.do(ctx, request{method: http.MethodDelete, path: d.proposalPath(id) + "/conflicts/" + esc(conflict) + "/resolution",
		retry: true}, nil)
	return err
}

// MergeProposal merges a Proposal; unresolved conflicts are a 409 whose
// Problem lists them.
func (d *Domain) MergeProposal(ctx context.Context, id string, m ProposalMerge) (*MergeResult, error) {
	var out MergeResult
	_, err := d.c.do(ctx, request{method: http.MethodPost, path: d.proposalPath(id) + "/merge", body: m}, &out)
	return &out, err
}

// CloseProposal closes a Proposal without merging.
func (d *Domain) CloseProposal(ctx context.Context, id string) (*Proposal, error) {
	var out Proposal
	_, err := d.c.do(ctx, request{method: http.MethodPost, path: d.proposalPath(id) + "/close"}, &out)
	return &out, err
}

// Branch is a handle on one branch of a Domain.
type Branch struct {
	d    *Domain
	name string
	path string
}

// Branch returns a handle on the branch name ("/" in it is escaped).
func (d *Domain) Branch(name string) *Branch {
	return &Branch{d: d, name: name, path: d.path + "/branches/" + esc(name)}
}

// Name is the branch's name.
func (b *Branch) Name() string { return b.name }

// Get shows the branch: state, background job, head.
func (b *Branch) Get(ctx context.Context) (*BranchInfo, error) {
	var out BranchInfo
	_, err := b.d.c.do(ctx, get(b.path), &out)
	return &out, err
}

// Delete deletes the branch (its rows are removed in the background).
func (b *Branch) Delete(ctx context.Context) error {
	_, err := b.d.c.do(ctx, request{method: http.MethodDelete, path: b.path, retry: true}, nil)
	return err
}

// Schema reads the branch's schema.
func (b *Branch) Schema(ctx context.Context) (*Schema, error) {
	var out Schema
	_, err := b.d.c.do(ctx, get(b.path+"/schema"), &out)
	return &out, err
}

// PutSchema replaces the schema (admin; a commit) and returns the
// Revision. expectedHead, when not empty, must be the branch head.
func (b *Branch) PutSchema(ctx context.Context, document json.RawMessage, message, expectedHead string) (string, error) {
	rq := request{method: http.MethodPut, path: b.path + "/schema", body: document, query: query("message", message), header: http.Header{}}
	if expectedHead != "" {
		rq.header.Set("If-Match", `"`+expectedHead+`"`)
		rq.retry = true // a replay after success fails If-Match, never applies twice
	}
	var out struct {
		Revision string `json:"revision"`
	}
	_, err := b.d.c.do(ctx, rq, &out)
	return out.Revision, err
}

// Commit commits changes atomically. It is retried with its
// Idempotency-Key (generated when req has none), so it applies once.
func (b *Branch) Commit(ctx context.Context, req CommitRequest) (*CommitResult, error) {
	key := req.IdempotencyKey
	if key == "" {
		key = newIdempotencyKey()
	}
	if req.Changes == nil {
		req.Changes = []Change{}
	}
	var out CommitResult
	h, err := b.d.c.do(ctx, request{method: http.MethodPost, path: b.path + "/commits", body: req,
		header: http.Header{"Idempotency-Key": {key}}, retry: true}, &out)
	if err == nil && h.Get("Idempotent-Replayed") == "true" {
		out.Replayed = true
	}
	return &out, err
}

// RecordQuery selects Records: a Kind, optionally an indexed Attribute's
// value, as of a Revision.
type RecordQuery struct {
	Kind      string
	Attribute string
	Value     string
	At        string
	// Count asks RecordsPage for the number of Records of the listing
	// (RecordPage.Count); not with Attribute.
	Count bool
}

// ReadOptions are the options of a single read.
type ReadOptions struct {
	// At reads as of this Revision.
	At string
}

func at(o *ReadOptions) string {
	if o == nil {
		return ""
	}
	return o.At
}

// Record reads one Record.
func (b *Branch) Record(ctx context.Context, key string, o *ReadOptions) (*Record, error) {
	var out Record
	_, err := b.d.c.do(ctx, get(b.path+"/records/"+esc(key), "at", at(o)), &out)
	return &out, err
}

// RecordsPage reads one keyset page of Records.
func (b *Branch) RecordsPage(ctx context.Context, q RecordQuery, p Page) (*RecordPage, error) {
	rq := get(b.path+"/records", "kind", q.Kind, "limit", itoa(p.Limit), "after", p.After, "attribute", q.Attribute, "at", q.At)
	if q.Attribute != "" {
		rq.query.Set("value", q.Value)
	}
	if q.Count {
		rq.query.Set("count", "true")
	}
	var out RecordPage
	_, err := b.d.c.do(ctx, rq, &out)
	return &out, err
}

// Records walks every Record the query selects, page by page.
func (b *Branch) Records(ctx context.Context, q RecordQuery) iter.Seq2[Record, error] {
	return each(ctx, func(ctx context.Context, after string) ([]Record, string, error) {
		p, err := b.RecordsPage(ctx, q, Page{After: after})
		if err != nil {
			return nil, "", err
		}
		return p.Records, p.Next, nil
	})
}

// LinksQuery selects Links: direction out, in or both; a Relation.
type LinksQuery struct {
	Direction string
	Relation  string
	At        string
}

// Links reads the Links of a Record (foreign-key Links included).
func (b *Branch) Links(ctx context.Context, key string, q LinksQuery) ([]Link, error) {
	var out struct {
		Links []Link `json:"links"`
	}
	_, err := b.d.c.do(ctx, get(b.path+"/records/"+esc(key)+"/links", "direction", q.Direction, "relation", q.Relation, "at", q.At), &out)
	return out.Links, err
}

// Neighborhood reads the Records and Links within depth hops (0: the
// server's default) of a Record.
func (b *Branch) Neighborhood(ctx context.Context, key string, depth, limit int) (*Neighborhood, error) {
	var out Neighborhood
	_, err := b.d.c.do(ctx, get(b.path+"/records/"+esc(key)+"/neighborhood", "depth", itoa(depth), "limit", itoa(limit)), &out)
	return &out, err
}

// HistoryPage reads one page of a Record's changes, newest first (the
// cursor is Next, a Revision id).
func (b *Branch) HistoryPage(ctx context.Context, key string, p Page) (*HistoryPage, error) {
	var out HistoryPage
	_, err := b.d.c.do(ctx, get(b.path+"/records/"+esc(key)+"/history", "limit", itoa(p.Limit), "before", p.After), &out)
	return &out, err
}

// History walks every change of a Record, newest first.
func (b *Branch) History(ctx context.Context, key string) iter.Seq2[HistoryEntry, error] {
	return each(ctx, func(ctx context.Context, after string) ([]HistoryEntry, string, error) {
		p, err := b.HistoryPage(ctx, key, Page{After: after})
		if err != nil {
			return nil, "", err
		}
		return p.Entries, p.Next, nil
	})
}

// Lineage reads where each value of a Record comes from.
func (b *Branch) Lineage(ctx context.Context, key string) (*Lineage, error) {
	var out Lineage
	_, err := b.d.c.do(ctx, get(b.path+"/records/"+esc(key)+"/lineage"), &out)
	return &out, err
}

// SearchQuery is a search: full-text (Mode "" or "text"), semantic or
// hybrid.
type SearchQuery struct {
	Q     string
	Kind  string
	Limit int
	At    string
	// Mode is "text" (default), "semantic" or "hybrid".
	Mode string
	// Vector is a semantic query's vector (instead of Q).
	Vector []float32
	// Attribute and Value filter a semantic search (with Kind).
	Attribute, Value string
	// TextWeight and SemanticWeight (0 to 100; 0 leaves that ranking out)
	// override the Keeper's search.hybrid weights for Mode "hybrid" (nil:
	// the configured ones). The weights in force may not both be 0 (400).
	TextWeight, SemanticWeight *int
}

// Search searches the branch: by words (typo-tolerant, partial matching),
// by meaning (Mode "semantic") or both fused (Mode "hybrid").
func (b *Branch) Search(ctx context.Context, q SearchQuery) (*SearchResults, error) {
	var out SearchResults
	var vec string
	if q.Vector != nil {
		parts := make([]string, len(q.Vector))
		for i, x := range q.Vector {
			parts[i] = strconv.FormatFloat(float64(x), 'g', -1, 32)
		}
		vec = strings.Join(parts, ",")
	}
	_, err := b.d.c.do(ctx, get(b.path+"/search", "q", q.Q, "kind", q.Kind, "limit", itoa(q.Limit), "at", q.At,
		"mode", q.Mode, "vector", vec, "attribute", q.Attribute, "value", q.Value,
		"text_weight", weight(q.TextWeight), "semantic_weight", weight(q.SemanticWeight)), &out)
	return &out, err
}

// weight is a hybrid weight as a query value ("" when not set).
func weight(w *int) string {
	if w == nil {
		return ""
	}
	return strconv.Itoa(*w)
}

// Resolve ranks the Records a mention may be (kind may be "").
func (b *Branch) Resolve(ctx context.Context, mention, kind string, limit int) (*Candidates, error) {
	var out Candidates
	_, err := b.d.c.do(ctx, get(b.path+"/resolve", "mention", mention, "kind", kind, "limit", itoa(limit)), &out)
	return &out, err
}

// RevisionsPage reads one page of the branch's log, newest first.
func (b *Branch) RevisionsPage(ctx context.Context, p Page) (*RevisionPage, error) {
	var out RevisionPage
	_, err := b.d.c.do(ctx, get(b.path+"/revisions", "limit", itoa(p.Limit), "before", p.After), &out)
	return &out, err
}

// Revisions walks the branch's log, newest first.
func (b *Branch) Revisions(ctx context.Context) iter.Seq2[RevisionSummary, error] {
	return each(ctx, func(ctx context.Context, after string) ([]RevisionSummary, string, error) {
		p, err := b.RevisionsPage(ctx, Page{After: after})
		if err != nil {
			return nil, "", err
		}
		return p.Revisions, p.Next, nil
	})
}

// Diff reads one page of what the branch changed since its merge base
// with against.
func (b *Branch) Diff(ctx context.Context, against string, p Page) (*Diff, error) {
	var out Diff
	_, err := b.d.c.do(ctx, get(b.path+"/diff", "against", against, "limit", itoa(p.Limit), "after", p.After), &out)
	return &out, err
}

// DiffChanges walks every changed Record of the diff against a branch.
func (b *Branch) DiffChanges(ctx context.Context, against string) iter.Seq2[DiffChange, error] {
	return each(ctx, func(ctx context.Context, after string) ([]DiffChange, string, error) {
		p, err := b.Diff(ctx, against, Page{After: after})
		if err != nil {
			return nil, "", err
		}
		return p.Changes, p.Next, nil
	})
}

// Merge merges another branch into this one without a Proposal; unresolved
// conflicts are a 409 whose Problem lists them.
func (b *Branch) Merge(ctx context.Context, req MergeRequest) (*MergeResult, error) {
	var out MergeResult
	_, err := b.d.c.do(ctx, request{method: http.MethodPost, path: b.path + "/merges", body: req}, &out)
	return &out, err
}
