package commit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// warehouses puts n Warehouses W-000... named with suffix.
func warehouses(from, n int, suffix string) []commit.Change {
	out := make([]commit.Change, 0, n)
	for i := from; i < from+n; i++ {
		out = append(out, put("Warehouse", fmt.Sprintf("W-%03d", i), fmt.Sprintf(`{"name": "Depot %d %s"}`, i, suffix)))
	}
	return out
}

// dump is what a Domain's commits wrote, without the Revisions' ids and
// times (new in every run): Records, history, objects, Revisions' order.
func dump(t *testing.T, s *store.Store, domainID int32) map[string][]string {
	t.Helper()
	ctx := context.Background()
	out := map[string][]string{}
	for name, sql := range map[string]string{
		"records": `SELECT concat_ws(' ', key, kind, title, values::text, lineage::text, created_seq, seq, versions, deleted, ivals::text, iseq, search::text)
			FROM mat_records WHERE domain_id = $1 ORDER BY key`,
		"history": `SELECT concat_ws(' ', key, seq, op, kind, title, values::text, encode(object_hash, 'hex'), provenance::text)
			FROM mat_history WHERE domain_id = $1 ORDER BY key, seq`,
		"objects":   `SELECT encode(hash, 'hex') || ' ' || body::text FROM objects WHERE domain_id = $1 ORDER BY hash`,
		"revisions": `SELECT concat_ws(' ', seq, number, jsonb_array_length(changes)) FROM revisions WHERE domain_id = $1 ORDER BY seq`,
	} {
		rows, err := s.Pool.Query(ctx, sql, domainID)
		require.NoError(t, err)
		for rows.Next() {
			var line string
			require.NoError(t, rows.Scan(&line))
			out[name] = append(out[name], line)
		}
		require.NoError(t, rows.Err())
	}
	return out
}

// branchID is the id of a Domain's branch.
func branchID(t *testing.T, s *store.Store, domainID int32, name string) int32 {
	t.Helper()
	var id int32
	require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT id FROM refs WHERE domain_id = $1 AND name = $2`, domainID, name).Scan(&id))
	return id
}

// warmPool opens n connections of the request pool and leaves them idle,
// so read-aheads find idle connections instead of opening their own.
func warmPool(t *testing.T, s *store.Store, n int) {
	t.Helper()
	conns := make([]*pgxpool.Conn, n)
	for i := range conns {
		c, err := s.Requests.Acquire(context.Background())
		require.NoError(t, err)
		conns[i] = c
	}
	for _, c := range conns {
		c.Release()
	}
}

// TestReadAheadWritesWhatACommitWithoutWrites: the same commits (puts of
// new Records, puts over them, patches, deletes) on two databases, one
// reading ahead on every commit and one never: both write the same
// Records, history, objects and Revisions, and only the first read ahead.
func TestReadAheadWritesWhatACommitWithoutWrites(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	rounds := [][]commit.Change{
		warehouses(0, 40, "a"),
		warehouses(0, 40, "b"),
		append(warehouses(30, 20, "c"), patch("W-001", `{"name": "Depot one"}`), del("W-002"), del("W-003")),
	}
	var dumps [2]map[string][]string
	var started [2]int
	for i, conns := range []int{3, -1} {
		s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{MaxConns: 16})
		require.NoError(t, err)
		t.Cleanup(s.Close)
		warmPool(t, s, 8)
		d, err := s.CreateDomain(ctx, "supply")
		require.NoError(t, err)
		p := commit.New(s, commit.Config{ReadAheadConns: conns, ReadAheadMinChanges: 1})
		var mu sync.Mutex
		commit.ObserveReadAheads(p, func(r commit.ReadAheadRun) {
			mu.Lock()
			defer mu.Unlock()
			if r.Conns() > 0 {
				started[i]++
			}
		})
		_, err = p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
		require.NoError(t, err)
		for _, r := range rounds {
			_, err := p.Commit(ctx, d.ID, "main", req(r...), "")
			require.NoError(t, err)
		}
		dumps[i] = dump(t, s, d.ID)
	}
	require.Equal(t, 2*len(rounds), started[0], "with read-ahead: the Records and the objects of every commit")
	require.Zero(t, started[1], "without read-ahead")
	require.Len(t, dumps[0]["records"], 50)
	require.Equal(t, dumps[1], dumps[0])
}

// TestReadAheadReadsOnlyItsDomain: a read-ahead runs as its Domain under
// row-level security and names it: another Domain's keys, branch and
// object hashes find nothing of that Domain; its own find its rows (all
// but the first chunk, which a read-ahead leaves to the commit).
func TestReadAheadReadsOnlyItsDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{MaxConns: 8})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	p := commit.New(s, commit.Config{ReadAheadConns: 3, ReadAheadMinChanges: 1})
	var domains [2]int32
	for i, name := range []string{"victim", "hostile"} {
		d, err := s.CreateDomain(ctx, name)
		require.NoError(t, err)
		domains[i] = d.ID
		_, err = p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
		require.NoError(t, err)
	}
	victim, hostile := domains[0], domains[1]
	_, err = p.Commit(ctx, victim, "main", req(warehouses(0, 40, "victim")...), "")
	require.NoError(t, err)
	_, err = p.Commit(ctx, hostile, "main", req(warehouses(100, 4, "hostile")...), "")
	require.NoError(t, err)
	var keys []string
	var hashes [][]byte
	rows, err := s.Pool.Query(ctx, `SELECT key, object_hash FROM mat_history WHERE domain_id = $1 ORDER BY key`, victim)
	require.NoError(t, err)
	for rows.Next() {
		var k string
		var h []byte
		require.NoError(t, rows.Scan(&k, &h))
		keys, hashes = append(keys, k), append(hashes, h)
	}
	require.NoError(t, rows.Err())
	require.Len(t, keys, 40)
	victimBranch, hostileBranch := branchID(t, s, victim, "main"), branchID(t, s, hostile, "main")

	for _, tc := range []struct {
		name    string
		start   func() (commit.ReadAheadRun, bool)
		ownRows bool
	}{
		{"the victim's keys on the hostile Domain's branch", func() (commit.ReadAheadRun, bool) {
			return commit.StartReadAheadRecords(ctx, p, hostile, hostileBranch, keys)
		}, false},
		{"the victim's keys and branch from the hostile Domain", func() (commit.ReadAheadRun, bool) {
			return commit.StartReadAheadRecords(ctx, p, hostile, victimBranch, keys)
		}, false},
		{"the victim's object hashes from the hostile Domain", func() (commit.ReadAheadRun, bool) {
			return commit.StartReadAheadObjects(ctx, p, hostile, hashes)
		}, false},
		{"the victim's keys from the victim", func() (commit.ReadAheadRun, bool) {
			return commit.StartReadAheadRecords(ctx, p, victim, victimBranch, keys)
		}, true},
		{"the victim's object hashes from the victim", func() (commit.ReadAheadRun, bool) {
			return commit.StartReadAheadObjects(ctx, p, victim, hashes)
		}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, ok := tc.start()
			require.True(t, ok, "the read-ahead runs")
			found, failed := r.Wait()
			require.Zero(t, failed)
			want := int64(0)
			if tc.ownRows {
				want = int64(len(keys) - len(keys)/(r.Conns()+1))
			}
			require.Equal(t, want, found)
		})
	}
}

// readAheadsRunning counts the server's backends running a read-ahead
// statement, and those of them waiting for a lock.
func readAheadsRunning(t *testing.T, s *store.Store) (running, waiting int) {
	t.Helper()
	require.NoError(t, s.Pool.QueryRow(context.Background(), `SELECT count(*), count(*) FILTER (WHERE wait_event_type = 'Lock')
		FROM pg_stat_activity WHERE state = 'active' AND query LIKE $1 AND pid <> pg_backend_pid()`,
		commit.ReadAheadMarker+"%").Scan(&running, &waiting))
	return running, waiting
}

// eventually polls cond until it holds (a bound on liveness, not on
// speed: the read-aheads stopped here wait on a lock held throughout).
func eventually(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("still not so after a minute: %s", what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// TestReadAheadStopsWithItsContext: a read-ahead blocked on a lock (held
// by another transaction throughout) stops, on the server too, when its
// context or its commit's context is cancelled.
func TestReadAheadStopsWithItsContext(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, p *commit.Pipeline, domainID, branch int32, keys []string) (wait func())
	}{
		{"read-ahead", func(ctx context.Context, p *commit.Pipeline, domainID, branch int32, keys []string) func() {
			r, ok := commit.StartReadAheadRecords(ctx, p, domainID, branch, keys)
			require.True(t, ok)
			return func() {
				_, failed := r.Wait()
				require.Equal(t, int64(r.Conns()), failed, "every statement was stopped")
			}
		}},
		{"commit", func(ctx context.Context, p *commit.Pipeline, domainID, _ int32, _ []string) func() {
			done := make(chan error, 1)
			go func() {
				_, err := p.Commit(ctx, domainID, "main", req(warehouses(0, 40, "again")...), "")
				done <- err
			}()
			return func() { require.ErrorIs(t, <-done, context.Canceled) }
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{MaxConns: 8})
			require.NoError(t, err)
			t.Cleanup(s.Close)
			d, err := s.CreateDomain(ctx, "supply")
			require.NoError(t, err)
			p := commit.New(s, commit.Config{ReadAheadConns: 3, ReadAheadMinChanges: 1})
			_, err = p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
			require.NoError(t, err)
			changes := warehouses(0, 40, "first")
			_, err = p.Commit(ctx, d.ID, "main", req(changes...), "")
			require.NoError(t, err)
			keys := make([]string, len(changes))
			for i, c := range changes {
				keys[i] = c.Key
			}

			lock, err := s.Pool.Begin(ctx)
			require.NoError(t, err)
			defer lock.Rollback(ctx) //nolint:errcheck
			_, err = lock.Exec(ctx, `LOCK TABLE mat_records IN ACCESS EXCLUSIVE MODE`)
			require.NoError(t, err)

			rctx, cancel := context.WithCancel(ctx)
			defer cancel()
			wait := tc.run(rctx, p, d.ID, branchID(t, s, d.ID, "main"), keys)
			eventually(t, "the read-ahead's 3 statements wait for the lock", func() bool {
				_, waiting := readAheadsRunning(t, s)
				return waiting == 3
			})
			cancel()
			wait()
			eventually(t, "no read-ahead statement runs", func() bool {
				running, _ := readAheadsRunning(t, s)
				return running == 0
			})
			require.NoError(t, lock.Rollback(ctx))
		})
	}
}

// TestReadAheadOnlyOnSpareConnections: a read-ahead takes the pool's idle
// connections and opens new ones only while one slot stays free; a pool
// with none to spare gives it none and it does not run.
func TestReadAheadOnlyOnSpareConnections(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		maxConns  int32
		held      int // connections held by others throughout
		idle      int // connections open and idle before it
		wantConns int // 0: it does not run
	}{
		{"every connection busy", 2, 2, 0, 0},
		{"one free slot, kept free", 2, 1, 0, 0},
		{"room for new connections", 8, 1, 0, 3},
		{"idle connections, no more room", 4, 1, 2, 2},
		{"more idle than it takes", 8, 0, 5, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{MaxConns: tc.maxConns})
			require.NoError(t, err)
			t.Cleanup(s.Close)
			d, err := s.CreateDomain(ctx, "supply")
			require.NoError(t, err)
			p := commit.New(s, commit.Config{ReadAheadConns: 3, ReadAheadMinChanges: 1})
			var held, idle []*pgxpool.Conn
			for range tc.held + tc.idle {
				c, err := s.Requests.Acquire(ctx)
				require.NoError(t, err)
				if len(held) < tc.held {
					held = append(held, c)
				} else {
					idle = append(idle, c)
				}
			}
			for _, c := range idle {
				c.Release()
			}
			keys := []string{"a", "b", "c", "d", "e", "f", "g", "h"}
			r, ok := commit.StartReadAheadRecords(ctx, p, d.ID, 1, keys)
			if tc.wantConns == 0 {
				require.False(t, ok, "no read-ahead")
			} else {
				require.True(t, ok)
				require.Equal(t, tc.wantConns, r.Conns())
				_, failed := r.Wait()
				require.Zero(t, failed)
			}
			for _, c := range held {
				c.Release()
			}
		})
	}
}
