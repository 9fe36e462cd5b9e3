package commit_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/store"
)

// TestUpdatesAreHOT: a commit that changes Records' values but no column an
// index of mat_records reads (no searched text: the search vector stays
// byte-equal) updates them in place, as HOT updates that write no index
// entry; a change of searched text, or any per-Attribute index on the
// partition (an expression on values), makes every update a non-HOT one.
// The updates are counted by pg_stat_xact_user_tables inside the commit's
// own transaction (CommitLocked).
func TestUpdatesAreHOT(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		ddl     string // run as the owner before the commit
		patch   func(i int) string
		wantHOT bool
	}{
		{name: "an Attribute no index reads", patch: func(i int) string { return `{"tier": "silver"}` }, wantHOT: true},
		{name: "an indexed Attribute, no per-Attribute index built", patch: func(i int) string { return fmt.Sprintf(`{"country": "C%d"}`, i+10) }, wantHOT: true},
		{name: "searched text", patch: func(i int) string { return fmt.Sprintf(`{"name": "Supplier renamed %d"}`, i) }},
		{name: "an Attribute no index reads, a per-Attribute index on the partition",
			ddl:   `CREATE INDEX supplier_country_idx ON mat_records (("values" ->> 'country'), key) WHERE kind = 'Supplier'`,
			patch: func(i int) string { return `{"tier": "silver"}` }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, commit.Config{})
			const n = 5 // their old and new versions fit on one heap page
			var cs []commit.Change
			for i := 0; i < n; i++ {
				cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i), fmt.Sprintf(`{"name": "Supplier %d", "country": "C%d", "tier": "gold"}`, i, i)))
			}
			b.commit(t, cs...)
			if tc.ddl != "" {
				_, err := b.store.Pool.Exec(b.ctx, tc.ddl)
				require.NoError(t, err)
			}
			cs = cs[:0]
			for i := 0; i < n; i++ {
				cs = append(cs, patch(fmt.Sprintf("S-%d", i), tc.patch(i)))
			}
			var upd, hot int64
			err := b.store.InDomain(b.ctx, b.domain, func(ctx context.Context, tx pgx.Tx) error {
				br, err := store.LockBranch(ctx, tx, "main")
				if err != nil {
					return err
				}
				if _, err := b.p.CommitLocked(ctx, tx, b.domain, br, req(cs...), nil, false); err != nil {
					return err
				}
				return tx.QueryRow(ctx, `SELECT coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0)
					FROM pg_stat_xact_user_tables WHERE relname LIKE 'mat_records_p%'`).Scan(&upd, &hot)
			})
			require.NoError(t, err)
			require.EqualValues(t, n, upd, "updates of mat_records")
			if tc.wantHOT {
				require.EqualValues(t, n, hot, "HOT updates")
			} else {
				require.Zero(t, hot, "HOT updates")
			}
			for i := 0; i < n; i++ {
				r := b.record(t, fmt.Sprintf("S-%d", i))
				require.NotNil(t, r)
				require.EqualValues(t, 2, r.Versions)
			}
		})
	}
}
