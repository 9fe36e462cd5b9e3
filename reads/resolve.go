package reads

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Candidate is a Record a mention may name, and why: "key" (the mention is
// its key), "title" (its title, ignoring case), "typo" (its words after
// typo correction) or "partial" (some of its words).
type Candidate struct {
	Key    string  `json:"key"`
	Kind   string  `json:"kind"`
	Title  string  `json:"title"`
	Score  float32 `json:"score"`
	Reason string  `json:"reason"`
}

// Candidates are ranked: key, then title, then typo, then partial; by
// score within a reason.
type Candidates struct {
	Candidates []Candidate `json:"candidates"`
}

// Resolve ranks the Records a mention may name (entity resolution), of a
// Kind when kind is set; limit 0 is the search default.
func (r *Reader) Resolve(ctx context.Context, domainID int32, branch, mention, kind string, limitN int) (*Candidates, error) {
	n, err := limit("limit", limitN, r.cfg.SearchDefaultLimit, r.cfg.SearchMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := firstErr(checkBranch(branch), checkText("mention", mention, maxTextChars, true),
		checkName("kind", kind, false)); err != nil {
		return nil, err
	}
	out := &Candidates{Candidates: []Candidate{}}
	err = r.store.Read(ctx, domainID, `SELECT key, kind, title, score, reason FROM lb_resolve($1, $2, $3, $4, $5, $6)`,
		[]any{branch, mention, kind, n, r.cfg.SearchCandidates, r.cfg.PartialCandidates},
		func(rows pgx.Rows) (err error) {
			out.Candidates, err = pgx.CollectRows(rows, pgx.RowToStructByPos[Candidate])
			return err
		})
	if err != nil {
		return nil, translate("resolve", err)
	}
	return out, nil
}
