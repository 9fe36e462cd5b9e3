package reads

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// Revision reads one Revision of the Domain by id, with its changes. An
// unknown id is store.ErrNotFound.
func (r *Reader) Revision(ctx context.Context, domainID int32, id string) (*Revision, error) {
	if err := firstErr(checkRevision("id", id)); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, store.Invalid("id", "required", "id is required")
	}
	var rev *Revision
	err := r.store.Read(ctx, domainID, `SELECT v.id, v.number, v.parents, v.author, v.message, v.at,
			coalesce(b.name, ''), encode(v.hash, 'hex'), v.provenance, v.changes
		FROM revisions v
		LEFT JOIN refs b ON b.domain_id = v.domain_id AND b.id = v.branch_id
		WHERE v.domain_id = lb_domain() AND v.id = $1`, []any{id}, func(rows pgx.Rows) error {
		for rows.Next() {
			var x Revision
			if err := rows.Scan(&x.ID, &x.Seq, &x.Parents, &x.Author, &x.Message, &x.At,
				&x.Branch, &x.Hash, &x.Provenance, &x.Changes); err != nil {
				return err
			}
			if x.Parents == nil {
				x.Parents = []string{}
			}
			rev = &x
		}
		return nil
	})
	if err != nil {
		return nil, translate("read revision", err)
	}
	if rev == nil {
		return nil, fmt.Errorf("read revision %q: %w", id, store.ErrNotFound)
	}
	return rev, nil
}
