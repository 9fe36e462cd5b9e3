package reads_test

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// TestKeptPlansOfAnotherDomainProbeByKey: a pooled connection serves every
// Domain, and a statement's generic plan, kept from its sixth execution, is
// made under the Domain in scope then. The planner estimates with the
// scope's Domain (lb_domain() is stable: it is evaluated for estimates), so
// a plan made for a small Domain the statistics do not know estimated a
// large Domain's partition at a row and read it by the Domain alone: at 10M
// Records a get by key of the large Domain took 6 s (1,221,565 buffers),
// twice in one concurrency run. The plain-SQL reads of Records and their
// history name the Domain as a parameter, unknown when planned. Here,
// generic plans forced, each read runs first for a small Domain written
// after the statistics were taken and then, on the same connection, for a
// Domain of 20,000 Records (on main, and on an overlay, whose base the
// get reads through lb_record_at): every node that ran on mat_records must
// look the key up, and on mat_history must name the key.
func TestKeptPlansOfAnotherDomainProbeByKey(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	big := newFixture(t, s, "kept-plans-big")
	generate(t, big, 20000)
	big.fork("ov", "overlay", revInfo{})
	small := newFixture(t, s, "kept-plans-small")
	small.commit("bob", "", put("Supplier", "S-1", map[string]any{"name": "one"}), put("Supplier", "S-2", map[string]any{"name": "two"}))

	conn, plans := pgtest.AutoExplainGeneric(t, s.Requests)
	read := func(f *fixture, sql string, args ...any) {
		t.Helper()
		require.NoError(t, pgx.BeginFunc(f.ctx, conn, func(tx pgx.Tx) error {
			if err := store.Scope(f.ctx, tx, f.domain); err != nil {
				return err
			}
			rows, err := tx.Query(f.ctx, sql, args...)
			if err != nil {
				return err
			}
			n := 0
			for rows.Next() {
				n++
			}
			require.Positive(t, n)
			return rows.Err()
		}))
	}
	for _, tc := range []struct {
		name string
		sql  string
		// on is the large Domain's branch ("": main); args are the
		// statement's arguments for a Domain's branch and key.
		on   string
		args func(f *fixture, branch, key string) []any
		// table is the table whose reads the case checks.
		table string
	}{
		{"get at the head", reads.GetOwnedSQLForTest, "", getArgs, "mat_records"},
		{"get through levels", reads.GetLevelsSQLForTest, "", getArgs, "mat_records"},
		{"get through an overlay's levels", reads.GetLevelsSQLForTest, "ov", getArgs, "mat_records"},
		{"history page", reads.HistorySQLForTest, "", func(f *fixture, b, k string) []any { return []any{b, k, "", 21, f.domain} }, "mat_history"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			on := tc.on
			if on == "" {
				on = "main"
			}
			read(small, tc.sql, tc.args(small, "main", "S-1")...)
			plans()
			read(big, tc.sql, tc.args(big, on, "S-1234")...)
			ran := 0
			for _, p := range plans() {
				e, err := pgtest.ParseExplained(p)
				require.NoError(t, err)
				for _, n := range pgtest.NodesOn(e.Plan, tc.table) {
					ran++
					require.Contains(t, n.IndexCond, "(key = ", "%s: %s on %s", tc.name, n.Type, n.Index)
					if tc.table == "mat_records" {
						require.Empty(t, pgtest.KeyProbeProblems(n), tc.name)
					}
				}
			}
			require.Positive(t, ran, "a node ran on %s", tc.table)
		})
	}
}

// getArgs are a head get's arguments: the branch, the key, the Domain.
func getArgs(f *fixture, branch, key string) []any { return []any{branch, key, f.domain} }
