package reads

import (
	"context"
	"fmt"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// revisionSQL reads one Revision with one page of its changes: the
// elements $2 .. $2+$3-1 (0-based) of the stored changes array, sliced by
// one jsonpath call (the array is read once, not once per element).
const revisionSQL = `SELECT v.id, v.number, v.parents, v.author, v.message, v.at,
		coalesce(b.name, ''), encode(v.hash, 'hex'), v.provenance, v.n,
		CASE WHEN $2::int < v.n
		     THEN jsonb_path_query_array(v.changes, '$[$a to $b]',
		              jsonb_build_object('a', $2::int, 'b', least($2::int + $3::int, v.n) - 1))
		     ELSE '[]' END
	FROM (SELECT r.*, jsonb_array_length(r.changes) AS n FROM revisions r
	       WHERE r.domain_id = lb_domain() AND r.id = $1) v
	LEFT JOIN refs b ON b.domain_id = v.domain_id AND b.id = v.branch_id`

// Revision reads one Revision of the Domain by id with a page of its
// changes, in commit order: limitN changes (0: the default page size)
// after the cursor after ("" for the first; else the position of the last
// change already read, as Next gives it). ChangesTotal counts them all;
// Next is set when more follow. An unknown id is store.ErrNotFound.
func (r *Reader) Revision(ctx context.Context, domainID int32, id string, limitN int, after string) (*Revision, error) {
	n, err := limit("limit", limitN, r.cfg.PageDefaultLimit, r.cfg.PageMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := firstErr(checkRevision("id", id)); err != nil {
		return nil, err
	}
	if id == "" {
		return nil, store.Invalid("id", "required", "id is required")
	}
	start := 0
	if after != "" {
		v, err := strconv.Atoi(after)
		if err != nil || v < 0 || v > 1<<30 {
			return nil, store.Invalid("after", "invalid", "after must be the position of a change, as next gives it")
		}
		start = v
	}
	var rev *Revision
	err = r.store.Read(ctx, domainID, revisionSQL, []any{id, start, n}, func(rows pgx.Rows) error {
		for rows.Next() {
			var x Revision
			if err := rows.Scan(&x.ID, &x.Seq, &x.Parents, &x.Author, &x.Message, &x.At,
				&x.Branch, &x.Hash, &x.Provenance, &x.ChangesTotal, &x.Changes); err != nil {
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
	if start+n < rev.ChangesTotal {
		rev.Next = strconv.Itoa(start + n)
	}
	return rev, nil
}
