package reads_test

import (
	"fmt"
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
// look the key up, and on mat_history must name the key. lb_search's
// statements keep generic plans too (plan_cache_mode force_generic_plan in
// lb_search_run and lb_search_overlay): each query runs first for the
// small Domain, then for the large one, on main and on an overlay with 40
// Records of its own (one word, a misspelled one, a rare one, two and
// three words), and no node may read more than searchBound rows.
func TestKeptPlansOfAnotherDomainProbeByKey(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	big := newFixture(t, s, "kept-plans-big")
	generate(t, big, 20000)
	ov := big.fork("ov", "overlay", revInfo{})
	var cs []change
	for i := 0; i < 40; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("O-%02d", i), map[string]any{"name": fmt.Sprintf("part w%d other", i)}))
	}
	ov.commit("agent", "", cs...)
	small := newFixture(t, s, "kept-plans-small")
	small.commit("bob", "", put("Supplier", "S-1", map[string]any{"name": "one"}), put("Supplier", "S-2", map[string]any{"name": "two"}),
		put("Part", "P-1", map[string]any{"name": "part w1 w2"}))
	small.fork("ov", "overlay", revInfo{}).commit("bob", "", put("Part", "P-3", map[string]any{"name": "part w4"}))

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
	// The search statements, on the same connection.
	const search = `SELECT key FROM lb_search($1, $2, '', 20) WHERE match <> 'corrections'`
	for _, q := range []string{"part", "prat", "w1", "part w1", "part w1 w2"} {
		for _, branch := range []string{"main", "ov"} {
			t.Run(q+" on "+branch, func(t *testing.T) {
				read(small, search, branch, q)
				plans()
				read(big, search, branch, q)
				ran := 0
				for _, p := range plans() {
					e, err := pgtest.ParseExplained(p)
					require.NoError(t, err)
					for _, table := range []string{"mat_records", "mat_search_words", "mat_history"} {
						for _, n := range pgtest.NodesOn(e.Plan, table) {
							ran++
							require.LessOrEqual(t, n.Rows*n.Loops, float64(searchBound), "%s on %s: %s on %s (%s): %s",
								q, branch, n.Type, n.Relation+n.Index, n.IndexCond, p)
						}
					}
				}
				require.Positive(t, ran)
			})
		}
	}
}

// searchBound is the most rows a node of a search statement may read at
// 20,000 Records: a score plateau's size is counted up to 4,097 postings
// (lb_search_plateau_count), every other read is bounded by the answer.
const searchBound = 4097

// getArgs are a head get's arguments: the branch, the key, the Domain.
func getArgs(f *fixture, branch, key string) []any { return []any{branch, key, f.domain} }
