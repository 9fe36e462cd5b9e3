package commit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// parts is n puts of Parts keyed prefix-0 .. prefix-(n-1).
func parts(prefix string, n int) []commit.Change {
	out := make([]commit.Change, n)
	for i := range out {
		out[i] = put("Part", fmt.Sprintf("%s-%d", prefix, i), fmt.Sprintf(`{"name": "Part %s %d", "weight_kg": %d.5}`, prefix, i, i))
	}
	return out
}

// TestStagingTablesHoldOneCommit: the staging tables a connection keeps
// between commits (temporary, emptied at the end of each transaction) hand
// a commit its own rows only. Every commit runs on the one connection of
// the pool and stages every set (threshold 1). A commit that fails or whose
// connection is killed after its rows were staged and partly written
// leaves nothing behind: no Record, history, object, Revision or Link of
// it, and the next commit on the connection (or on a new one) writes
// exactly its own rows.
func TestStagingTablesHoldOneCommit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		// body of the row trigger that stops the commit when it writes
		// the history of Part B-1
		stop string
	}{
		{"failed", `RAISE EXCEPTION 'stop the commit'`},
		{"killed", `PERFORM pg_terminate_backend(pg_backend_pid())`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			url := pgtest.NewDatabase(t)
			s, err := store.Open(ctx, url, store.Config{MaxConns: 1})
			require.NoError(t, err)
			t.Cleanup(s.Close)
			d, err := s.CreateDomain(ctx, "supply")
			require.NoError(t, err)
			b := &bundle{ctx: ctx, store: s, p: commit.New(s, commit.Config{CopyThresholdRows: 1}), domain: d.ID}
			_, err = b.p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
			require.NoError(t, err)
			_, err = s.Pool.Exec(ctx, `CREATE FUNCTION stop_commit() RETURNS trigger LANGUAGE plpgsql SECURITY DEFINER AS $$
				BEGIN
					IF NEW.key = 'B-1' THEN `+tc.stop+`; END IF;
					RETURN NEW;
				END $$;
				CREATE TRIGGER stop_commit BEFORE INSERT ON mat_history FOR EACH ROW EXECUTE FUNCTION stop_commit()`)
			require.NoError(t, err)

			b.commit(t, append(parts("A", 5), put("Supplier", "S-A", `{"name": "Supplier A"}`), put("Supplier", "S-B", `{"name": "Supplier B"}`),
				lnk("supplied_by", "A-0", "S-A"), lnk("supplied_by", "A-0", "S-B"))...)
			before := b.counts(t)

			// B stages objects, Records, history and Links, writes its
			// objects, Revision and Records, and stops in its history.
			_, err = b.p.Commit(ctx, b.domain, "main", req(append(parts("B", 4), lnk("supplied_by", "A-1", "S-A"), lnk("supplied_by", "A-1", "S-B"),
				unlnk("supplied_by", "A-0", "S-A"), unlnk("supplied_by", "A-0", "S-B"))...), "")
			require.Error(t, err)
			require.Equal(t, before, b.counts(t), "the stopped commit left rows")

			// C on the connection B used (or, B's killed, on a new one).
			res := b.commit(t, append(parts("C", 3), lnk("supplied_by", "A-2", "S-A"), lnk("supplied_by", "A-2", "S-B"))...)
			var keys []string
			rows, err := s.Pool.Query(ctx, `SELECT key FROM mat_history WHERE domain_id = $1 AND seq = $2`, b.domain, res.Seq)
			require.NoError(t, err)
			for rows.Next() {
				var k string
				require.NoError(t, rows.Scan(&k))
				keys = append(keys, k)
			}
			require.NoError(t, rows.Err())
			sort.Strings(keys)
			require.Equal(t, []string{"C-0", "C-1", "C-2"}, keys, "C's history holds C's Records only")
			var n int
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND key LIKE 'B-%'`, b.domain).Scan(&n))
			require.Zero(t, n, "B's Records")
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM objects WHERE domain_id = $1 AND body->>'key' LIKE 'B-%'`, b.domain).Scan(&n))
			require.Zero(t, n, "B's objects")
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_link_history WHERE domain_id = $1 AND seq = $2`, b.domain, res.Seq).Scan(&n))
			require.Equal(t, 2, n, "C's Link history holds C's Links only")
			require.Equal(t, []string{"A-0 supplied_by S-A l", "A-0 supplied_by S-B l", "A-2 supplied_by S-A l", "A-2 supplied_by S-B l"}, b.links(t))

			// The staging tables are empty once a commit is over.
			err = s.InDomain(ctx, b.domain, func(ctx context.Context, tx pgx.Tx) error {
				for _, stage := range []string{"lb_stage_objects", "lb_stage_records", "lb_stage_history", "lb_stage_links", "lb_stage_link_history"} {
					var n int
					if err := tx.QueryRow(ctx, `SELECT count(*) FROM `+stage).Scan(&n); err != nil {
						return fmt.Errorf("%s: %w", stage, err)
					}
					if n != 0 {
						return fmt.Errorf("%s holds %d rows", stage, n)
					}
				}
				return nil
			})
			require.NoError(t, err)
		})
	}
}
