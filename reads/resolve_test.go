package reads_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// resolveMentions are keys (present, deleted, revived, changed on both
// sides of a fork), exact titles, misspelled and partial mentions, and
// words no Record holds.
var resolveMentions = []string{"P-003", "P-002", "P-014", "P-012", "S-2", "Q-01", "Supplier zinc", "Supplier zinc steel",
	"Part steel steel hex", "steel", "stel hex", "Part revived steel bolt", "quartz lever", "quartz levr nut", "Supplier steel gear",
	"Suplier steel", "nested steel", "zzzz", "steel zzzz"}

// TestResolveStaticMatchesText: entity resolution on a branch read as one
// level (main, a ready copy) and on an overlay over one base (whose base
// moved on after the fork) runs lb_resolve's static statements, not the
// text lb_resolve_sql builds; on a copy still copying (two levels) too. An
// overlay of an overlay (three levels) runs the text. Either way the
// candidates, their order, scores and reasons are the text's, and an
// overlay's equal its copy's.
func TestResolveStaticMatchesText(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "resolve-static", "")
	f.fork("copying", "copy", revInfo{})
	type call struct {
		branch, mention, kind string
		limit                 int
	}
	var calls []call
	for _, br := range []string{"main", "ref", "ov", "copying", "ov2", "ref2"} {
		for _, m := range resolveMentions {
			for _, kind := range []string{"", "Part", "Supplier"} {
				for _, lim := range []int{1, 4, 20} {
					calls = append(calls, call{br, m, kind, lim})
				}
			}
		}
	}
	reasons := map[string]int{}
	require.NoError(t, pgx.BeginFunc(f.ctx, f.s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		for _, c := range calls {
			got, err := candidateRows(f.ctx, tx, `SELECT * FROM lb_resolve($1, $2, $3, $4, 1000, 100)`, c.branch, c.mention, c.kind, c.limit)
			if err != nil {
				return fmt.Errorf("lb_resolve %+v: %w", c, err)
			}
			var text string
			if err := tx.QueryRow(f.ctx, `SELECT lb_resolve_sql($1, $2, $3, $4, 1000, 100)`, c.branch, c.mention, c.kind, c.limit).Scan(&text); err != nil {
				return fmt.Errorf("lb_resolve_sql %+v: %w", c, err)
			}
			// The text runs as lb_resolve runs it: as the owner, without
			// sequential scans or parallel workers.
			if _, err := tx.Exec(f.ctx, `RESET ROLE`); err != nil {
				return err
			}
			want, err := candidateRows(f.ctx, tx, text)
			if err != nil {
				return fmt.Errorf("text of %+v: %w", c, err)
			}
			if err := store.Scope(f.ctx, tx, f.domain); err != nil {
				return err
			}
			require.Equal(t, want, got, "%+v", c)
			for _, x := range got {
				reasons[x.Reason]++
			}
		}
		return nil
	}))
	for _, r := range []string{"key", "title", "typo", "partial"} {
		require.Positive(t, reasons[r], "no candidate of reason %s in %d calls: %v", r, len(calls), reasons)
	}

	// Which path each shape takes: lb_resolve_sql is called for the
	// three-level chain only.
	for _, tc := range []struct {
		branch string
		text   bool
	}{{"main", false}, {"ref", false}, {"ov", false}, {"copying", false}, {"ov2", true}} {
		got := functionCalls(t, f, "all", []string{"lb_resolve_sql", "lb_resolve_sql_single", "lb_resolve"}, func(ctx context.Context, tx pgx.Tx) error {
			for _, m := range []string{"P-003", "stel hex", "Supplier zinc"} {
				if err := drain(tx.Query(ctx, `SELECT * FROM lb_resolve($1, $2, '', 10)`, tc.branch, m)); err != nil {
					return err
				}
			}
			return nil
		})
		require.Equal(t, int64(3), got["lb_resolve"], "%s: %v", tc.branch, got)
		require.Zero(t, got["lb_resolve_sql_single"], "%s: %v", tc.branch, got)
		if tc.text {
			require.Equal(t, int64(3), got["lb_resolve_sql"], "%s: %v", tc.branch, got)
		} else {
			require.Zero(t, got["lb_resolve_sql"], "%s: %v", tc.branch, got)
		}
	}

	// An overlay resolves as a copy holding its Records.
	for _, pair := range [][2]string{{"ov", "ref"}, {"ov2", "ref2"}} {
		for _, m := range resolveMentions {
			got, err := f.r.Resolve(f.ctx, f.domain, pair[0], m, "", 20)
			require.NoError(t, err)
			want, err := f.r.Resolve(f.ctx, f.domain, pair[1], m, "", 20)
			require.NoError(t, err)
			require.Equal(t, want.Candidates, got.Candidates, "%s against %s: %q", pair[0], pair[1], m)
		}
	}
}

// candidateRows runs a statement returning candidates (key, kind, title,
// score, reason).
func candidateRows(ctx context.Context, tx pgx.Tx, sql string, args ...any) ([]reads.Candidate, error) {
	if strings.HasPrefix(sql, "WITH") {
		if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
			return nil, err
		}
	}
	rows, err := tx.Query(ctx, sql, args...)
	if err != nil {
		return nil, err
	}
	return pgx.CollectRows(rows, pgx.RowToStructByPos[reads.Candidate])
}
