package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strings"

	"github.com/hashicorp/golang-lru/v2"
	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/store"
)

// Engine computes diffs and merges over a store, writing merges through the
// commit pipeline.
type Engine struct {
	store   *store.Store
	commits *commit.Pipeline
	cfg     Config
	// diffs caches whole diffs by the states they compare (immutable, so
	// never stale): a diff's pages after the first slice it.
	diffs *lru.Cache[string, *fullDiff]
}

// diffCacheEntries bounds the diffs an engine keeps.
const diffCacheEntries = 32

// Config tunes the engine.
type Config struct {
	// JobThreshold: a Proposal merge whose write set (candidate Records and
	// Links) is larger runs as a job through Enqueue (merge.job_threshold;
	// 0: never).
	JobThreshold int
	// Enqueue queues the merge job of a Proposal in tx, the transaction
	// that marks it merging.
	Enqueue func(ctx context.Context, tx pgx.Tx, domainID int32, proposalID string, req MergeRequest, author string) error
}

// New returns an engine over the store and the commit pipeline that runs
// every merge in its request.
func New(s *store.Store, p *commit.Pipeline) *Engine {
	return NewWith(s, p, Config{})
}

// NewWith returns an engine with its configuration.
func NewWith(s *store.Store, p *commit.Pipeline, cfg Config) *Engine {
	diffs, err := lru.New[string, *fullDiff](diffCacheEntries)
	if err != nil {
		panic(err) // only for a size below 1
	}
	return &Engine{store: s, commits: p, cfg: cfg, diffs: diffs}
}

// Request is a merge of branch Source into branch Target.
type Request struct {
	Source  string
	Target  string
	Message string
	Author  string
	// Default resolves every conflict without a resolution of its own:
	// "target", "source" or "" (none: such conflicts stop the merge).
	Default string
	// Resolutions by conflict id.
	Resolutions map[string]Resolution
	// ExpectedHead, when set, must be the target's head (else
	// commit.ErrHeadMoved).
	ExpectedHead *string
	// Proposal names the Proposal being merged ("" for a direct merge).
	Proposal string
	// Trace names the agent trace the merge was asked under ("" for
	// none): the merge Revision's provenance and every change's name it.
	Trace string
}

// Result is what a merge answers.
type Result struct {
	Revision    string   `json:"revision"`
	Parents     []string `json:"parents"`
	FastForward bool     `json:"fast_forward"`
	Changes     int      `json:"changes"`
	// UpToDate: the source had nothing the target lacks; no Revision was
	// written and Revision is the target's head.
	UpToDate bool `json:"up_to_date,omitempty"`
	// Queued: the merge runs as a job; the Proposal shows its progress.
	Queued bool `json:"-"`
}

// Summary counts what the source changed since the merge base.
type Summary struct {
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

// outcome is a computed merge: its conflicts, the changes it would write
// and what was written.
type outcome struct {
	s, t        *store.Branch
	base        *base
	conflicts   []*Conflict
	unresolved  []*Conflict
	summary     Summary
	fastForward bool
	changes     int
	result      *Result
}

// mergeState is the working set of one merge.
type mergeState struct {
	req      *Request
	s, t     *store.Branch
	keys     []string
	links    []linkKey
	linkSet  map[linkKey]bool
	b, src   map[string]*rec
	tgt      map[string]*rec
	lb, ls   map[linkKey]bool
	lt       map[linkKey]bool
	merged   map[string]*rec
	mergedL  map[linkKey]bool
	origins  map[string]origin // source versions
	tOrigins map[string]origin // target versions of conflicting keys
	resolved map[string][]string
	byID     map[string]*Conflict
	out      *outcome
	// schemaRev is the schema Revision the merge wrote, if any.
	schemaRev *commit.Result
}

// resolution returns the resolution that applies to c: its own when its
// fingerprint is current, else the default when the default may resolve
// it, else nil. c.Resolution shows its own.
func (m *mergeState) resolution(c *Conflict) *Resolution {
	if r, ok := m.req.Resolutions[c.ID]; ok && r.Fingerprint == c.Fingerprint && ChoiceAllowed(c.Code, r.Choice) {
		if r.Choice == ChoiceValue {
			if err := CheckValue(c.Code, r.Value); err != nil {
				c.Message = "The resolution's value does not fit this conflict: " + lberr.FirstLine(err)
				return nil
			}
		}
		rr := r
		rr.Conflict = c.ID
		c.Resolution = &rr
		return &rr
	}
	if m.req.Default != "" && ChoiceAllowed(c.Code, m.req.Default) {
		return &Resolution{Conflict: c.ID, Choice: m.req.Default, Fingerprint: c.Fingerprint}
	}
	return nil
}

func (m *mergeState) add(c *Conflict) {
	if m.byID[c.ID] != nil {
		return
	}
	m.byID[c.ID] = c
	m.out.conflicts = append(m.out.conflicts, c)
}

// Merge merges req.Source into req.Target in one transaction: one Revision
// on the target with both heads as parents, or a *ConflictsError listing
// the conflicts without a resolution, or a *lberr.Error (422)
// naming the keys whose merged result the target refuses.
func (e *Engine) Merge(ctx context.Context, domainID int32, req *Request) (*Result, error) {
	var res *Result
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		out, err := e.run(ctx, tx, domainID, req, true)
		if err != nil {
			return err
		}
		if len(out.unresolved) > 0 {
			return &ConflictsError{Conflicts: out.unresolved}
		}
		res = out.result
		return nil
	})
	if err != nil {
		return nil, err
	}
	return res, nil
}

// errInspected rolls back an inspection's transaction.
var errInspected = errors.New("inspection done")

// Inspect computes a merge without writing it: its conflicts (validator
// findings included, with unresolved conflicts taken from the target),
// the summary and whether it is a fast-forward.
func (e *Engine) Inspect(ctx context.Context, domainID int32, req *Request) (*Inspection, error) {
	var ins *Inspection
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		out, err := e.run(ctx, tx, domainID, req, false)
		var inv *lberr.Error
		switch {
		case errors.As(err, &inv) && inv.Kind == lberr.Unprocessable:
			ins = &Inspection{Problems: inv.Problems}
		case err != nil:
			return err
		default:
			ins = &Inspection{}
		}
		if out != nil {
			ins.fill(out)
		}
		// Nothing an inspection did may stay.
		return errInspected
	})
	if err != nil && !errors.Is(err, errInspected) {
		return nil, err
	}
	return ins, nil
}

// Inspection is a computed, unwritten merge.
type Inspection struct {
	Source       string          `json:"source"`
	Target       string          `json:"target"`
	SourceHead   *string         `json:"source_head"`
	TargetHead   *string         `json:"target_head"`
	MergeBase    *string         `json:"merge_base"`
	Summary      Summary         `json:"summary"`
	Conflicts    []*Conflict     `json:"conflicts"`
	Unresolved   int             `json:"unresolved"`
	Changes      int             `json:"changes"`
	FastForward  bool            `json:"fast_forward"`
	Problems     []lberr.Problem `json:"problems,omitempty"`
	Mergeable    bool            `json:"mergeable"`
	unresolvedCs []*Conflict
}

func (ins *Inspection) fill(out *outcome) {
	if out.s != nil {
		ins.Source, ins.SourceHead = out.s.Name, out.s.Head
	}
	if out.t != nil {
		ins.Target, ins.TargetHead = out.t.Name, out.t.Head
	}
	if out.base != nil {
		ins.MergeBase = out.base.Revision
	}
	ins.Summary = out.summary
	ins.Conflicts = out.conflicts
	sortConflicts(ins.Conflicts)
	if ins.Conflicts == nil {
		ins.Conflicts = []*Conflict{}
	}
	ins.Unresolved = len(out.unresolved)
	ins.unresolvedCs = out.unresolved
	ins.Changes = out.changes
	ins.FastForward = out.fastForward
	ins.Mergeable = len(out.unresolved) == 0 && len(ins.Problems) == 0
}

// run computes the merge in tx and, when write is set and nothing is
// unresolved, writes it. The target is locked only when writing.
func (e *Engine) run(ctx context.Context, tx pgx.Tx, domainID int32, req *Request, write bool) (*outcome, error) {
	out := &outcome{}
	s, err := store.ReadBranch(ctx, tx, req.Source)
	if err != nil {
		return nil, fmt.Errorf("source branch %q: %w", req.Source, err)
	}
	t, err := store.ReadBranch(ctx, tx, req.Target)
	if err != nil {
		return nil, fmt.Errorf("target branch %q: %w", req.Target, err)
	}
	if write {
		// The target is locked for the commit; the source is shared, so
		// its head cannot move between reading it and recording it as
		// the next merge base. Locks are taken in branch id order, so
		// merges in opposite directions cannot deadlock.
		lockSource := func() error {
			s, err = store.ShareBranch(ctx, tx, req.Source)
			return err
		}
		lockTarget := func() error {
			t, err = store.LockBranch(ctx, tx, req.Target)
			return err
		}
		first, second := lockSource, lockTarget
		if t.ID < s.ID {
			first, second = lockTarget, lockSource
		}
		if err := first(); err != nil {
			return nil, err
		}
		if err := second(); err != nil {
			return nil, err
		}
	}
	out.s, out.t = s, t
	if write && req.ExpectedHead != nil && !sameHead(req.ExpectedHead, t.Head) {
		return nil, commit.ErrHeadMoved
	}
	b, err := findBase(ctx, tx, s, t)
	if err != nil {
		return nil, err
	}
	out.base = b
	var cs, ct changed
	if err := changedIn(ctx, tx, b.Source, &cs); err != nil {
		return nil, err
	}
	if err := changedIn(ctx, tx, b.Target, &ct); err != nil {
		return nil, err
	}
	out.fastForward = len(ct.keys) == 0 && len(ct.links) == 0 && !ct.schema
	m := &mergeState{req: req, s: s, t: t, byID: map[string]*Conflict{}, resolved: map[string][]string{}, out: out}
	baseRef := stateRef{Branch: b.Branch, At: &b.Seq}

	// The schema first: a schema conflict blocks the data merge.
	if cs.schema || ct.schema {
		blocked, err := e.mergeSchema(ctx, tx, domainID, m, baseRef)
		if err != nil || blocked {
			return out, err
		}
	}

	keySet := map[string]bool{}
	maps.Copy(keySet, cs.keys)
	maps.Copy(keySet, ct.keys)
	m.keys = sortedKeys(keySet)
	m.linkSet = map[linkKey]bool{}
	maps.Copy(m.linkSet, cs.links)
	maps.Copy(m.linkSet, ct.links)
	m.links = sortedLinks(m.linkSet)
	if m.b, err = readRecords(ctx, tx, baseRef, m.keys); err != nil {
		return nil, err
	}
	if m.src, err = readRecords(ctx, tx, stateRef{Branch: s.ID}, m.keys); err != nil {
		return nil, err
	}
	// A target that changed nothing since the base equals it: a
	// fast-forward reads two states, not three.
	m.tgt = m.b
	if !out.fastForward || m.schemaRev != nil {
		if m.tgt, err = readRecords(ctx, tx, stateRef{Branch: t.ID}, m.keys); err != nil {
			return nil, err
		}
	}
	if m.lb, err = readLinks(ctx, tx, baseRef, m.links); err != nil {
		return nil, err
	}
	if m.ls, err = readLinks(ctx, tx, stateRef{Branch: s.ID}, m.links); err != nil {
		return nil, err
	}
	m.lt = m.lb
	if !out.fastForward || m.schemaRev != nil {
		if m.lt, err = readLinks(ctx, tx, stateRef{Branch: t.ID}, m.links); err != nil {
			return nil, err
		}
	}
	changedSrc := map[string]*rec{}
	for _, k := range m.keys {
		if !sameRec(m.src[k], m.b[k]) && m.src[k] != nil {
			changedSrc[k] = m.src[k]
		}
	}
	if m.origins, err = readOrigins(ctx, tx, domainID, changedSrc); err != nil {
		return nil, err
	}
	m.summarize()
	m.mergeRecords()
	m.mergeLinks()
	conflicting := map[string]*rec{}
	for _, c := range out.conflicts {
		if r := m.tgt[c.Key]; r != nil {
			conflicting[c.Key] = r
		}
	}
	if m.tOrigins, err = readOrigins(ctx, tx, domainID, conflicting); err != nil {
		return nil, err
	}
	m.attribute()
	if err := e.validate(ctx, tx, domainID, m, write); err != nil {
		return out, err
	}
	if write && len(out.unresolved) == 0 {
		if out.result == nil && m.schemaRev != nil {
			out.result = &Result{Revision: m.schemaRev.Revision, Parents: m.schemaRev.Parents, FastForward: out.fastForward, Changes: 1}
		}
		if out.result == nil {
			out.result = &Result{Revision: deref(t.Head), Parents: []string{}, UpToDate: true, FastForward: out.fastForward}
		}
		if err := saveBase(ctx, tx, s, t, b); err != nil {
			return nil, err
		}
	}
	return out, nil
}

func sameHead(a, b *string) bool {
	if a == nil || *a == "" {
		return b == nil
	}
	return b != nil && *a == *b
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// mergeSchema merges the schema documents: the same on both sides, or one
// side unchanged, takes the other; otherwise a schema conflict. It applies
// the source's (or the resolved) document to the target. blocked: a
// schema conflict without a resolution stops the data merge.
func (e *Engine) mergeSchema(ctx context.Context, tx pgx.Tx, domainID int32, m *mergeState, baseRef stateRef) (bool, error) {
	bd, err := schemaDoc(ctx, tx, baseRef)
	if err != nil {
		return false, err
	}
	sd, err := schemaDoc(ctx, tx, stateRef{Branch: m.s.ID})
	if err != nil {
		return false, err
	}
	td, err := schemaDoc(ctx, tx, stateRef{Branch: m.t.ID})
	if err != nil {
		return false, err
	}
	var apply any
	switch {
	case sameJSON(sd, td), sameJSON(sd, bd):
		return false, nil
	case sameJSON(td, bd):
		apply = sd
	default:
		c := newConflict(CodeSchema, "", "", "schema", bd, td, sd)
		c.Message = "Both branches changed the schema differently; resolve this before the data can merge."
		m.add(c)
		r := m.resolution(c)
		if r == nil {
			m.out.unresolved = append(m.out.unresolved, c)
			return true, nil
		}
		switch r.Choice {
		case ChoiceTarget:
			return false, nil
		case ChoiceSource:
			apply = sd
		case ChoiceValue:
			v, err := decodeAny(r.Value)
			if err != nil {
				return false, invalid("value", "invalid_json", "The schema resolution's value must be a schema document.")
			}
			apply = v
		}
	}
	if apply == nil {
		return false, nil
	}
	doc, err := json.Marshal(apply)
	if err != nil {
		return false, fmt.Errorf("encode schema: %w", err)
	}
	res, err := e.commits.PutSchemaLocked(ctx, tx, domainID, m.t, doc, m.author(), "Merge the schema of "+m.s.Name)
	if err != nil {
		return false, err
	}
	m.t.Head, m.t.HeadSeq = &res.Revision, res.Seq
	m.schemaRev = res
	return false, nil
}

func (m *mergeState) author() string {
	if m.req.Author != "" {
		return m.req.Author
	}
	return "unknown"
}

// summarize counts the source's changes since the base.
func (m *mergeState) summarize() {
	for _, k := range m.keys {
		b, s := m.b[k], m.src[k]
		switch {
		case sameRec(b, s):
		case b == nil:
			m.out.summary.Records.Added++
		case s == nil:
			m.out.summary.Records.Removed++
		default:
			m.out.summary.Records.Updated++
		}
	}
	for _, l := range m.links {
		if m.ls[l] != m.lb[l] {
			if m.ls[l] {
				m.out.summary.Links.Added++
			} else {
				m.out.summary.Links.Removed++
			}
		}
	}
}

// mergeRecords merges every candidate Record three ways.
func (m *mergeState) mergeRecords() {
	m.merged = make(map[string]*rec, len(m.keys))
	for _, k := range m.keys {
		b, s, t := m.b[k], m.src[k], m.tgt[k]
		switch {
		case sameRec(s, t), sameRec(s, b):
			m.merged[k] = t
			continue
		case sameRec(t, b):
			m.merged[k] = s
			continue
		}
		var code string
		switch {
		case b == nil || (s != nil && t != nil && s.Kind != t.Kind):
			code = CodeAddAdd
		case s == nil:
			code = CodeDeleteUpdate
		case t == nil:
			code = CodeUpdateDelete
		}
		if code != "" {
			kind := firstKind(s, t, b)
			c := newConflict(code, kind, k, "", b.body(), t.body(), s.body())
			m.add(c)
			m.merged[k] = t
			r := m.resolution(c)
			if r == nil {
				m.out.unresolved = append(m.out.unresolved, c)
				continue
			}
			m.resolved[k] = append(m.resolved[k], c.ID)
			switch r.Choice {
			case ChoiceSource:
				m.merged[k] = s
			case ChoiceValue:
				m.merged[k] = recordValue(r.Value, kind)
			}
			continue
		}
		// Both changed the Record: merge its Attributes one by one.
		vals := map[string]any{}
		var bv map[string]any
		if b != nil && b.Kind == t.Kind {
			bv = b.Values
		}
		names := map[string]bool{}
		for a := range s.Values {
			names[a] = true
		}
		for a := range t.Values {
			names[a] = true
		}
		for a := range bv {
			names[a] = true
		}
		for _, a := range sortedKeys(names) {
			x, y, z := bv[a], s.Values[a], t.Values[a]
			var v any
			switch {
			case sameJSON(y, z), sameJSON(y, x):
				v = z
			case sameJSON(z, x):
				v = y
			default:
				c := newConflict(CodeAttribute, t.Kind, k, a, x, z, y)
				m.add(c)
				v = z
				r := m.resolution(c)
				if r == nil {
					m.out.unresolved = append(m.out.unresolved, c)
					break
				}
				m.resolved[k] = append(m.resolved[k], c.ID)
				switch r.Choice {
				case ChoiceSource:
					v = y
				case ChoiceValue:
					v, _ = decodeAny(r.Value)
				}
			}
			if v != nil {
				vals[a] = v
			}
		}
		m.merged[k] = &rec{Kind: t.Kind, Values: vals, Branch: t.Branch, Seq: t.Seq}
	}
}

func firstKind(rs ...*rec) string {
	for _, r := range rs {
		if r != nil {
			return r.Kind
		}
	}
	return ""
}

// recordValue decodes a record-level resolution value: null (absent) or
// {"kind", "values"}. CheckValue has checked its shape.
func recordValue(raw json.RawMessage, kind string) *rec {
	v, err := decodeAny(raw)
	obj, _ := v.(map[string]any)
	if err != nil || obj == nil {
		return nil
	}
	r := &rec{Kind: kind, Values: map[string]any{}}
	if k, ok := obj["kind"].(string); ok && k != "" {
		r.Kind = k
	}
	if vals, ok := obj["values"].(map[string]any); ok {
		r.Values = vals
	}
	return r
}

// CheckValue checks the shape of a resolution's value for a conflict code.
func CheckValue(code string, raw json.RawMessage) error {
	if len(raw) == 0 {
		return invalid("value", "required", "A value resolution needs a value.")
	}
	v, err := decodeAny(raw)
	if err != nil {
		return invalid("value", "invalid_json", "value must be JSON.")
	}
	switch code {
	case CodeAddAdd, CodeDeleteUpdate, CodeUpdateDelete:
		if v == nil {
			return nil
		}
		obj, ok := v.(map[string]any)
		if !ok {
			return invalid("value", "invalid_value", `The value of a Record conflict is null (no Record) or {"kind": ..., "values": {...}}.`)
		}
		if _, ok := obj["values"].(map[string]any); !ok {
			return invalid("value", "invalid_value", `The value of a Record conflict needs "values": an object of Attribute values.`)
		}
	case CodeSchema:
		if _, ok := v.(map[string]any); !ok {
			return invalid("value", "invalid_value", "The value of a schema conflict is a schema document (an object).")
		}
	case CodeLinkCardinality:
		if s, ok := v.(string); !ok || s == "" {
			return invalid("value", "invalid_value", "The value of a Link cardinality conflict is the key the Link should point to.")
		}
	}
	return nil
}

// mergeLinks merges stored Links as a set: a Link is in the result when
// the side that changed it says so.
func (m *mergeState) mergeLinks() {
	m.mergedL = make(map[linkKey]bool, len(m.links))
	for _, l := range m.links {
		if m.ls[l] != m.lb[l] {
			m.mergedL[l] = m.ls[l]
		} else {
			m.mergedL[l] = m.lt[l]
		}
	}
}

// attribute names the Revisions and authors of conflicts' sides.
func (m *mergeState) attribute() {
	for _, c := range m.out.conflicts {
		if c.Key == "" {
			continue
		}
		if o, ok := m.origins[c.Key]; ok {
			c.Source.Revision, c.Source.Author = o.Revision, o.Author
		}
		if o, ok := m.tOrigins[c.Key]; ok {
			c.Target.Revision, c.Target.Author = o.Revision, o.Author
		}
	}
}

// changeRef says which Record or Link a change of the merge commit writes.
type changeRef struct {
	key  string
	link *linkKey
}

// build lists the changes that turn the target into the merged result:
// puts, unlinks, links, then deletions.
func (m *mergeState) build() ([]commit.Change, []changeRef, error) {
	var puts, dels, links, unlinks []commit.Change
	var putRefs, delRefs, linkRefs, unlinkRefs []changeRef
	for _, k := range m.keys {
		mr, t := m.merged[k], m.tgt[k]
		if sameRec(mr, t) {
			continue
		}
		prov, err := m.provenance(k)
		if err != nil {
			return nil, nil, err
		}
		if mr == nil {
			dels = append(dels, commit.Change{Op: "delete", Key: k, Provenance: prov})
			delRefs = append(delRefs, changeRef{key: k})
			continue
		}
		vals, err := json.Marshal(mr.Values)
		if err != nil {
			return nil, nil, fmt.Errorf("encode values of %q: %w", k, err)
		}
		c := commit.Change{Op: "put", Kind: mr.Kind, Key: k, Values: vals, Provenance: prov}
		if src := m.src[k]; src != nil && sameRec(mr, src) {
			// The source's version whole: its vector serves the merged one.
			c.VectorFrom = src.Seq
		}
		puts = append(puts, c)
		putRefs = append(putRefs, changeRef{key: k})
	}
	lprov, err := json.Marshal(m.withTrace(m.mergeProvenance()))
	if err != nil {
		return nil, nil, fmt.Errorf("encode provenance: %w", err)
	}
	for _, l := range m.links {
		if m.mergedL[l] == m.lt[l] {
			continue
		}
		c := commit.Change{Op: "link", Relation: l.Relation, From: l.From, To: l.To, Provenance: lprov}
		ref := changeRef{link: &linkKey{l.From, l.Relation, l.To}}
		if m.mergedL[l] {
			links, linkRefs = append(links, c), append(linkRefs, ref)
		} else {
			c.Op = "unlink"
			unlinks, unlinkRefs = append(unlinks, c), append(unlinkRefs, ref)
		}
	}
	changes := append(append(append(puts, unlinks...), links...), dels...)
	refs := append(append(append(putRefs, unlinkRefs...), linkRefs...), delRefs...)
	return changes, refs, nil
}

// mergeProvenance is what every change of the merge says about the merge.
func (m *mergeState) mergeProvenance() map[string]any {
	p := map[string]any{"merged_from": m.s.Name}
	if m.req.Proposal != "" {
		p["proposal"] = m.req.Proposal
	}
	return p
}

// withTrace names the merge's trace at the top of a provenance object, as
// a commit under a trace does.
func (m *mergeState) withTrace(p map[string]any) map[string]any {
	if m.req.Trace != "" {
		p["trace"] = m.req.Trace
	}
	return p
}

// provenance of the change of key k: the merge, and the source's change
// (its Revision, author and provenance) when the source wrote the value.
func (m *mergeState) provenance(k string) (json.RawMessage, error) {
	p := m.mergeProvenance()
	if o, ok := m.origins[k]; ok {
		p["source_revision"] = o.Revision
		p["source_author"] = o.Author
		if len(o.Provenance) > 0 && string(o.Provenance) != "null" {
			p["source_provenance"] = o.Provenance
		}
	}
	if ids := m.resolved[k]; len(ids) > 0 {
		p["resolved"] = ids
	}
	return json.Marshal(m.withTrace(p))
}

// validate runs the merged result through the commit validator against
// the target's head, turning what it finds into conflicts; resolved ones
// change the result and the validator runs again. With write and nothing
// unresolved, the last run writes the merge Revision.
func (e *Engine) validate(ctx context.Context, tx pgx.Tx, domainID int32, m *mergeState, write bool) error {
	const maxRounds = 8
	for round := 0; round < maxRounds; round++ {
		changes, refs, err := m.build()
		if err != nil {
			return err
		}
		m.out.changes = len(changes)
		if len(changes) == 0 {
			return nil
		}
		dry := !write || len(m.out.unresolved) > 0
		msg := m.req.Message
		if msg == "" {
			msg = "Merge " + m.s.Name + " into " + m.t.Name
			if m.req.Proposal != "" {
				msg = "Merge proposal " + m.req.Proposal + ": " + m.s.Name + " into " + m.t.Name
			}
		}
		prov, err := json.Marshal(m.withTrace(map[string]any{"merge": m.mergeProvenance()}))
		if err != nil {
			return fmt.Errorf("encode provenance: %w", err)
		}
		creq := &commit.Request{Message: msg, Author: m.author(), Provenance: prov, Changes: changes}
		var extra []string
		if m.s.Head != nil {
			extra = []string{*m.s.Head}
		}
		res, err := e.commits.CommitLocked(ctx, tx, domainID, m.t, creq, extra, dry)
		var inv *lberr.Error
		if errors.As(err, &inv) && inv.Kind == lberr.Unprocessable {
			progressed, err := m.violations(inv, changes, refs)
			if err != nil {
				return err
			}
			if !progressed {
				return nil
			}
			continue
		}
		if err != nil {
			return err
		}
		if !dry {
			m.out.result = &Result{Revision: res.Revision, Parents: res.Parents, FastForward: m.out.fastForward, Changes: res.Changes}
		}
		return nil
	}
	return invalid("", "merge_unsettled", "The merge's resolutions keep producing new violations; resolve the listed conflicts and retry.")
}

// violationCode maps a validator problem code to a conflict code.
func violationCode(code string, link bool) string {
	switch code {
	case "unique":
		return CodeUnique
	case "required_link":
		return CodeRequiredLink
	case "unknown_ref", "ref_kind":
		return CodeDanglingRef
	case "unknown_record", "relation_kind":
		if link {
			return CodeDanglingRef
		}
	case "still_linked":
		return CodeLinkedDelete
	case "cardinality":
		return CodeLinkCardinality
	}
	return ""
}

// violations turns the validator's problems into conflicts and applies
// their resolutions. progressed: the merged result changed, validate
// again. Problems that are not violations of the merge are a 422 naming
// the keys.
func (m *mergeState) violations(inv *lberr.Error, changes []commit.Change, refs []changeRef) (bool, error) {
	progressed := false
	var other []lberr.Problem
	for _, p := range inv.Problems {
		if p.Index == nil || *p.Index < 0 || *p.Index >= len(refs) {
			other = append(other, p)
			continue
		}
		ref := refs[*p.Index]
		code := violationCode(p.Code, ref.link != nil)
		if code == "" {
			q := p
			q.Index = nil
			q.Field = "records." + refKey(ref)
			q.Message = "Record " + quoteKey(refKey(ref)) + ": " + p.Message
			other = append(other, q)
			continue
		}
		c := m.violationConflict(code, ref, p)
		if known := m.byID[c.ID]; known != nil {
			// Known: unresolved, or its resolution still violates.
			if !slices.Contains(m.out.unresolved, known) {
				known.Message = p.Message + " The chosen resolution still violates it."
				known.Resolution = nil
				m.out.unresolved = append(m.out.unresolved, known)
			}
			continue
		}
		m.add(c)
		r := m.resolution(c)
		if r == nil {
			m.out.unresolved = append(m.out.unresolved, c)
			continue
		}
		m.applyViolation(c, ref, r)
		progressed = true
	}
	if len(other) > 0 {
		return false, &lberr.Error{Kind: lberr.Unprocessable, Title: "the merged result violates the schema or the data", Problems: other}
	}
	return progressed, nil
}

func refKey(r changeRef) string {
	if r.link != nil {
		return r.link.From
	}
	return r.key
}

func quoteKey(k string) string {
	b, _ := json.Marshal(k)
	return string(b)
}

// violationConflict builds the conflict of a validator problem.
func (m *mergeState) violationConflict(code string, ref changeRef, p lberr.Problem) *Conflict {
	var c *Conflict
	if ref.link != nil {
		l := *ref.link
		var targets []any
		for _, x := range m.links {
			if x.From == l.From && x.Relation == l.Relation && x != l && m.lt[x] {
				targets = append(targets, x.To)
			}
		}
		kind := firstKind(m.merged[l.From], m.tgt[l.From])
		c = newConflict(code, kind, l.From, l.Relation, nil, targets, l.To)
		c.Relation, c.Attribute = l.Relation, ""
		c.link = &l
	} else {
		k := ref.key
		attr := ""
		if i := strings.Index(p.Field, ".values."); i >= 0 {
			attr = p.Field[i+len(".values."):]
		}
		mr, t, b := m.merged[k], m.tgt[k], m.b[k]
		kind := firstKind(mr, t, b)
		if attr != "" && (code == CodeUnique || code == CodeDanglingRef) {
			c = newConflict(code, kind, k, attr, valueOf(b, attr), valueOf(t, attr), valueOf(mr, attr))
		} else {
			c = newConflict(code, kind, k, "", b.body(), t.body(), mr.body())
		}
		if o, ok := m.origins[k]; ok {
			c.Source.Revision, c.Source.Author = o.Revision, o.Author
		}
	}
	c.Message = p.Message
	return c
}

func valueOf(r *rec, attr string) any {
	if r == nil {
		return nil
	}
	return r.Values[attr]
}

// applyViolation changes the merged result as a violation's resolution says.
func (m *mergeState) applyViolation(c *Conflict, ref changeRef, r *Resolution) {
	if ref.link != nil {
		l := *ref.link
		switch r.Choice {
		case ChoiceTarget:
			m.mergedL[l] = m.lt[l]
		case ChoiceSource, ChoiceValue:
			keep := l
			if r.Choice == ChoiceValue {
				v, _ := decodeAny(r.Value)
				s, _ := v.(string)
				keep = linkKey{l.From, l.Relation, s}
			}
			for _, x := range m.links {
				if x.From == l.From && x.Relation == l.Relation && x != keep {
					m.mergedL[x] = false
				}
			}
			if !m.linkSet[keep] {
				m.linkSet[keep] = true
				m.links = append(m.links, keep)
			}
			m.mergedL[keep] = true
		}
		return
	}
	k := ref.key
	switch r.Choice {
	case ChoiceTarget:
		m.merged[k] = m.tgt[k]
	case ChoiceValue:
		if c.Attribute == "" || m.merged[k] == nil {
			return
		}
		v, _ := decodeAny(r.Value)
		nr := *m.merged[k]
		nr.Values = maps.Clone(nr.Values)
		nr.canon, nr.canonErr = nil, false
		if v == nil {
			delete(nr.Values, c.Attribute)
		} else {
			nr.Values[c.Attribute] = v
		}
		m.merged[k] = &nr
	}
	m.resolved[k] = append(m.resolved[k], c.ID)
}

// sortConflicts orders conflicts by key, then id.
func sortConflicts(cs []*Conflict) {
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].Key != cs[j].Key {
			return cs[i].Key < cs[j].Key
		}
		return cs[i].ID < cs[j].ID
	})
}
