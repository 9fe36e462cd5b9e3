package commit

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// CommitLocked applies req to branch b as one step of the caller's
// transaction tx, which is scoped to the Domain and holds b's ref lock
// (store.LockBranch). It validates exactly as Commit does, against b's
// head as tx sees it, and then writes one Revision whose parents are b's
// head followed by extraParents (a merge's source head), stores the
// vectors its changes carry and queues the embedding of its Records
// exactly as Commit does. With dryRun it
// validates and writes nothing. Validation problems come back as a
// *store.InvalidError whose Problems name the change by Index; the
// caller decides whether to roll tx back.
func (p *Pipeline) CommitLocked(ctx context.Context, tx pgx.Tx, domainID int32, b *store.Branch, req *Request, extraParents []string, dryRun bool) (*Result, error) {
	if req == nil {
		return nil, store.Invalid("", "required", "The commit body is missing.")
	}
	var ps problemSet
	changes, commitProv := p.parse(req, &ps)
	if ps.malformed {
		return nil, ps.err()
	}
	if err := customPlans(ctx, tx); err != nil {
		return nil, err
	}
	if !headMatches(req.ExpectedHead, b.Head) {
		return nil, ErrHeadMoved
	}
	sch, err := loadSchema(ctx, tx, b.ID)
	if err != nil {
		return nil, err
	}
	st := &state{sch: sch, records: map[string]*record{}, links: map[linkKey]*link{}}
	if err := p.load(ctx, tx, domainID, b.ID, b.Mode == store.ModeOverlay || b.State == store.StateCopying, st, changes); err != nil {
		return nil, err
	}
	apply(st, changes, &ps)
	if err := check(ctx, tx, domainID, b.ID, st, changes, &ps); err != nil {
		return nil, err
	}
	if !ps.empty() {
		return nil, ps.err()
	}
	vecs := checkVectors(st, changes, &ps)
	if !ps.empty() {
		return nil, ps.err()
	}
	if dryRun {
		return &Result{Parents: append(headList(b.Head), extraParents...), Changes: len(changes)}, nil
	}
	r, err := p.write(ctx, tx, domainID, b, st, changes, req, commitProv, "", extraParents)
	if err != nil {
		if errors.Is(err, ErrHeadMoved) {
			return nil, err
		}
		return nil, fmt.Errorf("commit to branch %q: %w", b.Name, err)
	}
	if err := p.writeVectors(ctx, tx, domainID, b.ID, r.Seq, st, changes, vecs); err != nil {
		return nil, fmt.Errorf("commit to branch %q: %w", b.Name, err)
	}
	if err := p.overlayIndexes(ctx, tx, domainID, b, st); err != nil {
		return nil, err
	}
	return r, nil
}

func headList(head *string) []string {
	if head == nil {
		return []string{}
	}
	return []string{*head}
}
