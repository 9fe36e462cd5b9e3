package reads_test

import (
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/store"
)

// searchSQL is lb_search at the head with the default candidates, as
// Reader.Search calls it.
const searchSQL = `SELECT * FROM lb_search($1, $2, '', $3, NULL, 1000, 5, 100)`

// searchCalls counts, in one transaction scoped to f's Domain as
// lorebase_app, the calls of each of fns (SQL functions included:
// track_functions all) while lb_search answers each query on branch.
func searchCalls(t *testing.T, f *fixture, branch string, queries []string, fns []string) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	require.NoError(t, pgx.BeginFunc(f.ctx, f.s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(f.ctx, `SET LOCAL track_functions = 'all'`); err != nil {
			return fmt.Errorf("track functions: %w", err)
		}
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		for _, q := range queries {
			for _, lim := range []int{1, 5, 20} {
				if err := drain(tx.Query(f.ctx, searchSQL, branch, q, lim)); err != nil {
					return fmt.Errorf("search %q on %s: %w", q, branch, err)
				}
			}
		}
		for _, fn := range fns {
			var n int64
			if err := tx.QueryRow(f.ctx, `SELECT coalesce(pg_stat_get_xact_function_calls($1::regproc), 0)`, fn).Scan(&n); err != nil {
				return fmt.Errorf("calls of %s: %w", fn, err)
			}
			out[fn] = n
		}
		return nil
	}))
	return out
}

// TestOneWordSearchBuildsNoStatement: a one-word search at a branch's head
// (main, a copy, an overlay's base) reads the word's postings by a static
// statement, whose plan the session keeps, not by a statement built as
// text (lb_search_words_sql) and planned again on every call.
func TestOneWordSearchBuildsNoStatement(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "one-word-calls", "")
	words := []string{"steel", "hex", "pump", "brass", "zinc"}
	for _, br := range []string{"main", "ref", "ov", "ov2"} {
		got := searchCalls(t, f, br, words, []string{"lb_search_words_sql", "lb_search_run"})
		require.Zero(t, got["lb_search_words_sql"], "%s: %v", br, got)
		// The calls did run the branch's (or the base's) search.
		require.Positive(t, got["lb_search_run"], "%s: %v", br, got)
	}
}
