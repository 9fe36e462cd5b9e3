package jobs_test

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

// recomputedPostings is the postings every present Record of branch $2 of
// Domain $1 has by the rule of lb_search_words_apply: one per word of its
// search vector, scored by its rank for that word alone.
const recomputedPostings = `SELECT m.key, w AS word,
       ts_rank(m.search, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery) AS score
  FROM mat_records m, unnest(tsvector_to_array(m.search)) w
 WHERE m.domain_id = $1 AND m.branch_id = $2 AND NOT m.deleted`

// requirePostingsAsComputed checks that branch b's postings and lexicon are
// what the trigger computes from its Records: no posting missing, none
// extra or scored otherwise, and each word's lexicon count its postings'.
func (f *fixture) requirePostingsAsComputed(t testing.TB, b int32) {
	t.Helper()
	held := `SELECT key, word, score FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2`
	require.Zero(t, f.count(t, `SELECT count(*) FROM ((`+recomputedPostings+` EXCEPT ALL `+held+`)
		UNION ALL (`+held+` EXCEPT ALL `+recomputedPostings+`)) x`, f.domain, b), "postings differ from the Records'")
	counts := `SELECT w.word, count(*)::int FROM (` + recomputedPostings + `) w GROUP BY w.word`
	lexicon := `SELECT word, records FROM mat_lexicon WHERE domain_id = $1 AND branch_id = $2`
	require.Zero(t, f.count(t, `SELECT count(*) FROM ((`+counts+` EXCEPT ALL `+lexicon+`)
		UNION ALL (`+lexicon+` EXCEPT ALL `+counts+`)) x`, f.domain, b), "lexicon differs from the Records'")
	require.Positive(t, f.count(t, `SELECT count(*) FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2`, f.domain, b))
	// The tokens the GIN index of the plateaus holds for each Record
	// (migration 0027) are its postings': one a word, with its score.
	tokens := `SELECT m.key, x FROM mat_records m, unnest(lb_search_tokens(m.domain_id, m.branch_id, m.search)) x
		WHERE m.domain_id = $1 AND m.branch_id = $2 AND NOT m.deleted`
	fromPostings := `SELECT key, lb_search_token(domain_id, branch_id, word, score) FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2`
	require.Zero(t, f.count(t, `SELECT count(*) FROM ((`+tokens+` EXCEPT ALL `+fromPostings+`)
		UNION ALL (`+fromPostings+` EXCEPT ALL `+tokens+`)) x`, f.domain, b), "tokens differ from the postings'")
}

// withQuotedWords gives Records of main, before the fork, words that
// their tsquery needs quoted (apostrophes, backslashes); the trigger
// rewrites their postings.
func (f *fixture) withQuotedWords(t testing.TB) {
	t.Helper()
	f.exec(t, `UPDATE mat_records SET search = setweight(array_to_tsvector(ARRAY['o''brien', 'back\slash', 'it''s', 'name']), 'A')
		           || setweight(array_to_tsvector(ARRAY['\''', 'x']), 'B')
		WHERE domain_id = $1 AND branch_id = $2 AND key IN ('R-000003', 'R-000013', 'R-000015')`, f.domain, f.main)
}

// TestCopyPostingsAreTheRecords': the postings and lexicon a copy holds at
// the end are those its Records give, whatever the path each Record took:
// copied from the base as of the fork (words that need quoting among
// them), rebuilt from history (changed or deleted on the base after the
// fork), written by a commit on the copy during the copy (a new Record, a
// copied one changed, one deleted), across a copy stopped and resumed.
func TestCopyPostingsAreTheRecords(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name  string
		batch int
		stops []int
	}{
		{"one batch", 1000, nil},
		{"small batches", 7, nil},
		{"stopped and resumed", 11, []int{2, 5, 9}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			f := newFixture(t, 120)
			f.withQuotedWords(t)
			b := f.createBranch(t, "copy", store.ModeCopy)
			f.changeAfterFork(t)
			commitOnCopy := func(ctx context.Context, st jobs.BatchStats) error {
				if st.Batch != 2 {
					return nil
				}
				return pgx.BeginFunc(ctx, f.s.Pool, func(tx pgx.Tx) error {
					if _, err := tx.Exec(ctx, `SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, f.domain, b); err != nil {
						return err
					}
					// A new Record, one changed and one deleted (copied already
					// or not yet, by the batch size).
					if _, err := tx.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, search, created_seq, seq, versions, deleted)
						VALUES ($1, $2, 'R-NEW', 'Thing', 'Mine', '{"name": "Mine"}', to_tsvector('simple', 'mine own o''neil'), 300, 300, 1, false),
						       ($1, $2, 'R-000100', 'Thing', 'Ours', '{"name": "Ours"}', to_tsvector('simple', 'ours name'), 10, 300, 2, false),
						       ($1, $2, 'R-000101', 'Thing', '', '{}', '', 10, 300, 2, true)
						ON CONFLICT (domain_id, branch_id, key) DO UPDATE SET title = EXCLUDED.title, values = EXCLUDED.values,
						   search = EXCLUDED.search, seq = EXCLUDED.seq, versions = EXCLUDED.versions, deleted = EXCLUDED.deleted`, f.domain, b); err != nil {
						return err
					}
					// A Record copied already changes its words.
					_, err := tx.Exec(ctx, `UPDATE mat_records SET search = to_tsvector('simple', 'renamed thing'), seq = 300
						WHERE domain_id = $1 AND branch_id = $2 AND key = (SELECT min(key) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted)`,
						f.domain, b)
					return err
				})
			}
			stop := errors.New("stopped")
			for _, k := range c.stops {
				cp := &jobs.Copier{Store: f.s, BatchRows: c.batch, AfterBatch: func(ctx context.Context, st jobs.BatchStats) error {
					if err := commitOnCopy(ctx, st); err != nil {
						return err
					}
					if st.Batch == k {
						return stop
					}
					return nil
				}}
				require.ErrorIs(t, cp.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}), stop)
				f.requirePostingsAsComputed(t, b)
			}
			cp := &jobs.Copier{Store: f.s, BatchRows: c.batch, AfterBatch: commitOnCopy}
			require.NoError(t, cp.Run(ctx, jobs.MaterializeArgs{DomainID: f.domain, BranchID: b}))
			state, _ := f.progress(t, b)
			require.Equal(t, store.StateReady, state)
			f.requirePostingsAsComputed(t, b)
			// The copy's own rows stayed: R-000100 holds its commit's words
			// only, R-000101 none.
			require.Equal(t, 2, f.count(t, `SELECT count(*) FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2 AND key = 'R-000100'`, f.domain, b))
			require.Zero(t, f.count(t, `SELECT count(*) FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2 AND key = 'R-000101'`, f.domain, b))
			// The quoted words came along.
			require.Equal(t, 6, f.count(t, `SELECT count(*) FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2 AND key = 'R-000013'`, f.domain, b))
			// Records rebuilt from history (patched and deleted on main after
			// the fork) have the fork's words, not main's.
			require.Zero(t, f.count(t, `SELECT count(*) FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2 AND word = 'new'`, f.domain, b))
			require.Positive(t, f.count(t, `SELECT count(*) FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2 AND key = 'R-000008'`, f.domain, b))
			// main's are untouched.
			f.requirePostingsAsComputed(t, f.main)
		})
	}
}
