package reads_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// lbGet answers lb_get's Record at the head of branch, read in a
// transaction scoped to f's Domain as lorebase_app (nil: no row).
func lbGet(t *testing.T, f *fixture, branch, key string) (*reads.Record, error) {
	t.Helper()
	var out *reads.Record
	err := pgx.BeginFunc(f.ctx, f.s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		rows, err := tx.Query(f.ctx, `SELECT key, kind, title, "values", coalesce(revision, '') FROM lb_get($1, $2, NULL)`, branch, key)
		if err != nil {
			return err
		}
		recs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[reads.Record])
		if len(recs) > 0 {
			out = &recs[0]
		}
		return err
	})
	return out, err
}

// TestGetAnswersAsLbGet: a get by key at the head (with and without the
// branch's head asked for) answers exactly what lb_get answers, Revision
// included, on every kind of branch: main, a ready copy, an overlay whose
// base moved on after the fork, an overlay of an overlay, a copy still
// copying and an overlay of it, for Records the overlay changed, deleted,
// created or revived, Records main changed after the fork, and a missing
// one; an unknown branch is not found either way.
func TestGetAnswersAsLbGet(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "get-levels", "")
	cp := f.fork("cpm", "copy", revInfo{})
	cp.commit("erin", "", put("Part", "P-500", map[string]any{"name": "Part copying only", "maker": "S-1"}), del("P-010"))
	cp.fork("ovcp", "overlay", revInfo{})
	// An overlay whose base changed Records in the Revision at its fork
	// and in the very next one (main's head is the Domain's last Revision
	// when it forks), then again: the version at the fork is the
	// overlay's, the one just past it is not.
	f.commit("frank", "", patch("P-015", map[string]any{"name": "Part changed before the fork"}))
	f.fork("ovnext", "overlay", revInfo{})
	f.commit("frank", "", patch("P-011", map[string]any{"name": "Part changed right after the fork"}), del("P-012"))
	f.commit("frank", "", patch("P-011", map[string]any{"name": "Part changed twice after the fork"}),
		patch("P-015", map[string]any{"name": "Part changed after the fork"}))
	keys := append(f.strings(`SELECT DISTINCT key FROM mat_records WHERE domain_id = $1`, f.domain), "missing")
	for _, br := range []string{"main", "ref", "ov", "ov2", "cpm", "ovcp", "ovnext"} {
		present := 0
		for _, k := range keys {
			want, werr := lbGet(t, f, br, k)
			require.NoError(t, werr, "%s %s", br, k)
			for _, withHead := range []bool{false, true} {
				ctx := f.ctx
				if withHead {
					ctx, _ = store.WithHead(f.ctx, br)
				}
				got, err := f.r.Get(ctx, f.domain, br, k, "")
				if want == nil {
					require.ErrorIs(t, err, store.ErrNotFound, "%s %s", br, k)
					continue
				}
				require.NoError(t, err, "%s %s", br, k)
				require.Equal(t, want.Key+want.Kind+want.Title+want.Revision, got.Key+got.Kind+got.Title+got.Revision, "%s %s", br, k)
				require.JSONEq(t, string(want.Values), string(got.Values), "%s %s", br, k)
			}
			if want != nil {
				present++
			}
		}
		require.Greater(t, present, 50, br)
	}
	_, err := f.r.Get(f.ctx, f.domain, "nobranch", "P-001", "")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// TestOverlayGetRunsNoFunction: a get by key at the head of an overlay
// over a branch that owns its rows (and of such a branch itself) is one
// plain statement: it calls neither lb_get nor the PL/pgSQL functions
// that resolve the levels (lb_scope_chain, lb_levels) once per call. An
// overlay of an overlay still reads through lb_get.
func TestOverlayGetRunsNoFunction(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "get-calls", "")
	calls := func(branch string) map[string]int64 {
		return functionCalls(t, f, "pl", []string{"lb_get", "lb_scope_chain", "lb_levels"},
			func(ctx context.Context, tx pgx.Tx) error {
				for _, k := range []string{"P-001", "P-003", "P-005", "P-100", "P-006", "P-011", "P-300", "missing"} {
					// At most one row holds a Record, whichever path answers
					// (ov2 holds rows of its own for P-011 and P-300).
					var records int
					rows, err := tx.Query(ctx, reads.GetLevelsSQLForTest, branch, k, f.domain)
					if err != nil {
						return err
					}
					for rows.Next() {
						var key *string
						if err := rows.Scan(&key, nil, nil, nil, nil, nil, nil, nil); err != nil {
							return err
						}
						if key != nil {
							records++
						}
					}
					if err := rows.Err(); err != nil {
						return err
					}
					require.LessOrEqual(t, records, 1, "%s %s", branch, k)
				}
				return nil
			})
	}
	none := map[string]int64{"lb_get": 0, "lb_scope_chain": 0, "lb_levels": 0}
	require.Equal(t, none, calls("ov"))
	require.Equal(t, none, calls("main"))
	require.Equal(t, none, calls("ref"))
	require.Equal(t, int64(8), calls("ov2")["lb_get"])
}

// TestOverlayGetStaysInItsDomain: two Domains sharing a partition, each
// with an overlay "ov" of its main changing the same key: a get on one
// Domain's overlay answers that Domain's Record, never the other's, and a
// Domain without the branch finds nothing.
func TestOverlayGetStaysInItsDomain(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	a := newFixture(t, s, "get-a")
	a.commit("alice", "", put("Part", "P-1", map[string]any{"name": "Part a main"}), put("Part", "P-2", map[string]any{"name": "Part a base"}))
	b := a.sharingPartition(t, s, "get-b", put("Part", "P-1", map[string]any{"name": "Part b main"}))
	b.commit("bob", "", put("Part", "P-2", map[string]any{"name": "Part b base"}))
	a.fork("ov", "overlay", revInfo{}).commit("agent", "", patch("P-1", map[string]any{"name": "Part a overlay"}))
	b.fork("ov", "overlay", revInfo{}).commit("agent", "", patch("P-1", map[string]any{"name": "Part b overlay"}))
	c := newFixture(t, s, "get-c")
	c.commit("carol", "", put("Part", "P-1", map[string]any{"name": "Part c main"}))
	for _, tc := range []struct {
		f     *fixture
		key   string
		title string
	}{
		{a, "P-1", "Part a overlay"}, {a, "P-2", "Part a base"},
		{b, "P-1", "Part b overlay"}, {b, "P-2", "Part b base"},
	} {
		for _, withHead := range []bool{false, true} {
			ctx := tc.f.ctx
			if withHead {
				ctx, _ = store.WithHead(tc.f.ctx, "ov")
			}
			got, err := tc.f.r.Get(ctx, tc.f.domain, "ov", tc.key, "")
			require.NoError(t, err)
			require.Equal(t, tc.title, got.Title)
		}
	}
	_, err := c.r.Get(c.ctx, c.domain, "ov", "P-1", "")
	require.True(t, errors.Is(err, store.ErrNotFound), "%v", err)
}

// lbHistory answers lb_history's page, read as Reader.History reads it
// before historySQL, in a transaction scoped to f's Domain.
func lbHistory(t *testing.T, f *fixture, branch, key string, n int, before string) (*reads.History, error) {
	t.Helper()
	out := &reads.History{Entries: []reads.HistoryEntry{}}
	err := pgx.BeginFunc(f.ctx, f.s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		rows, err := tx.Query(f.ctx, `SELECT h.revision,
			coalesce((SELECT r.number FROM revisions r WHERE r.domain_id = lb_domain() AND r.id = h.revision), 0),
			h.op, h."values", coalesce(h.author, ''), coalesce(h.message, ''), coalesce(h.at, 'epoch'), h.provenance
		FROM lb_history($1, $2, lb_rev_seq($3), $4) h`, branch, key, before, n+1)
		if err != nil {
			return err
		}
		for rows.Next() {
			var e reads.HistoryEntry
			if err := rows.Scan(&e.Revision, &e.Seq, &e.Op, &e.Values, &e.Author, &e.Message, &e.At, &e.Provenance); err != nil {
				return err
			}
			if e.Values == nil {
				e.Values = []byte("null")
			}
			if e.Provenance == nil {
				e.Provenance = []byte("null")
			}
			out.Entries = append(out.Entries, e)
		}
		return rows.Err()
	})
	if err != nil {
		return nil, err
	}
	if len(out.Entries) > n {
		out.Entries = out.Entries[:n]
		out.Next = out.Entries[n-1].Revision
	}
	return out, nil
}

// TestHistoryAnswersAsLbHistory: a history page answers exactly what
// lb_history answers, page by page (limits 1, 2 and 100, each page's next
// as the following page's before), on every kind of branch: main, a ready
// copy, an overlay whose base moved on after the fork, an overlay of an
// overlay, a copy still copying and an overlay of it; a key that never
// existed, an unknown branch and an unknown before are not found either way.
func TestHistoryAnswersAsLbHistory(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "history-levels", "")
	cp := f.fork("cpm", "copy", revInfo{})
	cp.commit("erin", "", put("Part", "P-500", map[string]any{"name": "Part copying only", "maker": "S-1"}), del("P-010"),
		patch("P-011", map[string]any{"name": "Part copying patch"}))
	cp.fork("ovcp", "overlay", revInfo{})
	// An overlay whose base changed Records in the Revision at its fork
	// and in the very next one (main's head is the Domain's last Revision
	// when it forks), then again: the version at the fork is the
	// overlay's, the one just past it is not.
	f.commit("frank", "", patch("P-015", map[string]any{"name": "Part changed before the fork"}))
	f.fork("ovnext", "overlay", revInfo{})
	f.commit("frank", "", patch("P-011", map[string]any{"name": "Part changed right after the fork"}), del("P-012"))
	f.commit("frank", "", patch("P-011", map[string]any{"name": "Part changed twice after the fork"}),
		patch("P-015", map[string]any{"name": "Part changed after the fork"}))
	keys := append(f.strings(`SELECT DISTINCT key FROM mat_records WHERE domain_id = $1`, f.domain), "missing")
	for _, br := range []string{"main", "ref", "ov", "ov2", "cpm", "ovcp", "ovnext"} {
		entries := 0
		for _, k := range keys {
			for _, n := range []int{1, 2, 100} {
				before := ""
				for page := 0; page < 10; page++ {
					want, werr := lbHistory(t, f, br, k, n, before)
					got, err := f.r.History(f.ctx, f.domain, br, k, n, before)
					if werr != nil {
						require.ErrorContains(t, werr, "record not found", "%s %s", br, k)
						require.ErrorIs(t, err, store.ErrNotFound, "%s %s", br, k)
						break
					}
					require.NoError(t, err, "%s %s %d %s", br, k, n, before)
					require.Equal(t, want, got, "%s %s %d %s", br, k, n, before)
					entries += len(got.Entries)
					if got.Next == "" {
						break
					}
					before = got.Next
				}
			}
		}
		if br != "ref" { // the fixture's ready copy holds no history
			require.Greater(t, entries, 100, br)
		}
	}
	_, err := f.r.History(f.ctx, f.domain, "nobranch", "P-001", 5, "")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = f.r.History(f.ctx, f.domain, "ov", "P-001", 5, "01ARZ3NDEKTSV4RRFFQ69G5FAV")
	require.ErrorIs(t, err, store.ErrNotFound)
}

// TestOverlayHistoryRunsNoFunction: a history page on an overlay over a
// branch that owns its rows (and on such a branch) is one plain statement:
// it calls neither lb_history nor the functions that resolve its levels
// and build its statement each call. An overlay of an overlay still reads
// through lb_history.
func TestOverlayHistoryRunsNoFunction(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "history-calls", "")
	calls := func(branch string, keys ...string) map[string]int64 {
		return functionCalls(t, f, "pl", []string{"lb_history", "lb_history_sql", "lb_scope_chain", "lb_rev_seq"},
			func(ctx context.Context, tx pgx.Tx) error {
				for _, k := range keys {
					if err := drain(tx.Query(ctx, reads.HistorySQLForTest, branch, k, "", 21, f.domain)); err != nil {
						return err
					}
				}
				return nil
			})
	}
	keys := []string{"P-001", "P-003", "P-005", "P-100", "P-006"}
	none := map[string]int64{"lb_history": 0, "lb_history_sql": 0, "lb_scope_chain": 0, "lb_rev_seq": 0}
	require.Equal(t, none, calls("ov", keys...))
	require.Equal(t, none, calls("main", "P-001", "P-003", "P-005", "P-006"))
	require.Equal(t, int64(5), calls("ov2", keys...)["lb_history"])
}

// functionCalls runs statements as lorebase_app in f's Domain, in one
// transaction with track_functions set to track ('pl': PL/pgSQL
// functions; 'all': SQL functions too), and answers how many times each of
// the functions fns was called in it.
func functionCalls(t *testing.T, f *fixture, track string, fns []string, statements func(context.Context, pgx.Tx) error) map[string]int64 {
	t.Helper()
	out := map[string]int64{}
	require.NoError(t, pgx.BeginFunc(f.ctx, f.s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(f.ctx, `SELECT set_config('track_functions', $1, true)`, track); err != nil {
			return err
		}
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		before, err := pendingCalls(f.ctx, tx, fns)
		if err != nil {
			return err
		}
		if err := statements(f.ctx, tx); err != nil {
			return err
		}
		after, err := pendingCalls(f.ctx, tx, fns)
		if err != nil {
			return err
		}
		for _, fn := range fns {
			out[fn] = after[fn] - before[fn]
		}
		return nil
	}))
	return out
}

// pendingCalls reads the backend's counts of calls of fns not yet sent to
// the statistics (pg_stat_get_xact_function_calls). They are not the
// transaction's alone: a backend sends its counts at a transaction's end
// at most once a second, so an earlier transaction's may still be there;
// a difference over one transaction is exact. A name with its argument
// types (lb_f(integer,text)) names one overload.
func pendingCalls(ctx context.Context, tx pgx.Tx, fns []string) (map[string]int64, error) {
	out := make(map[string]int64, len(fns))
	for _, fn := range fns {
		var n int64
		q := `SELECT coalesce(pg_stat_get_xact_function_calls($1::regproc), 0)`
		if strings.Contains(fn, "(") {
			q = `SELECT coalesce(pg_stat_get_xact_function_calls($1::regprocedure), 0)`
		}
		if err := tx.QueryRow(ctx, q, fn).Scan(&n); err != nil {
			return nil, fmt.Errorf("calls of %s: %w", fn, err)
		}
		out[fn] = n
	}
	return out, nil
}

// drain reads a query's rows to the end and closes them.
func drain(rows pgx.Rows, err error) error {
	if err != nil {
		return err
	}
	for rows.Next() {
	}
	rows.Close()
	return rows.Err()
}
