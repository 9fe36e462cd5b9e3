package reads

import (
	"context"
	"encoding/json"
	"time"

	"github.com/jackc/pgx/v5"
)

// HistoryEntry is one change of a Record: values are the Record's values
// after it (null for a delete); provenance is the change's own, else its
// commit's.
type HistoryEntry struct {
	Revision   string          `json:"revision"`
	Seq        int64           `json:"seq"`
	Op         string          `json:"op"`
	Values     json.RawMessage `json:"values"`
	Author     string          `json:"author"`
	Message    string          `json:"message"`
	At         time.Time       `json:"at"`
	Provenance json.RawMessage `json:"provenance"`
}

// History is a page of a Record's changes, newest first; Next is the
// Revision id to pass as before when more follow.
type History struct {
	Entries []HistoryEntry `json:"entries"`
	Next    string         `json:"next,omitempty"`
}

// History reads the changes of a Record (deleted ones too), newest first,
// before a Revision id of the Domain ("" for the newest). A key that never
// existed on the branch is store.ErrNotFound, as is an unknown before.
func (r *Reader) History(ctx context.Context, domainID int32, branch, key string, limitN int, before string) (*History, error) {
	n, err := limit("limit", limitN, r.cfg.HistoryDefaultLimit, r.cfg.HistoryMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := firstErr(checkBranch(branch), checkKey("key", key), checkRevision("before", before)); err != nil {
		return nil, err
	}
	out := &History{Entries: []HistoryEntry{}}
	err = r.store.Read(ctx, domainID, historySQL, []any{branch, key, before, n + 1, domainID},
		func(rows pgx.Rows) error {
			for rows.Next() {
				var e HistoryEntry
				if err := rows.Scan(&e.Revision, &e.Seq, &e.Op, &e.Values, &e.Author, &e.Message, &e.At, &e.Provenance); err != nil {
					return err
				}
				if e.Values == nil {
					e.Values = json.RawMessage("null")
				}
				if e.Provenance == nil {
					e.Provenance = json.RawMessage("null")
				}
				out.Entries = append(out.Entries, e)
			}
			return nil
		})
	if err != nil {
		return nil, translate("read history", err)
	}
	if len(out.Entries) > n {
		out.Entries = out.Entries[:n]
		out.Next = out.Entries[n-1].Revision
	}
	return out, nil
}

// historySQL reads a page of a Record's history as plain SQL, without
// lb_history's PL/pgSQL (the levels resolved three times a call, the page's
// statement built and planned each call), on the two kinds of branch nearly
// every read meets: a branch that owns all its rows (main, a finished copy),
// and an overlay, or a copy still copying, over such a branch, whose levels
// and cuts it reads from refs (baseLevelCTE) as lb_history_sql resolves them (the
// overlay's own rows, then the base's up to the fork; a version both hold
// is the overlay's). pgx prepares it once per connection. When it finds no
// entry (a key that never existed: lb_history raises it; a page past the
// end), and on every other branch (a deeper chain of overlays, a missing
// one), lb_history answers instead, in the same statement. The history's
// rows are read with the Domain as a parameter ($5, the Domain in scope),
// not lb_domain(), for the reason Reader.Get gives.
const historySQL = `WITH b AS MATERIALIZED (
SELECT id, head_seq, mode, state, base_id, fork_seq, mode = 'copy' AND state = 'ready' AS owns,
       CASE WHEN $3::text = '' THEN 9223372036854775807 ELSE coalesce(lb_rev_seq($3), 9223372036854775807) END AS before_seq
  FROM refs
 WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting' AND $4::int BETWEEN 1 AND 10001),
` + baseLevelCTE + `,
lv AS MATERIALIZED (
SELECT 1 AS lvl, b.id AS branch_id, 9223372036854775807 AS cut, b.before_seq FROM b WHERE b.owns
UNION ALL
SELECT v.lvl, v.branch_id, v.cut, b.before_seq
  FROM b, bl
 CROSS JOIN LATERAL (VALUES (1, b.id, b.head_seq), (2, bl.id, bl.cut)) v(lvl, branch_id, cut)),
e AS MATERIALIZED (
SELECT x.revision_id AS revision, x.seq, x.op, x."values", r.author, r.message, r.at, coalesce(x.provenance, r.provenance) AS provenance
  FROM (SELECT DISTINCT ON (u.seq) u.*
          FROM (SELECT lv.lvl, h.* FROM lv
                 CROSS JOIN LATERAL (SELECT * FROM mat_history h
                        WHERE h.domain_id = $5::int AND h.branch_id = lv.branch_id AND h.key = $2 AND h.seq <= lv.cut
                          AND h.seq < lv.before_seq
                        ORDER BY h.seq DESC LIMIT $4) h) u
         ORDER BY u.seq DESC, u.lvl LIMIT $4) x
  LEFT JOIN revisions r ON r.domain_id = lb_domain() AND r.seq = x.seq),
p AS (
SELECT * FROM e
UNION ALL
SELECT * FROM lb_history($1, $2, lb_rev_seq($3), $4) WHERE NOT EXISTS (SELECT 1 FROM e))
SELECT p.revision,
       coalesce((SELECT r.number FROM revisions r WHERE r.domain_id = lb_domain() AND r.id = p.revision), 0),
       p.op, p."values", coalesce(p.author, ''), coalesce(p.message, ''), coalesce(p.at, 'epoch'), p.provenance
  FROM p
 ORDER BY p.seq DESC`
