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
	err = r.store.Read(ctx, domainID, `SELECT h.revision,
			coalesce((SELECT r.number FROM revisions r WHERE r.domain_id = lb_domain() AND r.id = h.revision), 0),
			h.op, h."values", coalesce(h.author, ''), coalesce(h.message, ''), coalesce(h.at, 'epoch'), h.provenance
		FROM lb_history($1, $2, lb_rev_seq($3), $4) h`, []any{branch, key, before, n + 1},
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
