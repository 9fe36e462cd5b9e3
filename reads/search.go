package reads

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/jackc/pgx/v5"
)

// SearchQuery is a full-text search.
type SearchQuery struct {
	Q     string // at most 500 characters
	Kind  string // "" for every Kind
	Limit int    // 0 for the default
	At    string // a Revision id of the branch, "" for the head
}

// SearchResult is one matching Record. Match is "full" (every word, or its
// correction) or "partial" (some of the words).
type SearchResult struct {
	Key   string  `json:"key"`
	Kind  string  `json:"kind"`
	Title string  `json:"title"`
	Score float32 `json:"score"`
	Match string  `json:"match"`
}

// SearchResults are the ranked matches, full before partial, and the
// corrections applied to words the branch does not hold. Ranked is the
// number of matching Records the ranking considered; Truncated says those
// were the first matches found rather than the best, so better matches
// than the results may exist. On a branch read at its head with no Kind,
// the words' postings are read best first until no other Record can rank
// higher (a one word query reads its best Records; several words are
// scored Record by Record, at most 32 × Config.SearchCandidates of them,
// or every full match is ranked from the GIN index when a term is in
// fewer Records than 8 × Config.SearchCandidates or the terms, were they
// independent, would meet in fewer than 32 × as many and do; partial
// matches are then ranked tier
// by tier from the postings, at most 10 × Config.PartialCandidates or
// 8 × Config.SearchCandidates Records scored, the larger): exact, not
// truncated unless a budget ran out. Otherwise (a Kind, an overlay, a past Revision) at most
// Config.SearchCandidates full and Config.PartialCandidates partial matches
// are ranked. Full and partial matches rank by ts_rank of the OR of the
// terms (the mean of each word's own rank), full ones first.
type SearchResults struct {
	Results     []SearchResult      `json:"results"`
	Corrections map[string][]string `json:"corrections"`
	// Mode is the search run: text, semantic or hybrid.
	Mode string `json:"mode"`
	// Path is how semantic rankings were found: exact or hnsw (semantic
	// and hybrid only).
	Path string `json:"path,omitempty"`
	// FewerThanLimit: fewer Records than the limit matched.
	FewerThanLimit bool `json:"fewer_than_limit"`
	// Ranked is how many full-text matches were ranked; Truncated: more
	// matched than were ranked, so a better match may be missing (narrow
	// the query). Semantic-only searches rank no text: 0 and false.
	Ranked    int  `json:"ranked"`
	Truncated bool `json:"truncated"`
}

// Search runs a typo-tolerant full-text search: each word of q (the
// 'simple' configuration's lexemes) must match, a word absent from the
// branch's lexicon also matches its closest lexicon words, and when fewer
// than Config.PartialMinResults Records match every word, Records matching
// some follow, marked partial.
func (r *Reader) Search(ctx context.Context, domainID int32, branch string, q SearchQuery) (*SearchResults, error) {
	n, err := limit("limit", q.Limit, r.cfg.SearchDefaultLimit, r.cfg.SearchMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := firstErr(checkBranch(branch), checkText("q", q.Q, maxTextChars, true), checkName("kind", q.Kind, false),
		checkRevision("at", q.At)); err != nil {
		return nil, err
	}
	out := &SearchResults{Results: []SearchResult{}, Corrections: map[string][]string{}}
	err = r.store.Read(ctx, domainID, `SELECT coalesce(key, ''), coalesce(kind, ''), coalesce(title, ''), coalesce(score, 0),
			match, corrections, coalesce(ranked, 0), coalesce(truncated, false)
		FROM lb_search($1, $2, $3, $4, lb_at_seq($1, $5), $6, $7, $8)`,
		[]any{branch, q.Q, q.Kind, n, q.At, r.cfg.SearchCandidates, r.cfg.PartialMinResults, r.cfg.PartialCandidates},
		func(rows pgx.Rows) error {
			for rows.Next() {
				var x SearchResult
				var corr []byte
				var ranked int
				var truncated bool
				if err := rows.Scan(&x.Key, &x.Kind, &x.Title, &x.Score, &x.Match, &corr, &ranked, &truncated); err != nil {
					return err
				}
				if x.Match == "corrections" {
					// The last row carries the totals of every statement.
					out.Ranked, out.Truncated = ranked, truncated
					if err := json.Unmarshal(corr, &out.Corrections); err != nil {
						return fmt.Errorf("decode corrections: %w", err)
					}
					continue
				}
				out.Results = append(out.Results, x)
			}
			return nil
		})
	if err != nil {
		return nil, translate("search", err)
	}
	out.Mode = ModeText
	out.FewerThanLimit = len(out.Results) < n
	return out, nil
}
