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
// byte-equal; no indexed Attribute: ivals stays byte-equal) updates them in
// place, as HOT updates that write no index entry, also with per-Attribute
// indexes (on ivals) on the partition; a change of searched text or of an
// Attribute whose index the branch records is a non-HOT update. The
// updates are counted by pg_stat_xact_user_tables inside the commit's own
// transaction (CommitLocked). iseq moves to the commit's seq in the non-HOT
// updates alone (migrations/0023_record_iseq).
// indexCountry records and builds the per-Attribute index of
// Supplier.country on main, as the store.index job does (ready: the
// commits then write the values into ivals).
func indexCountry(t *testing.T, b *bundle) {
	t.Helper()
	_, err := b.store.Pool.Exec(b.ctx, `INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute, name, ready)
		SELECT domain_id, id, 'Supplier', 'country', 'supplier_country_idx', true FROM refs WHERE domain_id = $1 AND name = 'main'`, b.domain)
	require.NoError(t, err)
	_, err = b.store.Pool.Exec(b.ctx, fmt.Sprintf(`CREATE INDEX supplier_country_idx ON mat_records ((ivals ->> 'country'), key)
		WHERE domain_id = %d AND kind = 'Supplier'`, b.domain))
	require.NoError(t, err)
}

func TestUpdatesAreHOT(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name    string
		index   bool // Supplier.country indexed before the Records are written
		patch   func(i int) string
		wantHOT bool
	}{
		{name: "an Attribute no index reads", patch: func(i int) string { return `{"tier": "silver"}` }, wantHOT: true},
		{name: "an indexed Attribute, no per-Attribute index built", patch: func(i int) string { return fmt.Sprintf(`{"country": "C%d"}`, i+10) }, wantHOT: true},
		{name: "searched text", patch: func(i int) string { return fmt.Sprintf(`{"name": "Supplier renamed %d"}`, i) }},
		{name: "an Attribute no index reads, a per-Attribute index on the partition", index: true,
			patch: func(i int) string { return `{"tier": "silver"}` }, wantHOT: true},
		{name: "an indexed Attribute, its per-Attribute index built", index: true,
			patch: func(i int) string { return fmt.Sprintf(`{"country": "C%d"}`, i+10) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, commit.Config{})
			if tc.index {
				indexCountry(t, b)
			}
			const n = 5 // their old and new versions fit on one heap page
			var cs []commit.Change
			for i := 0; i < n; i++ {
				cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i), fmt.Sprintf(`{"name": "Supplier %d", "country": "C%d", "tier": "gold"}`, i, i)))
			}
			b.commit(t, cs...)
			cs = cs[:0]
			for i := 0; i < n; i++ {
				cs = append(cs, patch(fmt.Sprintf("S-%d", i), tc.patch(i)))
			}
			var upd, hot, moved int64
			err := b.store.InDomain(b.ctx, b.domain, func(ctx context.Context, tx pgx.Tx) error {
				br, err := store.LockBranch(ctx, tx, "main")
				if err != nil {
					return err
				}
				if _, err := b.p.CommitLocked(ctx, tx, b.domain, br, req(cs...), nil, false); err != nil {
					return err
				}
				if err := tx.QueryRow(ctx, `SELECT coalesce(sum(n_tup_upd), 0), coalesce(sum(n_tup_hot_upd), 0)
					FROM pg_stat_xact_user_tables WHERE relname LIKE 'mat_records_p%'`).Scan(&upd, &hot); err != nil {
					return err
				}
				// iseq (migrations/0023_record_iseq) moves to the commit's
				// seq with the search vector or the indexed values, and
				// only then.
				return tx.QueryRow(ctx, `SELECT count(*) FILTER (WHERE iseq = seq) FROM mat_records
					WHERE domain_id = $1 AND key LIKE 'S-%' AND versions = 2`, b.domain).Scan(&moved)
			})
			require.NoError(t, err)
			require.EqualValues(t, n, upd, "updates of mat_records")
			if tc.wantHOT {
				require.EqualValues(t, n, hot, "HOT updates")
				require.Zero(t, moved, "rows whose iseq moved")
			} else {
				require.Zero(t, hot, "HOT updates")
				require.EqualValues(t, n, moved, "rows whose iseq moved")
			}
			for i := 0; i < n; i++ {
				r := b.record(t, fmt.Sprintf("S-%d", i))
				require.NotNil(t, r)
				require.EqualValues(t, 2, r.Versions)
			}
		})
	}
}
