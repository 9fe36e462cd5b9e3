package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/store"
)

// Proposal states.
const (
	StateOpen    = "open"
	StateMerging = "merging"
	StateMerged  = "merged"
	StateClosed  = "closed"
)

// Limits of a Proposal's texts.
const (
	maxTitleBytes       = 500
	maxDescriptionBytes = 20 << 10
)

// Heads are the heads a Proposal's summary and conflicts were computed at.
type Heads struct {
	Source    *string `json:"source"`
	Target    *string `json:"target"`
	MergeBase *string `json:"merge_base"`
}

// Proposal is a request to merge a source branch into a target branch.
type Proposal struct {
	ID             string          `json:"id"`
	Title          string          `json:"title"`
	Description    string          `json:"description"`
	Source         string          `json:"source"`
	Target         string          `json:"target"`
	State          string          `json:"state"`
	Author         string          `json:"author"`
	CreatedAt      time.Time       `json:"created_at"`
	UpdatedAt      time.Time       `json:"updated_at"`
	Summary        *Summary        `json:"summary"`
	Conflicts      int             `json:"conflicts"`
	Unresolved     int             `json:"unresolved"`
	Mergeable      bool            `json:"mergeable"`
	FastForward    bool            `json:"fast_forward"`
	ComputedAt     *Heads          `json:"computed_at"`
	Stale          bool            `json:"stale,omitempty"`
	Problems       []lberr.Problem `json:"problems,omitempty"`
	MergedRevision *string         `json:"merged_revision,omitempty"`
	Progress       json.RawMessage `json:"progress,omitempty"`

	sourceID, targetID int32
	cacheKey           *string
	cache              *Inspection
}

// OpenRequest opens a Proposal.
type OpenRequest struct {
	Title       string `json:"title"`
	Description string `json:"description,omitempty"`
	Source      string `json:"source"`
	Target      string `json:"target"`
}

func checkText(field, s string, max int, required bool) *lberr.Problem {
	switch {
	case s == "" && required:
		return &lberr.Problem{Field: field, Code: "required", Message: field + " is required."}
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return &lberr.Problem{Field: field, Code: "invalid_text", Message: field + " must be valid UTF-8 text without NUL characters."}
	case len(s) > max:
		return &lberr.Problem{Field: field, Code: "too_long", Message: fmt.Sprintf("%s may hold at most %d bytes.", field, max)}
	}
	return nil
}

// CheckOpen validates an OpenRequest before any SQL (422 naming the fields).
func CheckOpen(req *OpenRequest) error {
	var ps []lberr.Problem
	if p := checkText("title", req.Title, maxTitleBytes, true); p != nil {
		ps = append(ps, *p)
	}
	if p := checkText("description", req.Description, maxDescriptionBytes, false); p != nil {
		ps = append(ps, *p)
	}
	for _, f := range []struct{ name, v string }{{"source", req.Source}, {"target", req.Target}} {
		switch {
		case f.v == "":
			ps = append(ps, lberr.Problem{Field: f.name, Code: "required", Message: f.name + " is required: a branch name."})
		case !store.ValidBranchName(f.v):
			ps = append(ps, lberr.Problem{Field: f.name, Code: "invalid_branch", Message: fmt.Sprintf("%s is not a branch name.", quoteKey(f.v))})
		}
	}
	if len(ps) == 0 && req.Source == req.Target {
		ps = append(ps, lberr.Problem{Field: "target", Code: "same_branch", Message: "A Proposal merges a branch into another; source and target are the same."})
	}
	if len(ps) > 0 {
		return &lberr.Error{Kind: lberr.Unprocessable, Title: "invalid proposal", Problems: ps}
	}
	return nil
}

// ValidProposalID reports whether s can be a Proposal id (a ULID).
func ValidProposalID(s string) bool {
	_, err := ulid.ParseStrict(s)
	return err == nil
}

// errProposalNotFound is the 404 of a missing Proposal (or one of another Domain).
func errProposalNotFound(id string) error {
	return fmt.Errorf("no Proposal %s: %w", quoteKey(id), store.ErrNotFound)
}

// Open opens a Proposal and computes its summary and conflicts.
func (e *Engine) Open(ctx context.Context, domainID int32, req *OpenRequest, author string) (*Proposal, error) {
	if err := CheckOpen(req); err != nil {
		return nil, err
	}
	id := ulid.Make().String()
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		s, err := store.ReadBranch(ctx, tx, req.Source)
		if err != nil {
			return fmt.Errorf("no branch named %s: %w", quoteKey(req.Source), store.ErrNotFound)
		}
		t, err := store.ReadBranch(ctx, tx, req.Target)
		if err != nil {
			return fmt.Errorf("no branch named %s: %w", quoteKey(req.Target), store.ErrNotFound)
		}
		_, err = tx.Exec(ctx, `INSERT INTO proposals (domain_id, id, title, description, source_id, target_id, source, target, author)
			VALUES (lb_domain(), $1, $2, $3, $4, $5, $6, $7, $8)`, id, req.Title, req.Description, s.ID, t.ID, s.Name, t.Name, author)
		if err != nil {
			return fmt.Errorf("open proposal: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	p, _, err := e.Show(ctx, domainID, id)
	return p, err
}

const proposalColumns = `id, title, description, source_id, target_id, source, target, state, author, created_at, updated_at,
	merged_revision, cache_key, cache, progress`

// scanProposal scans proposalColumns, then the columns after them into
// extra.
func scanProposal(row pgx.Row, extra ...any) (*Proposal, error) {
	var p Proposal
	var cache []byte
	err := row.Scan(append([]any{&p.ID, &p.Title, &p.Description, &p.sourceID, &p.targetID, &p.Source, &p.Target, &p.State, &p.Author,
		&p.CreatedAt, &p.UpdatedAt, &p.MergedRevision, &p.cacheKey, &cache, &p.Progress}, extra...)...)
	if err != nil {
		return nil, store.Translate(err)
	}
	if len(cache) > 0 {
		var ins Inspection
		if err := json.Unmarshal(cache, &ins); err != nil {
			return nil, fmt.Errorf("decode proposal cache: %w", err)
		}
		p.cache = &ins
		p.fromCache()
	}
	if string(p.Progress) == "{}" {
		p.Progress = nil
	}
	return &p, nil
}

func (p *Proposal) fromCache() {
	ins := p.cache
	sum := ins.Summary
	p.Summary = &sum
	p.Conflicts = len(ins.Conflicts)
	p.Unresolved = ins.Unresolved
	p.Mergeable = ins.Mergeable && p.State == StateOpen
	p.FastForward = ins.FastForward
	p.ComputedAt = &Heads{Source: ins.SourceHead, Target: ins.TargetHead, MergeBase: ins.MergeBase}
	p.Problems = ins.Problems
}

// currentKey is the cache key of a Proposal now: both heads and whether
// its resolutions changed since (a change clears cache_key).
func currentKey(ctx context.Context, tx pgx.Tx, p *Proposal) (string, error) {
	var sh, th *string
	err := tx.QueryRow(ctx, `SELECT (SELECT head FROM refs WHERE domain_id = lb_domain() AND id = $1 AND state <> 'deleting'),
		(SELECT head FROM refs WHERE domain_id = lb_domain() AND id = $2 AND state <> 'deleting')`, p.sourceID, p.targetID).Scan(&sh, &th)
	if err != nil {
		return "", fmt.Errorf("read proposal heads: %w", err)
	}
	return deref(sh) + "|" + deref(th), nil
}

// List lists Proposals by id (state "" for all), after the id after. A
// listed Proposal shows its last computed summary, marked stale when a
// head moved since; nothing is recomputed.
func (e *Engine) List(ctx context.Context, domainID int32, state, after string, limit int) ([]*Proposal, error) {
	var out []*Proposal
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT `+proposalColumns+`,
			coalesce((SELECT head FROM refs r WHERE r.domain_id = p.domain_id AND r.id = p.source_id), '') || '|' ||
			coalesce((SELECT head FROM refs r WHERE r.domain_id = p.domain_id AND r.id = p.target_id), '')
			FROM proposals p WHERE domain_id = lb_domain() AND ($1 = '' OR state = $1) AND id > $2 ORDER BY id LIMIT $3`,
			state, after, limit)
		if err != nil {
			return fmt.Errorf("list proposals: %w", err)
		}
		out, err = pgx.AppendRows(out, rows, func(row pgx.CollectableRow) (*Proposal, error) {
			var key string
			p, err := scanProposal(row, &key)
			if err != nil {
				return nil, fmt.Errorf("list proposals: %w", err)
			}
			p.Stale = p.State == StateOpen && (p.cacheKey == nil || *p.cacheKey != key)
			return p, nil
		})
		return err
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// resolutions reads a Proposal's stored resolutions by conflict id.
func resolutions(ctx context.Context, tx pgx.Tx, id string) (map[string]Resolution, error) {
	rows, err := tx.Query(ctx, `SELECT conflict_id, choice, value, fingerprint FROM proposal_resolutions
		WHERE domain_id = lb_domain() AND proposal_id = $1`, id)
	if err != nil {
		return nil, fmt.Errorf("read resolutions: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (Resolution, error) {
		var r Resolution
		var v []byte
		if err := row.Scan(&r.Conflict, &r.Choice, &v, &r.Fingerprint); err != nil {
			return r, fmt.Errorf("read resolutions: %w", err)
		}
		r.Value = v
		return r, nil
	})
	if err != nil {
		return nil, err
	}
	out := make(map[string]Resolution, len(list))
	for _, r := range list {
		out[r.Conflict] = r
	}
	return out, nil
}

// load reads a Proposal (404 when missing).
func load(ctx context.Context, tx pgx.Tx, id string, lock bool) (*Proposal, error) {
	if !ValidProposalID(id) {
		return nil, errProposalNotFound(id)
	}
	q := `SELECT ` + proposalColumns + ` FROM proposals WHERE domain_id = lb_domain() AND id = $1`
	if lock {
		q += ` FOR UPDATE`
	}
	p, err := scanProposal(tx.QueryRow(ctx, q, id))
	if errors.Is(err, store.ErrNotFound) {
		return nil, errProposalNotFound(id)
	}
	if err != nil {
		return nil, fmt.Errorf("read proposal: %w", err)
	}
	return p, nil
}

// Show reads a Proposal, recomputing its summary and conflicts when a head
// or a resolution changed since they were computed.
func (e *Engine) Show(ctx context.Context, domainID int32, id string) (*Proposal, *Inspection, error) {
	var p *Proposal
	var key string
	var res map[string]Resolution
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		var err error
		if p, err = load(ctx, tx, id, false); err != nil {
			return err
		}
		if key, err = currentKey(ctx, tx, p); err != nil {
			return err
		}
		res, err = resolutions(ctx, tx, id)
		return err
	})
	if err != nil {
		return nil, nil, err
	}
	if p.State != StateOpen || (p.cache != nil && p.cacheKey != nil && *p.cacheKey == key) {
		if p.cache == nil {
			p.cache = &Inspection{Conflicts: []*Conflict{}}
		}
		return p, p.cache, nil
	}
	ins, err := e.Inspect(ctx, domainID, &Request{Source: p.Source, Target: p.Target, Author: p.Author, Resolutions: res, Proposal: p.ID})
	if errors.Is(err, store.ErrNotFound) {
		ins = &Inspection{Conflicts: []*Conflict{}, Problems: []lberr.Problem{{Code: "branch_missing", Message: firstLine(err)}}}
	} else if err != nil {
		return nil, nil, err
	}
	body, err := json.Marshal(ins)
	if err != nil {
		return nil, nil, fmt.Errorf("encode proposal cache: %w", err)
	}
	err = e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `UPDATE proposals SET cache = $2::jsonb, cache_key = $3 WHERE domain_id = lb_domain() AND id = $1 AND state = 'open'`,
			id, string(body), key)
		return err
	})
	if err != nil {
		return nil, nil, fmt.Errorf("store proposal cache: %w", err)
	}
	p.cache = ins
	p.cacheKey = &key
	p.fromCache()
	return p, ins, nil
}

func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}

// ErrStale: a resolution's fingerprint no longer matches its conflict (409).
var ErrStale = lberr.New(lberr.Conflict, "the conflict changed since it was read: its fingerprint is stale")

// Resolve stores a resolution of one conflict of an open Proposal. The
// fingerprint must be the conflict's current one (else ErrStale).
func (e *Engine) Resolve(ctx context.Context, domainID int32, id, conflictID string, r Resolution, author string) (*Conflict, error) {
	if !ChoiceValid(r.Choice) {
		return nil, invalid("choice", "invalid_choice", "choice must be \"target\", \"source\" or \"value\".")
	}
	if r.Fingerprint == "" {
		return nil, invalid("fingerprint", "required", "fingerprint is required: the conflict's fingerprint as last read.")
	}
	p, ins, err := e.Show(ctx, domainID, id)
	if err != nil {
		return nil, err
	}
	if p.State != StateOpen {
		return nil, fmt.Errorf("the Proposal is %s: %w", p.State, store.ErrConflict)
	}
	var c *Conflict
	for _, x := range ins.Conflicts {
		if x.ID == conflictID {
			c = x
		}
	}
	if c == nil {
		return nil, fmt.Errorf("no conflict %s on Proposal %s: %w", quoteKey(conflictID), id, store.ErrNotFound)
	}
	if c.Fingerprint != r.Fingerprint {
		return nil, ErrStale
	}
	if !ChoiceAllowed(c.Code, r.Choice) {
		return nil, invalid("choice", "choice_not_allowed", fmt.Sprintf("A %s conflict cannot be resolved with %q.", c.Code, r.Choice))
	}
	var value any
	if r.Choice == ChoiceValue {
		if err := CheckValue(c.Code, r.Value); err != nil {
			return nil, err
		}
		value = string(r.Value)
	} else if len(r.Value) > 0 && string(r.Value) != "null" {
		return nil, invalid("value", "unexpected", "value is only for choice \"value\".")
	}
	err = e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		if _, err := load(ctx, tx, id, true); err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `INSERT INTO proposal_resolutions (domain_id, proposal_id, conflict_id, choice, value, fingerprint, author)
			VALUES (lb_domain(), $1, $2, $3, $4::jsonb, $5, $6)
			ON CONFLICT (domain_id, proposal_id, conflict_id) DO UPDATE SET choice = EXCLUDED.choice, value = EXCLUDED.value,
				fingerprint = EXCLUDED.fingerprint, author = EXCLUDED.author, at = now()`,
			id, conflictID, r.Choice, value, r.Fingerprint, author); err != nil {
			return fmt.Errorf("store resolution: %w", err)
		}
		_, err := tx.Exec(ctx, `UPDATE proposals SET cache_key = NULL, updated_at = now() WHERE domain_id = lb_domain() AND id = $1`, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	rr := r
	rr.Conflict = conflictID
	c.Resolution = &rr
	return c, nil
}

// ChoiceValid reports whether s is a choice.
func ChoiceValid(s string) bool {
	return s == ChoiceTarget || s == ChoiceSource || s == ChoiceValue
}

// Unresolve clears the resolution of a conflict (404 when it has none).
func (e *Engine) Unresolve(ctx context.Context, domainID int32, id, conflictID string) error {
	return e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		p, err := load(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if p.State != StateOpen {
			return fmt.Errorf("the Proposal is %s: %w", p.State, store.ErrConflict)
		}
		tag, err := tx.Exec(ctx, `DELETE FROM proposal_resolutions WHERE domain_id = lb_domain() AND proposal_id = $1 AND conflict_id = $2`, id, conflictID)
		if err != nil {
			return fmt.Errorf("clear resolution: %w", err)
		}
		if tag.RowsAffected() == 0 {
			return fmt.Errorf("conflict %s of Proposal %s has no resolution: %w", quoteKey(conflictID), id, store.ErrNotFound)
		}
		_, err = tx.Exec(ctx, `UPDATE proposals SET cache_key = NULL, updated_at = now() WHERE domain_id = lb_domain() AND id = $1`, id)
		return err
	})
}

// MergeRequest merges an open Proposal.
type MergeRequest struct {
	ExpectedTargetHead *string `json:"expected_target_head,omitempty"`
	Default            string  `json:"default,omitempty"`
	Message            string  `json:"message,omitempty"`
	// Trace is the agent trace the merge was asked under, named in the
	// merge Revision's provenance (kept in a queued merge job's arguments).
	Trace string `json:"trace,omitempty"`
}

// MergeProposal merges an open Proposal with its stored resolutions (and
// the default for the rest) in one transaction, and marks it merged.
func (e *Engine) MergeProposal(ctx context.Context, domainID int32, id string, req *MergeRequest, author string) (*Result, error) {
	var res *Result
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		p, err := load(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if p.State != StateOpen {
			return fmt.Errorf("the Proposal is %s, not open: %w", p.State, store.ErrConflict)
		}
		if e.cfg.Enqueue != nil && e.cfg.JobThreshold > 0 {
			n, err := writeSet(ctx, tx, p)
			if err != nil {
				return err
			}
			if n > e.cfg.JobThreshold {
				if req.ExpectedTargetHead != nil {
					t, err := store.ReadBranch(ctx, tx, p.Target)
					if err != nil {
						return err
					}
					if !sameHead(req.ExpectedTargetHead, t.Head) {
						return commit.ErrHeadMoved
					}
				}
				prog, _ := json.Marshal(map[string]any{"phase": "queued", "write_set": n})
				if _, err := tx.Exec(ctx, `UPDATE proposals SET state = 'merging', progress = $2::jsonb, updated_at = now()
					WHERE domain_id = lb_domain() AND id = $1`, id, string(prog)); err != nil {
					return fmt.Errorf("mark proposal merging: %w", err)
				}
				if err := e.cfg.Enqueue(ctx, tx, domainID, id, *req, author); err != nil {
					return err
				}
				res = &Result{Queued: true}
				return nil
			}
		}
		rs, err := resolutions(ctx, tx, id)
		if err != nil {
			return err
		}
		mreq := &Request{Source: p.Source, Target: p.Target, Author: author, Message: req.Message, Default: req.Default,
			Resolutions: rs, ExpectedHead: req.ExpectedTargetHead, Proposal: p.ID, Trace: req.Trace}
		if mreq.Message == "" {
			mreq.Message = "Merge proposal " + p.ID + ": " + p.Title
		}
		out, err := e.run(ctx, tx, domainID, mreq, true)
		if err != nil {
			return err
		}
		if len(out.unresolved) > 0 {
			return &ConflictsError{Conflicts: out.unresolved}
		}
		res = out.result
		_, err = tx.Exec(ctx, `UPDATE proposals SET state = 'merged', merged_revision = $2, updated_at = now()
			WHERE domain_id = lb_domain() AND id = $1`, id, res.Revision)
		if err != nil {
			return fmt.Errorf("mark proposal merged: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// writeSet counts the candidates a merge of the Proposal reads and may
// write: the Records and Links either side changed since the merge base.
func writeSet(ctx context.Context, tx pgx.Tx, p *Proposal) (int, error) {
	s, err := store.ReadBranch(ctx, tx, p.Source)
	if err != nil {
		return 0, fmt.Errorf("source branch %q: %w", p.Source, err)
	}
	t, err := store.ReadBranch(ctx, tx, p.Target)
	if err != nil {
		return 0, fmt.Errorf("target branch %q: %w", p.Target, err)
	}
	b, err := findBase(ctx, tx, s, t)
	if err != nil {
		return 0, err
	}
	var ch changed
	if err := changedIn(ctx, tx, append(append([]span{}, b.Source...), b.Target...), &ch); err != nil {
		return 0, err
	}
	return len(ch.keys) + len(ch.links), nil
}

// RunMergeJob merges a Proposal marked merging, as the merge.proposal job:
// in one transaction (the merge commit lands whole or not at all; a job
// cut short is retried and finds the Proposal still merging). A merge that
// finds unresolved conflicts or violations puts the Proposal back to open
// with the reason in its progress. Progress is written as the job goes.
func (e *Engine) RunMergeJob(ctx context.Context, domainID int32, id string, req MergeRequest, author string, afterCompute func(context.Context) error) error {
	setProgress := func(state string, prog map[string]any) error {
		body, err := json.Marshal(prog)
		if err != nil {
			return fmt.Errorf("encode progress: %w", err)
		}
		return e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
			_, err := tx.Exec(ctx, `UPDATE proposals SET progress = $2::jsonb, state = coalesce($3, state), updated_at = now()
				WHERE domain_id = lb_domain() AND id = $1 AND state = 'merging'`, id, string(body), nullable(state))
			return err
		})
	}
	if err := setProgress("", map[string]any{"phase": "merging"}); err != nil {
		return fmt.Errorf("merge job of proposal %s: %w", id, err)
	}
	var res *Result
	var failure error
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		p, err := load(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if p.State != StateMerging {
			return nil // done by an earlier run
		}
		rs, err := resolutions(ctx, tx, id)
		if err != nil {
			return err
		}
		mreq := &Request{Source: p.Source, Target: p.Target, Author: author, Message: req.Message, Default: req.Default,
			Resolutions: rs, ExpectedHead: req.ExpectedTargetHead, Proposal: p.ID, Trace: req.Trace}
		if mreq.Message == "" {
			mreq.Message = "Merge proposal " + p.ID + ": " + p.Title
		}
		out, err := e.run(ctx, tx, domainID, mreq, true)
		var inv *lberr.Error
		var ce *ConflictsError
		switch {
		case errors.As(err, &inv) || errors.As(err, &ce) || errors.Is(err, commit.ErrHeadMoved):
			failure = err
			return errRollback
		case err != nil:
			return err
		}
		if len(out.unresolved) > 0 {
			failure = &ConflictsError{Conflicts: out.unresolved}
			return errRollback
		}
		if afterCompute != nil {
			if err := afterCompute(ctx); err != nil {
				return err
			}
		}
		res = out.result
		prog, _ := json.Marshal(map[string]any{"phase": "done", "revision": res.Revision, "changes": res.Changes, "fast_forward": res.FastForward})
		_, err = tx.Exec(ctx, `UPDATE proposals SET state = 'merged', merged_revision = $2, progress = $3::jsonb, updated_at = now()
			WHERE domain_id = lb_domain() AND id = $1`, id, res.Revision, string(prog))
		return err
	})
	if errors.Is(err, errRollback) {
		prog := map[string]any{"phase": "failed", "error": firstLine(failure)}
		var ce *ConflictsError
		if errors.As(failure, &ce) {
			prog["conflicts"] = len(ce.Conflicts)
		}
		if err := setProgress(StateOpen, prog); err != nil {
			return fmt.Errorf("merge job of proposal %s: %w", id, err)
		}
		return nil
	}
	if err != nil {
		return fmt.Errorf("merge job of proposal %s: %w", id, err)
	}
	return nil
}

// errRollback rolls a job's merge transaction back on a client-side failure.
var errRollback = errors.New("merge refused")

func nullable(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

// Close closes an open Proposal.
func (e *Engine) Close(ctx context.Context, domainID int32, id string) (*Proposal, error) {
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		p, err := load(ctx, tx, id, true)
		if err != nil {
			return err
		}
		if p.State != StateOpen {
			return fmt.Errorf("the Proposal is %s, not open: %w", p.State, store.ErrConflict)
		}
		_, err = tx.Exec(ctx, `UPDATE proposals SET state = 'closed', updated_at = now() WHERE domain_id = lb_domain() AND id = $1`, id)
		return err
	})
	if err != nil {
		return nil, err
	}
	p, _, err := e.Show(ctx, domainID, id)
	return p, err
}

// Branches returns the source and target names of a Proposal (404 when
// missing), for grant checks before acting on it.
func (e *Engine) Branches(ctx context.Context, domainID int32, id string) (source, target string, err error) {
	err = e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		p, err := load(ctx, tx, id, false)
		if err != nil {
			return err
		}
		source, target = p.Source, p.Target
		return nil
	})
	return source, target, err
}
