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
	sql, args := getHeadSQL, []any{branch, key}
	if at != "" {
		sql = `SELECT key, kind, title, "values", coalesce(revision, '') FROM lb_get($1, $2, lb_at_seq($1, $3))`
		args = append(args, at)
	}
	var rec *Record
	scan := func(rows pgx.Rows) error {
		recs, err := pgx.CollectRows(rows, recordRow)
		if len(recs) > 0 {
			rec = &recs[len(recs)-1]
		}
		return err
	}
	// A read at the head whose context asks for the branch's head (an
	// ETag) reads it in the same statement, from the refs row the read
	// looks up anyway, rather than in a statement of its own.
	var head *store.Head
	var found bool
	var headID int32
	var headSeq int64
	if h := store.HeadFrom(ctx); at == "" && h != nil && h.Branch == branch && h.Claim() {
		head, sql = h, getWithHeadSQL
		scan = func(rows pgx.Rows) error {
			for rows.Next() {
				var k, kind, title, rev *string
				var values []byte
				var id *int32
				var seq *int64
				if err := rows.Scan(&k, &kind, &title, &values, &rev, &id, &seq); err != nil {
					return err
				}
				if id != nil && seq != nil {
					found, headID, headSeq = true, *id, *seq
				}
				if k != nil && kind != nil && title != nil {
					rec = &Record{Key: *k, Kind: *kind, Title: *title, Values: values}
					if rev != nil {
						rec.Revision = *rev
					}
				}
			}
			return rows.Err()
		}
	}
	err := r.store.Read(ctx, domainID, sql, args, scan)
	if err != nil {
		return nil, translate("get record", err)
	}
	if head != nil {
		head.Set(found, headID, headSeq)
	}
	if rec == nil {
		return nil, fmt.Errorf("get record %q: record not found: %w", key, store.ErrNotFound)
	}
	return rec, nil
}

// recordRow reads a row of (key, kind, title, values, revision); a NULL
// revision is "".
func recordRow(row pgx.CollectableRow) (Record, error) {
	var x Record
	var rev *string
	err := row.Scan(&x.Key, &x.Kind, &x.Title, &x.Values, &rev)
	if rev != nil {
		x.Revision = *rev
	}
	return x, err
}

// scanRecords appends rows of (key, kind, title, values, revision).
func scanRecords(rows pgx.Rows, into *[]Record) (err error) {
	*into, err = pgx.AppendRows(*into, rows, recordRow)
	return err
}

// getHeadSQL reads a Record at the head of a branch that owns all its rows
// (main, a finished copy) as plain SQL: key and name equalities are
// leakproof, so under row-level security it keeps its primary-key plans,
// and pgx prepares it once per connection, so it is never planned again.
// For every other case (an overlay, a copy still copying, a missing branch
// or Record) the same statement falls back to lb_get, which the one-time
// NOT EXISTS filter runs only then: one round trip either way.
const getHeadSQL = `WITH h AS (
SELECT m.key::text, m.kind::text, m.title, m."values",
       coalesce((SELECT r.id FROM revisions r WHERE r.domain_id = lb_domain() AND r.seq = m.seq), '') AS revision
  FROM refs b
  JOIN mat_records m ON m.domain_id = lb_domain() AND m.branch_id = b.id AND m.key = $2
 WHERE b.domain_id = lb_domain() AND b.name = $1 AND b.mode = 'copy' AND b.state = 'ready' AND NOT m.deleted)
SELECT * FROM h
UNION ALL
SELECT g.key, g.kind, g.title, g."values", coalesce(g.revision, '') FROM lb_get($1, $2, NULL) g
 WHERE NOT EXISTS (SELECT 1 FROM h)`

// getWithHeadSQL is getHeadSQL that also returns the branch's id and head
// sequence number (store.Head) from the refs row it reads: a row of NULL
// Record columns when the branch exists and the Record does not, and no
// row when neither does (lb_get then raises the branch's absence, as for
// getHeadSQL). A branch being deleted has no head (NULL id).
const getWithHeadSQL = `WITH b AS MATERIALIZED (
SELECT id, head_seq, mode = 'copy' AND state = 'ready' AS owns FROM refs
 WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting'),
h AS (
SELECT m.key::text, m.kind::text, m.title, m."values",
       coalesce((SELECT r.id FROM revisions r WHERE r.domain_id = lb_domain() AND r.seq = m.seq), '') AS revision
  FROM b
  JOIN mat_records m ON m.domain_id = lb_domain() AND m.branch_id = b.id AND m.key = $2
 WHERE b.owns AND NOT m.deleted),
g AS (
SELECT * FROM h
UNION ALL
SELECT g.key, g.kind, g.title, g."values", coalesce(g.revision, '') FROM lb_get($1, $2, NULL) g
 WHERE NOT EXISTS (SELECT 1 FROM h))
SELECT g.*, b.id, b.head_seq FROM g FULL JOIN b ON true`
