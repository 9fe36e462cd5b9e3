package commit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestCommitStatementsPreparedOnce: the statements of a commit's writes
// take the Revision's sequence number and id as parameters, so commits of
// the same shape on one connection run the statements that connection
// prepared for the first of them, and prepare none of their own. Each
// round puts the same Parts with new values, links one Part and unlinks
// another, through arrays (the default threshold) and through the staging
// tables (threshold 1); every row it writes carries its own Revision.
func TestCommitStatementsPreparedOnce(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name      string
		threshold int
	}{
		{"arrays", 0},
		{"staging tables", 1},
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
			b := &bundle{ctx: ctx, store: s, p: commit.New(s, commit.Config{CopyThresholdRows: tc.threshold}), domain: d.ID}
			_, err = b.p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
			require.NoError(t, err)
			b.commit(t, append(parts("A", 8), put("Supplier", "S-A", `{"name": "Supplier A"}`), lnk("supplied_by", "A-0", "S-A"))...)

			round := func(r int) *commit.Result {
				changes := make([]commit.Change, 0, 5)
				for i := range 3 {
					changes = append(changes, put("Part", fmt.Sprintf("P-%d", i), fmt.Sprintf(`{"name": "Part %d", "weight_kg": %d}`, i, r)))
				}
				changes = append(changes, lnk("supplied_by", fmt.Sprintf("A-%d", r), "S-A"), unlnk("supplied_by", fmt.Sprintf("A-%d", r-1), "S-A"))
				return b.commit(t, changes...)
			}
			prepared := func() int {
				var n int
				require.NoError(t, s.Requests.QueryRow(ctx, `SELECT count(*) FROM pg_prepared_statements`).Scan(&n))
				return n
			}
			round(1)
			round(2)
			first := prepared()
			for r := 3; r <= 6; r++ {
				res := round(r)
				require.Equal(t, first, prepared(), "round %d prepared statements of its own", r)

				var n int
				require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_history
					WHERE domain_id = $1 AND seq = $2 AND revision_id = $3 AND key LIKE 'P-%'`, d.ID, res.Seq, res.Revision).Scan(&n))
				require.Equal(t, 3, n, "round %d: history rows of its Revision", r)
				require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records
					WHERE domain_id = $1 AND seq = $2 AND key LIKE 'P-%' AND values->>'weight_kg' = $3`, d.ID, res.Seq, fmt.Sprint(r)).Scan(&n))
				require.Equal(t, 3, n, "round %d: Records at its Revision", r)
				require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_link_history WHERE domain_id = $1 AND seq = $2`, d.ID, res.Seq).Scan(&n))
				require.Equal(t, 2, n, "round %d: Link history rows of its Revision", r)
				require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_links WHERE domain_id = $1 AND seq = $2
					AND ((from_key = $3 AND NOT deleted) OR (from_key = $4 AND deleted))`,
					d.ID, res.Seq, fmt.Sprintf("A-%d", r), fmt.Sprintf("A-%d", r-1)).Scan(&n))
				require.Equal(t, 2, n, "round %d: the Link and the unlinked Link at its Revision", r)
			}
			require.Equal(t, []string{"A-6 supplied_by S-A l"}, b.links(t))
		})
	}
}
