package reads_test

import (
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestSearchLexiconCountsProbeByWord: the search functions read a few
// words' counts from the lexicon by its primary key, word by word, also
// under the generic plan a session keeps from a statement's sixth call.
// Written as a join of the words to the lexicon, the generic plan (the
// Domain and branch unknown, estimated at a couple of rows by statistics
// that know many branches) hashed the branch's whole lexicon: at 10M
// Records 3,231 buffers and about 1 to 2 ms a statement, growing with the
// vocabulary, in every multi-word and misspelled-word search. Each case
// runs one statement's function as lorebase_app with generic plans forced
// and requires every node that ran on the lexicon's primary key to look a
// word up; the lookups by trigram (a misspelling's corrections) are not
// these statements'.
func TestSearchLexiconCountsProbeByWord(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "lexicon-probes")
	generate(t, f, 2000)
	// Another Domain's lexicon of 8,000 words on many branches: statistics
	// under which the generic plan of a join estimates one branch's
	// lexicon at a few rows.
	other := newFixture(t, s, "lexicon-probes-other")
	_, err := s.Pool.Exec(f.ctx, `INSERT INTO mat_lexicon (domain_id, branch_id, word, records)
		SELECT $1, $2 + g % 400, 'word' || g, 1 FROM generate_series(1, 8000) g`, other.domain, other.branch)
	require.NoError(t, err)
	_, err = s.Pool.Exec(f.ctx, `ANALYZE mat_lexicon`)
	require.NoError(t, err)

	conn, plans := pgtest.AutoExplainGeneric(t, s.Requests)
	for _, tc := range []struct {
		name string
		sql  string
		args []any
		// stmt is a fragment of the statement the case is for (the same
		// before and after it was rewritten).
		stmt string
	}{
		{"the words of several terms (lb_search_run)", `SELECT count(*) FROM lb_search('main', 'part w7 w13', '', 20)`, nil,
			`FROM unnest(pw) WITH ORDINALITY u(w, o)`},
		{"a misspelled word's corrections (lb_search_present)", `SELECT count(*) FROM lb_search('main', 'prat', '', 20)`, nil,
			`FROM (SELECT DISTINCT w FROM unnest(p_words) w) u`},
		{"the second tier's words (lb_search_tier_words)", `SELECT cardinality(lb_search_tier_words($1, $2, ARRAY['part', 'w7', 'w13'], 0, 0))`,
			[]any{f.domain, f.branch}, `FROM unnest(p_w) WITH ORDINALITY u(w, o)`},
		{"the postings walk (lb_search_postings)", `SELECT count(*) FROM lb_search_postings($1, $2, ARRAY['part', 'w7'], ARRAY[1, 2], 2, 20, 0, 10000)`,
			[]any{f.domain, f.branch}, `ELSE chunk END`},
		{"the partial tiers (lb_search_tiers)", `SELECT count(*) FROM lb_search_tiers($1, $2, ARRAY['part', 'w7', 'w13'], ARRAY[1, 2, 4], 3, 20, 10000)`,
			[]any{f.domain, f.branch}, `FROM unnest(p_words) WITH ORDINALITY u(w, o)`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n int64
			require.NoError(t, pgx.BeginFunc(f.ctx, conn, func(tx pgx.Tx) error {
				if err := store.Scope(f.ctx, tx, f.domain); err != nil {
					return err
				}
				plans()
				return tx.QueryRow(f.ctx, tc.sql, tc.args...).Scan(&n)
			}))
			seen := 0
			for _, p := range plans() {
				e, err := pgtest.ParseExplained(p)
				require.NoError(t, err)
				if !strings.Contains(e.Query, tc.stmt) {
					continue
				}
				seen++
				require.Contains(t, e.Query, "mat_lexicon")
				var lexicon []string
				for _, problem := range pgtest.KeyProbeProblems(e.Plan) {
					if strings.Contains(problem, "mat_lexicon") {
						lexicon = append(lexicon, problem)
					}
				}
				require.Empty(t, lexicon, "%s\n%s", tc.name, e.Query)
				require.True(t, probesLexicon(e.Plan), "the lexicon's primary key ran: %s", e.Query)
			}
			require.Positive(t, seen, "the statement ran: %s", tc.stmt)
		})
	}
}

// probesLexicon reports whether a node of plan that ran read the lexicon's
// primary key.
func probesLexicon(n pgtest.PlanNode) bool {
	if n.Loops > 0 && strings.HasPrefix(n.Index, "mat_lexicon_pkey") {
		return true
	}
	for _, c := range n.Plans {
		if probesLexicon(c) {
			return true
		}
	}
	return false
}
