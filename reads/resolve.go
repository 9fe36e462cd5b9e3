package reads

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Candidate is a Record a mention may name, and why: "key" (the mention is
// its key), "title" (its title, ignoring case), "typo" (its words after
// typo correction), "partial" (some of its words) or "semantic" (its
// vector is near the mention's, asked for with semantic).
type Candidate struct {
	Key    string  `json:"key"`
	Kind   string  `json:"kind"`
	Title  string  `json:"title"`
	Score  float32 `json:"score"`
	Reason string  `json:"reason"`
}

// Candidates are ranked: key, then title, then typo, then partial, then
// semantic; by score within a reason.
type Candidates struct {
	Candidates []Candidate `json:"candidates"`
}

// Resolve ranks the Records a mention may name (entity resolution), of a
// Kind when kind is set; limit 0 is the search default.
func (r *Reader) Resolve(ctx context.Context, domainID int32, branch, mention, kind string, limitN int) (*Candidates, error) {
	return r.ResolveWith(ctx, domainID, branch, mention, kind, limitN, false)
}

// MinSemanticSimilarity is the cosine similarity a Record's vector must
// reach to be a semantic candidate of a mention.
const MinSemanticSimilarity = 0.5

// ResolveWith is Resolve; with semantic, when the other reasons find fewer
// candidates than the limit, Records of embedded Kinds whose vector is
// near the mention's (cosine similarity at least MinSemanticSimilarity)
// follow with reason "semantic". Without an embedded Kind to search it
// adds nothing.
func (r *Reader) ResolveWith(ctx context.Context, domainID int32, branch, mention, kind string, limitN int, semantic bool) (*Candidates, error) {
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
	if !semantic || len(out.Candidates) >= n {
		return out, nil
	}
	sch, err := r.branchSchema(ctx, domainID, branch)
	if err != nil {
		return nil, err
	}
	if _, err := semanticTargets(sch, SemanticQuery{Q: mention, Kind: kind}); err != nil {
		return out, nil //nolint:nilerr // nothing to search by meaning: no semantic candidates
	}
	sem, err := r.semantic(ctx, domainID, branch, sch, SemanticQuery{Q: mention, Kind: kind}, n)
	if err != nil {
		return nil, err
	}
	seen := make(map[string]bool, len(out.Candidates))
	for _, c := range out.Candidates {
		seen[c.Key] = true
	}
	for _, x := range sem.Results {
		if len(out.Candidates) >= n || x.Score < MinSemanticSimilarity {
			break
		}
		if !seen[x.Key] {
			out.Candidates = append(out.Candidates, Candidate{Key: x.Key, Kind: x.Kind, Title: x.Title, Score: x.Score, Reason: ModeSemantic})
		}
	}
	return out, nil
}
