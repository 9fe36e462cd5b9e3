package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/store"
)

// DiffSide names a branch and the Revision a diff read it at.
type DiffSide struct {
	Branch   string  `json:"branch"`
	Revision *string `json:"revision"`
}

// AttributeChange is one Attribute's value before and after (null: absent).
type AttributeChange struct {
	Name   string `json:"name"`
	Before any    `json:"before"`
	After  any    `json:"after"`
}

// LinkChange is a stored Link added or removed.
type LinkChange struct {
	Op       string `json:"op"`
	Relation string `json:"relation"`
	From     string `json:"from"`
	To       string `json:"to"`
}

// RecordChange is what happened to one Record: added, updated or removed,
// with its Attributes' before and after and the Links out of it that
// changed.
type RecordChange struct {
	Key        string            `json:"key"`
	Kind       string            `json:"kind"`
	Op         string            `json:"op"`
	Attributes []AttributeChange `json:"attributes"`
	Links      []LinkChange      `json:"links"`
}

// Diff is a keyset page of what a source changed against a base.
type Diff struct {
	Source    DiffSide       `json:"source"`
	Target    DiffSide       `json:"target"`
	MergeBase *string        `json:"merge_base"`
	Summary   Summary        `json:"summary"`
	Changes   []RecordChange `json:"changes"`
	Next      string         `json:"next,omitempty"`
}

// DiffBranches is the diff of branch source against target: what the
// source changed since their merge base, Records after the key after, at
// most limit of them.
func (e *Engine) DiffBranches(ctx context.Context, domainID int32, source, target, after string, limit int) (*Diff, error) {
	var d *Diff
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		s, err := store.ReadBranch(ctx, tx, source)
		if err != nil {
			return fmt.Errorf("source branch %q: %w", source, err)
		}
		t, err := store.ReadBranch(ctx, tx, target)
		if err != nil {
			return fmt.Errorf("target branch %q: %w", target, err)
		}
		b, err := findBase(ctx, tx, s, t)
		if err != nil {
			return err
		}
		head := s.HeadSeq
		d, err = e.diff(ctx, tx, domainID, stateRef{Branch: b.Branch, At: &b.Seq}, stateRef{Branch: s.ID, At: &head}, b.Source, after, limit)
		if err != nil {
			return err
		}
		d.Source = DiffSide{Branch: s.Name, Revision: s.Head}
		d.Target = DiffSide{Branch: t.Name, Revision: t.Head}
		d.MergeBase = b.Revision
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// DiffRevisions is the diff of branch between two Revisions it holds (from
// older, to newer; to "" is the head).
func (e *Engine) DiffRevisions(ctx context.Context, domainID int32, branch, from, to, after string, limit int) (*Diff, error) {
	var d *Diff
	err := e.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		br, err := store.ReadBranch(ctx, tx, branch)
		if err != nil {
			return fmt.Errorf("branch %q: %w", branch, err)
		}
		atSeq := func(field, rev string) (int64, error) {
			var seq *int64
			err := tx.QueryRow(ctx, `SELECT lb_at_seq($1, $2)`, branch, rev).Scan(&seq)
			if err != nil || seq == nil {
				if err != nil && !lberr.IsCode(err, "P0002") && !errors.Is(err, pgx.ErrNoRows) {
					return 0, fmt.Errorf("resolve revision %q: %w", rev, err)
				}
				return 0, &lberr.Error{Kind: lberr.NotFound, Title: "not found", Problems: []lberr.Problem{{Field: field, Code: "not_found",
					Message: fmt.Sprintf("No Revision %s on branch %s.", quoteKey(rev), quoteKey(branch))}}}
			}
			return *seq, nil
		}
		fromSeq, err := atSeq("from", from)
		if err != nil {
			return err
		}
		toSeq := br.HeadSeq
		toRev := br.Head
		if to != "" {
			if toSeq, err = atSeq("to", to); err != nil {
				return err
			}
			toRev = &to
		}
		if fromSeq > toSeq {
			return invalid("from", "order", "from must be a Revision older than to.")
		}
		bs, cs, err := levels(ctx, tx, br.ID, toSeq)
		if err != nil {
			return err
		}
		var spans []span
		for i := range bs {
			if cs[i] > fromSeq {
				c := cs[i]
				spans = append(spans, span{Branch: bs[i], After: fromSeq, Upto: &c})
			}
		}
		toRef := stateRef{Branch: br.ID, At: &toSeq}
		d, err = e.diff(ctx, tx, domainID, stateRef{Branch: br.ID, At: &fromSeq}, toRef, spans, after, limit)
		if err != nil {
			return err
		}
		f := from
		d.Source = DiffSide{Branch: br.Name, Revision: toRev}
		d.Target = DiffSide{Branch: br.Name, Revision: &f}
		d.MergeBase = &f
		return nil
	})
	if err != nil {
		return nil, err
	}
	return d, nil
}

// fullDiff is every change of a source against a base, as a diff page
// slices it.
type fullDiff struct {
	summary Summary
	changes []RecordChange
}

// diffKey names a diff by what fixes its result: the Domain, both states
// (branch and seq) and the spans read. A state as of a seq never changes,
// so a cached diff never goes stale.
func diffKey(domainID int32, base, src stateRef, spans []span) string {
	sp, _ := json.Marshal(spans)
	return fmt.Sprintf("%d|%d@%d|%d@%d|%s", domainID, base.Branch, derefSeq(base.At), src.Branch, derefSeq(src.At), sp)
}

func derefSeq(p *int64) int64 {
	if p == nil {
		return -1
	}
	return *p
}

// diff compares state src with state base over the candidates the spans
// changed. The summary covers every change; the page those after the key
// after. Both states are as of a seq, so the whole diff is computed once
// and later pages slice it from the engine's cache.
func (e *Engine) diff(ctx context.Context, tx pgx.Tx, domainID int32, base, src stateRef, spans []span, after string, limit int) (*Diff, error) {
	key := diffKey(domainID, base, src, spans)
	full, ok := e.diffs.Get(key)
	if !ok {
		var err error
		if full, err = computeDiff(ctx, tx, base, src, spans); err != nil {
			return nil, err
		}
		e.diffs.Add(key, full)
	}
	d := &Diff{Summary: full.summary, Changes: []RecordChange{}}
	i := sort.Search(len(full.changes), func(i int) bool { return full.changes[i].Key > after })
	end := min(i+limit, len(full.changes))
	d.Changes = append(d.Changes, full.changes[i:end]...)
	if end < len(full.changes) && end > i {
		d.Next = full.changes[end-1].Key
	}
	return d, nil
}

// computeDiff computes every change of src against base.
func computeDiff(ctx context.Context, tx pgx.Tx, base, src stateRef, spans []span) (*fullDiff, error) {
	var ch changed
	if err := changedIn(ctx, tx, spans, &ch); err != nil {
		return nil, err
	}
	keySet := map[string]bool{}
	for k := range ch.keys {
		keySet[k] = true
	}
	for l := range ch.links {
		keySet[l.From] = true
	}
	keys := sortedKeys(keySet)
	links := sortedLinks(ch.links)
	bRecs, err := readRecords(ctx, tx, base, keys)
	if err != nil {
		return nil, err
	}
	sRecs, err := readRecords(ctx, tx, src, keys)
	if err != nil {
		return nil, err
	}
	bLinks, err := readLinks(ctx, tx, base, links)
	if err != nil {
		return nil, err
	}
	sLinks, err := readLinks(ctx, tx, src, links)
	if err != nil {
		return nil, err
	}
	linksOf := map[string][]LinkChange{}
	d := &fullDiff{}
	for _, l := range links {
		if bLinks[l] == sLinks[l] {
			continue
		}
		op := "added"
		if sLinks[l] {
			d.summary.Links.Added++
		} else {
			op = "removed"
			d.summary.Links.Removed++
		}
		linksOf[l.From] = append(linksOf[l.From], LinkChange{Op: op, Relation: l.Relation, From: l.From, To: l.To})
	}
	for _, k := range keys {
		b, s := bRecs[k], sRecs[k]
		rc := RecordChange{Key: k, Links: linksOf[k]}
		switch {
		case sameRec(b, s):
			if len(rc.Links) == 0 {
				continue
			}
			rc.Op = "updated"
			rc.Kind = firstKind(s, b)
		case b == nil:
			rc.Op, rc.Kind = "added", s.Kind
			d.summary.Records.Added++
		case s == nil:
			rc.Op, rc.Kind = "removed", b.Kind
			d.summary.Records.Removed++
		default:
			rc.Op, rc.Kind = "updated", s.Kind
			d.summary.Records.Updated++
		}
		rc.Attributes = attributeChanges(b, s)
		if rc.Links == nil {
			rc.Links = []LinkChange{}
		}
		d.changes = append(d.changes, rc)
	}
	return d, nil
}

// attributeChanges lists the Attributes whose values differ, by name.
func attributeChanges(b, s *rec) []AttributeChange {
	var bv, sv map[string]any
	if b != nil {
		bv = b.Values
	}
	if s != nil {
		sv = s.Values
	}
	names := map[string]bool{}
	for a := range bv {
		names[a] = true
	}
	for a := range sv {
		names[a] = true
	}
	out := []AttributeChange{}
	for _, a := range sortedKeys(names) {
		if !sameJSON(bv[a], sv[a]) {
			out = append(out, AttributeChange{Name: a, Before: bv[a], After: sv[a]})
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out
}
