package reads_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/store"
)

// xactIndexScans runs fn in one transaction of conn scoped to f's Domain
// (as lorebase_app) and answers the scans of each named index fn made
// (pg_stat_get_xact_numscans, read as the owner in the same transaction).
func xactIndexScans(t *testing.T, f *fixture, conn *pgx.Conn, fn func(tx pgx.Tx) error, indexes ...string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	require.NoError(t, pgx.BeginFunc(f.ctx, conn, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		if err := fn(tx); err != nil {
			return err
		}
		if _, err := tx.Exec(f.ctx, `RESET ROLE`); err != nil {
			return err
		}
		for _, ix := range indexes {
			var n int64
			if err := tx.QueryRow(f.ctx, `SELECT pg_stat_get_xact_numscans($1::regclass)`, ix).Scan(&n); err != nil {
				return err
			}
			out[ix] = n
		}
		return nil
	}))
	return out
}

// TestOverlaySearchTermsKeepIndexPlans: on an overlay, whether a level's
// lexicon holds a query's word is a primary-key lookup on every call of a
// session, also from the sixth, when PL/pgSQL may keep a generic plan: a
// word every level holds never reads the trigram index (a statement
// joining the levels to the lexicon kept a generic plan that looked the
// word up through it, 5 times slower at 1M).
func TestOverlaySearchTermsKeepIndexPlans(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "overlay-generic-terms", "")
	// Another Domain's lexicon of 8,000 words, about the size of the
	// supply Domain's at 1M, gives the planner the statistics that made
	// it pick the trigram index for a kept plan.
	other := newFixture(t, f.s, "overlay-generic-terms-other")
	_, err := f.s.Pool.Exec(f.ctx, `INSERT INTO mat_lexicon (domain_id, branch_id, word, records)
		SELECT $1, $2, 'word' || g, 1 FROM generate_series(1, 8000) g`, other.domain, other.branch)
	require.NoError(t, err)
	_, err = f.s.Pool.Exec(f.ctx, `ANALYZE mat_lexicon`)
	require.NoError(t, err)
	pc, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	defer pc.Release()
	conn := pc.Conn()
	// The fixture's plan cache keeps custom plans under auto; the plan a
	// session keeps at 1M is the generic one, forced here.
	_, err = conn.Exec(f.ctx, `SELECT set_config('plan_cache_mode', 'force_generic_plan', false)`)
	require.NoError(t, err)
	defer conn.Exec(f.ctx, `RESET plan_cache_mode`) //nolint:errcheck // the connection goes back to the pool
	var words []string
	scans := xactIndexScans(t, f, conn, func(tx pgx.Tx) error {
		for i := range 8 {
			w := overlayWords[i%len(overlayWords)]
			rows, err := tx.Query(f.ctx, `SELECT coalesce(key, '') FROM lb_search('ov', $1, '', 20)`, w)
			if err != nil {
				return err
			}
			got, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			words = append(words, got...)
		}
		return nil
	}, "mat_lexicon_pkey", "mat_lexicon_trgm_idx")
	require.NotEmpty(t, words)
	require.Positive(t, scans["mat_lexicon_pkey"], scans)
	require.Zero(t, scans["mat_lexicon_trgm_idx"], scans)
}
