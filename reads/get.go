package reads

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// Get reads one Record by key; at is a Revision id of the branch ("" for the
// head). A missing Record, branch or Revision is store.ErrNotFound; a
// Record deleted at that Revision is missing.
func (r *Reader) Get(ctx context.Context, domainID int32, branch, key, at string) (*Record, error) {
	if err := firstErr(checkBranch(branch), checkKey("key", key), checkRevision("at", at)); err != nil {
		return nil, err
	}
	var rec *Record
	err := r.store.Read(ctx, domainID, `SELECT key, kind, title, "values", coalesce(revision, '')
		FROM lb_get($1, $2, lb_at_seq($1, $3))`, []any{branch, key, at}, func(rows pgx.Rows) error {
		for rows.Next() {
			var x Record
			if err := rows.Scan(&x.Key, &x.Kind, &x.Title, &x.Values, &x.Revision); err != nil {
				return err
			}
			rec = &x
		}
		return nil
	})
	if err != nil {
		return nil, translate("get record", err)
	}
	if rec == nil {
		return nil, fmt.Errorf("get record %q: record not found: %w", key, store.ErrNotFound)
	}
	return rec, nil
}

// scanRecords reads rows of (key, kind, title, values, revision).
func scanRecords(rows pgx.Rows, into *[]Record) error {
	for rows.Next() {
		var x Record
		var rev *string
		if err := rows.Scan(&x.Key, &x.Kind, &x.Title, &x.Values, &rev); err != nil {
			return err
		}
		if rev != nil {
			x.Revision = *rev
		}
		*into = append(*into, x)
	}
	return nil
}
