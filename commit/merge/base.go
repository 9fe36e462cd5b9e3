package merge

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// span is a range of one branch's Revisions: after seq After, up to seq
// Upto (nil: the head).
type span struct {
	Branch int32  `json:"b"`
	After  int64  `json:"a"`
	Upto   *int64 `json:"u,omitempty"`
}

// base is the merge base of a source and a target: the state of branch
// Branch as of Seq, and per side the spans outside of which that side
// equals the base.
type base struct {
	Branch   int32
	Seq      int64
	Revision *string
	Source   []span
	Target   []span
	// Stored: the pair merged before (merge_bases holds it).
	Stored bool
}

// levels lists the chain of branch id as of seq, following every base:
// branch ids and their cuts.
func levels(ctx context.Context, tx pgx.Tx, id int32, seq int64) ([]int32, []int64, error) {
	var bs []int32
	var cs []int64
	err := tx.QueryRow(ctx, `SELECT bs, cs FROM lb_levels(lb_domain(), $1, $2, true)`, id, seq).Scan(&bs, &cs)
	if err != nil {
		return nil, nil, fmt.Errorf("read branch chain: %w", err)
	}
	return bs, cs, nil
}

// revisionAt names the Revision of seq (nil for seq 0, before any).
func revisionAt(ctx context.Context, tx pgx.Tx, seq int64) (*string, error) {
	if seq == 0 {
		return nil, nil
	}
	var id string
	err := tx.QueryRow(ctx, `SELECT id FROM revisions WHERE domain_id = lb_domain() AND seq = $1`, seq).Scan(&id)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read revision %d: %w", seq, err)
	}
	return &id, nil
}

// findBase resolves the merge base of source s and target t.
func findBase(ctx context.Context, tx pgx.Tx, s, t *store.Branch) (*base, error) {
	if s.ID == t.ID {
		return nil, invalid("from", "same_branch", "A branch cannot be merged into itself.")
	}
	lo, hi := s.ID, t.ID
	if lo > hi {
		lo, hi = hi, lo
	}
	var b base
	var loSpec, hiSpec []byte
	err := tx.QueryRow(ctx, `SELECT base_branch_id, base_seq, base_revision, lo_spec, hi_spec FROM merge_bases
		WHERE domain_id = lb_domain() AND lo_id = $1 AND hi_id = $2`, lo, hi).Scan(&b.Branch, &b.Seq, &b.Revision, &loSpec, &hiSpec)
	switch {
	case err == nil:
		b.Stored = true
		sSpec, tSpec := loSpec, hiSpec
		if s.ID != lo {
			sSpec, tSpec = hiSpec, loSpec
		}
		if err := json.Unmarshal(sSpec, &b.Source); err != nil {
			return nil, fmt.Errorf("decode merge base: %w", err)
		}
		if err := json.Unmarshal(tSpec, &b.Target); err != nil {
			return nil, fmt.Errorf("decode merge base: %w", err)
		}
		return &b, nil
	case !errors.Is(err, pgx.ErrNoRows):
		return nil, fmt.Errorf("read merge base: %w", err)
	}

	// Never merged: the common ancestor of the two chains.
	sb, sc, err := levels(ctx, tx, s.ID, s.HeadSeq)
	if err != nil {
		return nil, err
	}
	tb, tc, err := levels(ctx, tx, t.ID, t.HeadSeq)
	if err != nil {
		return nil, err
	}
	si, ti := -1, -1
	for i, id := range sb {
		for j, jd := range tb {
			if id == jd {
				si, ti = i, j
				break
			}
		}
		if si >= 0 {
			break
		}
	}
	if si < 0 {
		return nil, invalid("from", "unrelated", fmt.Sprintf("Branches %q and %q share no history.", s.Name, t.Name))
	}
	b.Branch = sb[si]
	b.Seq = min(sc[si], tc[ti])
	if b.Revision, err = revisionAt(ctx, tx, b.Seq); err != nil {
		return nil, err
	}
	side := func(bs []int32, cs []int64, n int) []span {
		var out []span
		for i := 0; i < n; i++ {
			sp := span{Branch: bs[i]}
			if i > 0 {
				c := cs[i]
				sp.Upto = &c
			}
			out = append(out, sp)
		}
		if cs[n] > b.Seq {
			sp := span{Branch: bs[n], After: b.Seq}
			if n > 0 {
				c := cs[n]
				sp.Upto = &c
			}
			out = append(out, sp)
		}
		return out
	}
	b.Source = side(sb, sc, si)
	b.Target = side(tb, tc, ti)
	return &b, nil
}

// saveBase records a merge of source s into target t: the new base is the
// source as of its merged head, the source's spans restart there, and the
// target's spans stay (the target may hold changes the source has not).
func saveBase(ctx context.Context, tx pgx.Tx, s, t *store.Branch, old *base) error {
	srcSpec := []span{{Branch: s.ID, After: s.HeadSeq}}
	lo, hi := s.ID, t.ID
	loSpec, hiSpec := any(srcSpec), any(old.Target)
	if lo > hi {
		lo, hi = hi, lo
		loSpec, hiSpec = hiSpec, loSpec
	}
	lj, err := json.Marshal(loSpec)
	if err != nil {
		return fmt.Errorf("encode merge base: %w", err)
	}
	hj, err := json.Marshal(hiSpec)
	if err != nil {
		return fmt.Errorf("encode merge base: %w", err)
	}
	_, err = tx.Exec(ctx, `INSERT INTO merge_bases (domain_id, lo_id, hi_id, base_branch_id, base_seq, base_revision, lo_spec, hi_spec)
		VALUES (lb_domain(), $1, $2, $3, $4, $5, $6::jsonb, $7::jsonb)
		ON CONFLICT (domain_id, lo_id, hi_id) DO UPDATE SET base_branch_id = EXCLUDED.base_branch_id,
			base_seq = EXCLUDED.base_seq, base_revision = EXCLUDED.base_revision,
			lo_spec = EXCLUDED.lo_spec, hi_spec = EXCLUDED.hi_spec, merged_at = now()`,
		lo, hi, s.ID, s.HeadSeq, s.Head, string(lj), string(hj))
	if err != nil {
		return fmt.Errorf("save merge base: %w", err)
	}
	return nil
}

// linkKey names a stored Link.
type linkKey struct{ From, Relation, To string }

// changed is what a side's spans changed: Record keys, stored Links and
// whether the schema changed.
type changed struct {
	keys   map[string]bool
	links  map[linkKey]bool
	schema bool
}

// changedIn reads what the spans changed.
func changedIn(ctx context.Context, tx pgx.Tx, spans []span, into *changed) error {
	if into.keys == nil {
		into.keys, into.links = map[string]bool{}, map[linkKey]bool{}
	}
	for _, sp := range spans {
		rows, err := tx.Query(ctx, `SELECT what, key, relation, to_key FROM lb_merge_changed($1, $2, $3)`, sp.Branch, sp.After, sp.Upto)
		if err != nil {
			return fmt.Errorf("read changes of branch %d: %w", sp.Branch, err)
		}
		var what, key, rel, to string
		if _, err := pgx.ForEachRow(rows, []any{&what, &key, &rel, &to}, func() error {
			switch what {
			case "r":
				into.keys[key] = true
			case "l":
				into.links[linkKey{key, rel, to}] = true
			case "s":
				into.schema = true
			}
			return nil
		}); err != nil {
			return fmt.Errorf("read changes of branch %d: %w", sp.Branch, err)
		}
	}
	return nil
}
