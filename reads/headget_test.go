package reads_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// batchStatements records the statements of every batch sent.
type batchStatements struct {
	mu  sync.Mutex
	sql []string
}

func (b *batchStatements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (b *batchStatements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (b *batchStatements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	return ctx
}

func (b *batchStatements) TraceBatchQuery(_ context.Context, _ *pgx.Conn, d pgx.TraceBatchQueryData) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.sql = append(b.sql, d.SQL)
}

func (b *batchStatements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// ran reports which head get statements were sent since the last call.
func (b *batchStatements) ran() (owned, levels int) {
	b.mu.Lock()
	defer b.mu.Unlock()
	sent := map[string]int{}
	for _, s := range b.sql {
		sent[s]++
	}
	b.sql = nil
	return sent[reads.GetOwnedSQLForTest], sent[reads.GetLevelsSQLForTest]
}

// TestHeadGetStatementByBranch: a get at the head of a branch that owns its
// rows runs the owned statement only; an overlay, and a copy still
// copying, are read by the owned statement once (lb_get answers it) and by
// the levels statement from then on, with and without the head asked for.
// Both answer as lb_get does.
func TestHeadGetStatementByBranch(t *testing.T) {
	t.Parallel()
	trace := &batchStatements{}
	s, err := store.Open(context.Background(), pgtest.NewDatabase(t), store.Config{Tracer: trace})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	f := overlayWorldIn(t, newFixture(t, s, "get-statements"), "")
	f.fork("cpm", "copy", revInfo{})
	for _, tc := range []struct {
		branch             string
		owned, levels, key int
	}{
		{"main", 3, 0, 1}, {"ref", 3, 0, 3}, {"ov", 1, 2, 3}, {"cpm", 1, 2, 10},
	} {
		r := reads.New(s, reads.Config{})
		trace.ran()
		for i, k := range []string{"P-001", "P-003", "P-010"} {
			ctx := f.ctx
			if i == 1 {
				ctx, _ = store.WithHead(f.ctx, tc.branch)
			}
			want, err := lbGet(t, f, tc.branch, k)
			require.NoError(t, err)
			got, err := r.Get(ctx, f.domain, tc.branch, k, "")
			if want == nil {
				require.ErrorIs(t, err, store.ErrNotFound, "%s %s", tc.branch, k)
				continue
			}
			require.NoError(t, err, "%s %s", tc.branch, k)
			require.Equal(t, want.Title+want.Revision, got.Title+got.Revision, "%s %s", tc.branch, k)
		}
		owned, levels := trace.ran()
		require.Equal(t, []int{tc.owned, tc.levels}, []int{owned, levels}, tc.branch)
		require.Equal(t, tc.levels > 0, reads.ReadsThroughLevels(r, f.domain, tc.branch), tc.branch)
	}
}

// TestOwnedGetPlan: the owned statement's generic plan, as lorebase_app on
// main, holds the refs row, the Record's primary key and the Revision's
// id, no level of an overlay (mat_history), and an execution in a
// transaction of its own takes every relation lock in the fast path (the
// levels statement's plan, holding the history's partitions too, takes
// more relation locks than the fast path's slots).
func TestOwnedGetPlan(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "get-owned-plan", "")
	_, err := f.s.Pool.Exec(f.ctx, `ANALYZE refs, mat_records, mat_history, revisions`)
	require.NoError(t, err)
	conn, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	c := conn.Hijack()                          // session settings and a prepared statement: never back to the pool
	defer c.Close(context.WithoutCancel(f.ctx)) //nolint:errcheck // test connection
	locks := func(sql, branch string) (slow, all int, plan string) {
		t.Helper()
		_, err := c.Exec(f.ctx, `SET plan_cache_mode = force_generic_plan`)
		require.NoError(t, err)
		_, err = c.Exec(f.ctx, `PREPARE head_get(text, text, int) AS `+sql)
		require.NoError(t, err)
		defer c.Exec(context.WithoutCancel(f.ctx), `DEALLOCATE head_get`) //nolint:errcheck // test connection
		for range 2 {
			require.NoError(t, pgx.BeginFunc(f.ctx, c, func(tx pgx.Tx) error {
				if err := store.Scope(f.ctx, tx, f.domain); err != nil {
					return err
				}
				if err := drain(tx.Query(f.ctx, `EXECUTE head_get('`+branch+`', 'P-001', `+fmt.Sprint(f.domain)+`)`)); err != nil {
					return err
				}
				if err := tx.QueryRow(f.ctx, `SELECT count(*) FILTER (WHERE NOT fastpath), count(*) FROM pg_locks
				 WHERE pid = pg_backend_pid() AND locktype = 'relation' AND relation <> 'pg_locks'::regclass`).Scan(&slow, &all); err != nil {
					return err
				}
				rows, err := tx.Query(f.ctx, `EXPLAIN EXECUTE head_get('`+branch+`', 'P-001', `+fmt.Sprint(f.domain)+`)`)
				if err != nil {
					return err
				}
				lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
				plan = strings.Join(lines, "\n")
				return err
			}))
		}
		return slow, all, plan
	}
	slow, all, plan := locks(reads.GetOwnedSQLForTest, "main")
	require.Zero(t, slow, "%d relation locks, %d outside the fast path:\n%s", all, slow, plan)
	require.NotContains(t, plan, "mat_history", plan)
	require.Regexp(t, `Index Scan using mat_records_p\d+_pkey`, plan, plan)
	require.NotRegexp(t, `Seq Scan on mat_\w+`, plan, plan)
	_, levelsAll, levelsPlan := locks(reads.GetLevelsSQLForTest, "main")
	require.Contains(t, levelsPlan, "mat_history", levelsPlan)
	require.Greater(t, levelsAll, all, "the levels statement locks more relations than the owned one")
}

// TestOwnedGetStaysInItsDomain: two Domains sharing a partition, each with
// main holding the same key: the owned statement answers each Domain's own
// Record, head and Revision, never the other's, and a key only the other
// Domain holds is not found, with and without the head asked for.
func TestOwnedGetStaysInItsDomain(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	a := newFixture(t, s, "owned-a")
	a.commit("alice", "", put("Part", "P-1", map[string]any{"name": "Part a"}))
	b := a.sharingPartition(t, s, "owned-b", put("Part", "P-1", map[string]any{"name": "Part b"}))
	b.commit("bob", "", put("Part", "P-2", map[string]any{"name": "Part b only"}))
	for _, tc := range []struct {
		f     *fixture
		title string
	}{{a, "Part a"}, {b, "Part b"}} {
		for _, withHead := range []bool{false, true} {
			ctx := tc.f.ctx
			var head *store.Head
			if withHead {
				ctx, head = store.WithHead(tc.f.ctx, "main")
			}
			got, err := tc.f.r.Get(ctx, tc.f.domain, "main", "P-1", "")
			require.NoError(t, err)
			want, err := lbGet(t, tc.f, "main", "P-1")
			require.NoError(t, err)
			require.Equal(t, tc.title, got.Title)
			require.Equal(t, want.Revision, got.Revision)
			if head != nil {
				read, found, id, _ := head.Result()
				require.True(t, read && found)
				require.Equal(t, tc.f.branch, id)
			}
		}
	}
	_, err := a.r.Get(a.ctx, a.domain, "main", "P-2", "")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = b.r.Get(b.ctx, b.domain, "main", "P-2", "")
	require.NoError(t, err)
}
