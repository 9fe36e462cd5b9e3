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

// TestOverlayMisspelledWordMatchesCopy: a misspelled word on an overlay
// (the term the OR of its corrections) ranks the overlay's own Records
// from their postings: more of them hold a correction than the limit,
// some hold two corrections (ranked above those holding one), some are
// tombstones, and the base moved on after the fork in searched text. The
// results and corrections equal a copy's holding the same Records, at
// every limit.
func TestOverlayMisspelledWordMatchesCopy(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newStore(t), "overlay-misspelled")
	var cs []change
	for i := 0; i < 30; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("B-%02d", i), map[string]any{"name": []string{"Part gasket", "Part gaskets seal", "Part gasket gaskets", "Part casket"}[i%4],
			"note": strings.Repeat("gasket ", i%3), "maker": "S-1"}))
	}
	cs = append(cs, put("Supplier", "S-1", map[string]any{"name": "Supplier gasket works", "country": "C1"}))
	f.commit("alice", "", cs...)
	ov := f.fork("ov", "overlay", revInfo{})
	cs = nil
	for i := 0; i < 25; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("O-%02d", i), map[string]any{"name": []string{"Part gasket", "Part gaskets", "Part gasket gaskets casket", "Part other"}[i%4],
			"note": strings.Repeat("gaskets ", i%5), "maker": "S-1"}))
	}
	cs = append(cs, patch("B-01", map[string]any{"name": "Part gasket gaskets gasket"}), del("B-02"), del("B-06"),
		patch("B-03", map[string]any{"name": "Part plain"}))
	ov.commit("agent", "", cs...)
	f.commit("bob", "", patch("B-05", map[string]any{"name": "Part gaskets moved"}), patch("B-09", map[string]any{"name": "Part other"}),
		put("Part", "B-99", map[string]any{"name": "Part gasket late", "maker": "S-1"}))
	readyCopy(ov, "ref")
	checked := 0
	for _, q := range []string{"gaskte", "gaskst", "gsaket", "gasket", "gaskets", "caskte"} {
		for _, lim := range []int{1, 2, 3, 7, 20, 100} {
			for _, kind := range []string{"", "Part"} {
				sq := reads.SearchQuery{Q: q, Limit: lim, Kind: kind}
				want, err := f.r.Search(f.ctx, f.domain, "ref", sq)
				require.NoError(t, err)
				got, err := f.r.Search(f.ctx, f.domain, "ov", sq)
				require.NoError(t, err)
				require.Equal(t, want.Results, got.Results, "%+v", sq)
				require.Equal(t, want.Corrections, got.Corrections, "%+v", sq)
				if len(want.Corrections) > 0 && len(want.Results) > 0 {
					checked++
				}
			}
		}
	}
	require.Positive(t, checked, "no misspelled word was corrected")
}
