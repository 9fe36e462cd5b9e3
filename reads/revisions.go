package reads

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// revisionsSQL reads a page of a branch's log in one statement. Its first
// row always exists and says whether the branch and the before Revision
// exist; the log entries follow (a row with a NULL id when none).
const revisionsSQL = `WITH b AS (
    SELECT id FROM refs WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting'),
bf AS (
    SELECT seq FROM revisions WHERE domain_id = lb_domain() AND id = $2)
SELECT EXISTS (SELECT 1 FROM b), ($2 = '' OR EXISTS (SELECT 1 FROM bf)),
       r.id, r.seq, r.parents, r.author, r.message, coalesce(r.at, 'epoch')
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (
    SELECT v.id, v.seq, v.parents, v.author, v.message, v.at FROM revisions v
     WHERE v.domain_id = lb_domain() AND v.branch_id = (SELECT id FROM b)
       AND v.seq < coalesce((SELECT seq FROM bf), 9223372036854775807)
       AND ($2 = '' OR EXISTS (SELECT 1 FROM bf))
     ORDER BY v.seq DESC
     LIMIT $3) r ON true
 ORDER BY r.seq DESC`

// Revisions reads a branch's log, newest first, before a Revision id
// ("" for the head). Next is the id to pass as before when more follow.
// An unknown branch or before Revision is store.ErrNotFound.
func (r *Reader) Revisions(ctx context.Context, domainID int32, branch string, limitN int, before string) (*RevisionPage, error) {
	n, err := limit("limit", limitN, r.cfg.PageDefaultLimit, r.cfg.PageMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := firstErr(checkBranch(branch), checkRevision("before", before)); err != nil {
		return nil, err
	}
	p := &RevisionPage{Revisions: []RevisionSummary{}}
	branchFound, beforeFound := false, false
	err = r.store.Read(ctx, domainID, revisionsSQL, []any{branch, before, n + 1}, func(rows pgx.Rows) error {
		for rows.Next() {
			var id *string
			var x RevisionSummary
			var seq *int64
			var author, message *string
			if err := rows.Scan(&branchFound, &beforeFound, &id, &seq, &x.Parents, &author, &message, &x.At); err != nil {
				return err
			}
			if id == nil {
				continue
			}
			x.ID, x.Seq, x.Author, x.Message = *id, *seq, *author, *message
			if x.Parents == nil {
				x.Parents = []string{}
			}
			p.Revisions = append(p.Revisions, x)
		}
		return nil
	})
	if err != nil {
		return nil, translate("list revisions", err)
	}
	if !branchFound {
		return nil, fmt.Errorf("list revisions: branch %q not found: %w", branch, store.ErrNotFound)
	}
	if !beforeFound {
		return nil, fmt.Errorf("list revisions: revision %q not found: %w", before, store.ErrNotFound)
	}
	if len(p.Revisions) > n {
		p.Revisions = p.Revisions[:n]
		p.Next = p.Revisions[n-1].ID
	}
	return p, nil
}
