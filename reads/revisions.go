package reads

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// revisionsSQL reads a page of a branch's log in one statement: the
// branch's own Revisions up to its head, then its base's up to the fork,
// and so on down the bases (lv: each branch with its cut). Its first row
// always exists and says whether the branch and the before Revision exist;
// the log entries follow (a row with a NULL id when none).
const revisionsSQL = `WITH RECURSIVE lv AS (
    SELECT r.id, r.base_id, r.fork_seq, r.head_seq AS cut, 1 AS n FROM refs r
     WHERE r.domain_id = lb_domain() AND r.name = $1 AND r.state <> 'deleting'
    UNION ALL
    SELECT p.id, p.base_id, p.fork_seq, least(lv.cut, coalesce(lv.fork_seq, 0)), lv.n + 1
      FROM lv JOIN refs p ON p.domain_id = lb_domain() AND p.id = lv.base_id
     WHERE lv.n < 64),
bf AS (
    SELECT seq FROM revisions WHERE domain_id = lb_domain() AND id = $2)
SELECT EXISTS (SELECT 1 FROM lv), ($2 = '' OR EXISTS (SELECT 1 FROM bf)),
       r.id, r.number, r.parents, r.author, r.message, coalesce(r.at, 'epoch')
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (
    SELECT x.* FROM lv CROSS JOIN LATERAL (
        SELECT v.id, v.seq, v.number, v.parents, v.author, v.message, v.at FROM revisions v
         WHERE v.domain_id = lb_domain() AND v.branch_id = lv.id AND v.seq <= lv.cut
           AND v.seq < coalesce((SELECT seq FROM bf), 9223372036854775807)
         ORDER BY v.seq DESC
         LIMIT $3) x
     WHERE ($2 = '' OR EXISTS (SELECT 1 FROM bf))
     ORDER BY x.seq DESC
     LIMIT $3) r ON true
 ORDER BY r.seq DESC`

// Revisions reads a branch's log, newest first, before a Revision id
// ("" for the head): its own Revisions, then its base's up to the fork, and
// so on. Next is the id to pass as before when more follow.
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
