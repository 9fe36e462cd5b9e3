package reads

import (
	"context"
	"fmt"
	"sync"

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
	if at != "" {
		var rec *Record
		err := r.store.Read(ctx, domainID,
			`SELECT key, kind, title, "values", coalesce(revision, '') FROM lb_get($1, $2, lb_at_seq($1, $3))`,
			[]any{branch, key, at}, func(rows pgx.Rows) error {
				recs, err := pgx.CollectRows(rows, recordRow)
				if len(recs) > 0 {
					rec = &recs[len(recs)-1]
				}
				return err
			})
		if err != nil {
			return nil, translate("get record", err)
		}
		if rec == nil {
			return nil, fmt.Errorf("get record %q: record not found: %w", key, store.ErrNotFound)
		}
		return rec, nil
	}
	// A branch that owns all its rows (nearly every read) is read by
	// getOwnedSQL, whose plan holds nothing but the refs row and the
	// Record's primary key; a branch the Reader has seen read through
	// levels (an overlay, a copy still copying) by getLevelsSQL. Both
	// answer every branch exactly (getOwnedSQL through lb_get), so a stale
	// hint costs time, never a wrong answer, and each statement's owns
	// column corrects it.
	//
	// Both name the Domain of the Record's rows as a parameter ($3, the
	// Domain in scope, which row-level security checks again), not as
	// lb_domain(). A pooled connection keeps a statement's generic plan
	// from its sixth execution, made under whichever Domain is in scope
	// then, and the planner evaluates lb_domain() for its estimates: under
	// a small Domain the statistics do not know, every partition's Domain
	// was estimated at a row, and the kept plan read a large Domain's
	// partition by the Domain alone, filtering for the key (a get at 10M
	// took 6 s). A parameter is unknown to the generic plan and known to
	// each custom one, and it still lets the executor prune the other
	// partitions before it starts (TestKeptPlansOfAnotherDomainProbeByKey).
	hint := levelsHint{domainID, branch}
	sql := getOwnedSQL
	if r.levels.Contains(hint) {
		sql = getLevelsSQL
	}
	// A read at the head whose context asks for the branch's head (an
	// ETag) takes it from the refs row the statement reads, rather than
	// from a statement of its own.
	var head *store.Head
	if h := store.HeadFrom(ctx); h != nil && h.Branch == branch && h.Claim() {
		head = h
	}
	var rec *Record
	var found, owns bool
	var headID int32
	var headSeq int64
	err := r.store.Read(ctx, domainID, sql, []any{branch, key, domainID}, func(rows pgx.Rows) error {
		for rows.Next() {
			var k, kind, title, rev *string
			var values []byte
			var id *int32
			var seq *int64
			var own *bool
			if err := rows.Scan(&k, &kind, &title, &values, &rev, &id, &seq, &own); err != nil {
				return err
			}
			if id != nil && seq != nil {
				found, headID, headSeq = true, *id, *seq
			}
			if own != nil {
				owns = *own
			}
			if k != nil && kind != nil && title != nil {
				rec = &Record{Key: *k, Kind: *kind, Title: *title, Values: values}
				if rev != nil {
					rec.Revision = *rev
				}
			}
		}
		return rows.Err()
	})
	if err != nil {
		return nil, translate("get record", err)
	}
	switch {
	case found && owns && sql == getLevelsSQL:
		r.levels.Remove(hint)
	case found && !owns && sql == getOwnedSQL:
		r.levels.Add(hint)
	}
	if head != nil {
		head.Set(found, headID, headSeq)
	}
	if rec == nil {
		return nil, fmt.Errorf("get record %q: record not found: %w", key, store.ErrNotFound)
	}
	return rec, nil
}

// levelsHint names a branch of a Domain in Reader.levels.
type levelsHint struct {
	domain int32
	branch string
}

// levelsHints is a set of branches, at most maxLevelsHints; past it the
// set starts over (each branch forgotten is read once more by
// getOwnedSQL, through lb_get, and noted again).
type levelsHints struct {
	mu sync.RWMutex
	m  map[levelsHint]struct{}
}

// maxLevelsHints bounds levelsHints.
const maxLevelsHints = 4096

// Contains reports whether the branch is in the set.
func (l *levelsHints) Contains(h levelsHint) bool {
	l.mu.RLock()
	defer l.mu.RUnlock()
	_, ok := l.m[h]
	return ok
}

// Add puts the branch in the set.
func (l *levelsHints) Add(h levelsHint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if len(l.m) >= maxLevelsHints {
		clear(l.m)
	}
	l.m[h] = struct{}{}
}

// Remove takes the branch out of the set.
func (l *levelsHints) Remove(h levelsHint) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.m, h)
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

// getOwnedSQL reads a Record at the head of a branch that owns all its
// rows (main, a finished copy) as plain SQL, without lb_get's PL/pgSQL:
// the branch's refs row and the Record's primary key, nothing else in the
// plan, so the generic plan a prepared statement keeps locks few
// relations (all in the fast path) and starts few nodes. Its rows are
// (key, kind, title, values, revision, branch id, head seq, owns): a row
// of the branch (NULL Record columns when the Record is missing or the
// branch does not own its rows), then, for a branch that does not own its
// rows or is missing, lb_get's answer with NULL branch columns (lb_get
// raises the branch's absence). A branch being deleted has no row of its
// own. The branch is read from refs in the same statement, so a branch
// deleted, recreated or switched between overlay and copy is read as it
// is now. $3 is the Domain in scope (Get says why).
const getOwnedSQL = `WITH b AS MATERIALIZED (
SELECT id, head_seq, mode = 'copy' AND state = 'ready' AS owns FROM refs
 WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting')
SELECT m.key::text, m.kind::text, m.title, m."values",
       coalesce((SELECT r.id FROM revisions r WHERE r.domain_id = lb_domain() AND r.seq = m.seq), '') AS revision,
       b.id, b.head_seq, b.owns
  FROM b
  LEFT JOIN mat_records m ON b.owns AND m.domain_id = $3::int AND m.branch_id = b.id AND m.key = $2 AND NOT m.deleted
UNION ALL
SELECT g.key, g.kind, g.title, g."values", coalesce(g.revision, ''), NULL, NULL, NULL FROM lb_get($1, $2, NULL) g
 WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.owns)`

// getLevelsSQL reads a Record at the head of a branch as plain SQL for
// the two kinds of branch nearly every read meets (its rows are
// getOwnedSQL's):
//
//   - a branch that owns all its rows (main, a finished copy): its row;
//   - an overlay, or a copy still copying, over a branch that owns all its
//     rows: the branch's own row when it has one, else the base's row as
//     of the fork (its row at or before the cut, else its newest history
//     version at or before it), the rule of lb_record_say over the levels
//     lb_levels and lb_level_cuts give, exactly as lb_get answers.
//
// The branch is b and its base bl (baseLevelCTE, as the history page
// reads them), and the base is probed only when the branch has no row of
// its own for the key: at most two primary-key probes of mat_records and,
// for a Record the base changed after the fork, one of the history. Key
// and name equalities are leakproof, so under row-level security it keeps
// its primary-key plans, and pgx prepares it once per connection, so it is
// never planned again. Every other case (a deeper chain of overlays, a
// missing branch) falls back to lb_get, which the one-time NOT EXISTS
// filter runs only then: one round trip either way. Its plan names the
// history's partitions even when it does not read them, so a branch that
// owns its rows is read by getOwnedSQL.
const getLevelsSQL = `WITH b AS MATERIALIZED (
SELECT id, head_seq, mode, state, base_id, fork_seq, mode = 'copy' AND state = 'ready' AS owns FROM refs
 WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting'),
` + baseLevelCTE + `,
u AS MATERIALIZED (
SELECT m.key::text, m.kind::text, m.title, m."values", m.seq, m.deleted
  FROM b
  JOIN mat_records m ON m.domain_id = $3::int AND m.branch_id = b.id AND m.key = $2
 WHERE b.owns OR EXISTS (SELECT 1 FROM bl)),
r AS (
SELECT * FROM u
UNION ALL
SELECT m.key::text,
       CASE WHEN m.seq <= bl.cut THEN m.kind ELSE h.kind END::text,
       CASE WHEN m.seq <= bl.cut THEN m.title ELSE h.title END,
       CASE WHEN m.seq <= bl.cut THEN m."values" ELSE h."values" END,
       CASE WHEN m.seq <= bl.cut THEN m.seq ELSE h.seq END,
       CASE WHEN m.seq <= bl.cut THEN m.deleted ELSE h.op = 'delete' END
  FROM bl
  JOIN mat_records m ON m.domain_id = $3::int AND m.branch_id = bl.id AND m.key = $2
  LEFT JOIN LATERAL (SELECT h.op, h.kind, h.title, h."values", h.seq FROM mat_history h
         WHERE m.seq > bl.cut AND h.domain_id = $3::int AND h.branch_id = bl.id AND h.key = m.key AND h.seq <= bl.cut
         ORDER BY h.seq DESC LIMIT 1) h ON true
 WHERE NOT EXISTS (SELECT 1 FROM u) AND (m.seq <= bl.cut OR h.seq IS NOT NULL))
SELECT r.key, r.kind, r.title, r."values",
       coalesce((SELECT rv.id FROM revisions rv WHERE rv.domain_id = lb_domain() AND rv.seq = r.seq), '') AS revision,
       b.id, b.head_seq, b.owns
  FROM b
  LEFT JOIN r ON NOT r.deleted
UNION ALL
SELECT g.key, g.kind, g.title, g."values", coalesce(g.revision, ''), NULL, NULL, NULL FROM lb_get($1, $2, NULL) g
 WHERE NOT EXISTS (SELECT 1 FROM b WHERE b.owns) AND NOT EXISTS (SELECT 1 FROM bl)`

// baseLevelCTE is the common table expression bl of the plain-SQL reads:
// the base level of branch b (a CTE of the reading statement: its refs
// row) when b is an overlay, or a copy still copying, over a branch that
// owns all its rows, as lb_levels resolves it: the base's id, the cut it is
// read at (the fork, or b's head if lower) and its head. No row for any
// other branch.
const baseLevelCTE = `bl AS (
SELECT x.id, least(b.head_seq, coalesce(b.fork_seq, 0)) AS cut, x.head_seq
  FROM b
  JOIN refs x ON x.domain_id = lb_domain() AND x.id = b.base_id
 WHERE (b.mode = 'overlay' OR b.state = 'copying') AND (x.base_id IS NULL OR NOT (x.mode = 'overlay' OR x.state = 'copying')))`
