package reads

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// LinksQuery selects the Links of a Record.
type LinksQuery struct {
	Direction string // "out", "in" or "both" ("" is "both")
	Relation  string // "" for every Relation
	At        string // a Revision id of the branch, "" for the head
}

// Link is one Link: stored (origin "link") or the foreign-key Link of a
// ref Attribute (origin "ref", relation = the Attribute's name).
type Link struct {
	Relation string `json:"relation"`
	From     string `json:"from"`
	To       string `json:"to"`
	Origin   string `json:"origin"`
}

// Links are the Links of a Record.
type Links struct {
	Links []Link `json:"links"`
}

// Links reads the Links of a Record, ordered by relation, from, to. An
// unknown branch, Revision or Record is store.ErrNotFound.
func (r *Reader) Links(ctx context.Context, domainID int32, branch, key string, q LinksQuery) (*Links, error) {
	if q.Direction == "" {
		q.Direction = "both"
	}
	if q.Direction != "out" && q.Direction != "in" && q.Direction != "both" {
		return nil, store.Invalid("direction", "invalid_direction", "direction must be out, in or both")
	}
	if err := firstErr(checkBranch(branch), checkKey("key", key), checkName("relation", q.Relation, false),
		checkRevision("at", q.At)); err != nil {
		return nil, err
	}
	out := &Links{Links: []Link{}}
	err := r.store.Read(ctx, domainID, `SELECT relation, from_key, to_key, origin
		FROM lb_links($1, $2, $3, $4, lb_at_seq($1, $5))`, []any{branch, key, q.Direction, q.Relation, q.At},
		func(rows pgx.Rows) (err error) {
			out.Links, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Link])
			return err
		})
	if err != nil {
		return nil, translate("read links", err)
	}
	return out, nil
}
