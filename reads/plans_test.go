package reads_test

import (
	"context"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

// explain gets the statements a read function runs from its companion
// (called as lorebase_app in the Domain) and EXPLAINs each as the owner:
// the read functions are SECURITY DEFINER, so that is their plan.
func explain(t *testing.T, f *fixture, companion string) string {
	t.Helper()
	ctx := context.Background()
	var plans []string
	require.NoError(t, pgx.BeginFunc(ctx, f.s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(ctx, tx, f.domain); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, companion)
		if err != nil {
			return err
		}
		stmts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		if _, err := tx.Exec(ctx, `RESET ROLE`); err != nil {
			return err
		}
		// lb_search and lb_resolve run with enable_seqscan off.
		if strings.Contains(companion, "search") || strings.Contains(companion, "resolve") {
			if _, err := tx.Exec(ctx, `SET LOCAL enable_seqscan = off`); err != nil {
				return err
			}
		}
		for _, st := range stmts {
			rows, err := tx.Query(ctx, `EXPLAIN `+st)
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plans = append(plans, lines...)
		}
		return nil
	}))
	require.NotEmpty(t, plans, companion)
	return strings.Join(plans, "\n")
}

func TestPlansUseIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "plans")
	generate(t, f, 20000)
	attrIdx := jobs.IndexName(f.domain, f.branch, "Supplier", "country")
	for _, tc := range []struct {
		name, companion string
		want            []string
	}{
		{"get", `SELECT lb_get_sql('main', 'P-77')`, []string{"_pkey"}},
		{"get at", `SELECT lb_get_sql('main', 'P-77', 1)`, []string{"mat_history_p"}},
		{"page", `SELECT lb_page_sql('main', 'Supplier', 'S-5', 51)`, []string{"Index Scan"}},
		{"page all", `SELECT lb_page_sql('main', '', 'P-5', 51)`, []string{"_pkey"}},
		{"query by attribute", `SELECT lb_query_by_attribute_sql('main', 'Supplier', 'country', 'C7', '', 51)`, []string{attrIdx}},
		{"links", `SELECT lb_links_sql('main', 'S-7', 'both', '')`, []string{"_pkey", "to_key_relation_from_key_idx"}},
		{"links at", `SELECT lb_links_sql('main', 'S-7', 'both', '', 1)`, []string{"mat_link_history_p"}},
		{"neighborhood", `SELECT lb_neighborhood_sql('main', 'S-7', 2, 200)`, []string{"to_key_relation_from_key_idx", "_pkey"}},
		{"history", `SELECT lb_history_sql('main', 'P-77', NULL, 21)`, []string{"mat_history_p"}},
		{"lineage", `SELECT lb_lineage_sql('main', 'P-77')`, []string{"_pkey"}},
		{"search", `SELECT * FROM lb_search_sql('main', 'supplier w7 w91', '', 20)`, []string{"search_idx"}},
		{"search typo", `SELECT * FROM lb_search_sql('main', 'suplpier', '', 20)`, []string{"Bitmap Index Scan"}},
		{"resolve", `SELECT lb_resolve_sql('main', 'S-7', '', 20)`, []string{"_pkey"}},
	} {
		plan := explain(t, f, tc.companion)
		for _, w := range tc.want {
			require.Contains(t, plan, w, "%s:\n%s", tc.name, plan)
		}
		require.NotRegexp(t, `Seq Scan on mat_\w+`, plan, "%s:\n%s", tc.name, plan)
	}
	// Typo correction reads the lexicon's trigram index (lb_search runs it
	// with enable_seqscan off).
	var plan []string
	tx, err := s.Pool.Begin(f.ctx)
	require.NoError(t, err)
	defer tx.Rollback(f.ctx) //nolint:errcheck // read only
	_, err = tx.Exec(f.ctx, `SET LOCAL enable_seqscan = off`)
	require.NoError(t, err)
	rows, err := tx.Query(f.ctx, `EXPLAIN SELECT word FROM mat_lexicon l WHERE l.domain_id = $1 AND l.branch_id = $2 AND l.word % 'suplpier'
		ORDER BY similarity(l.word, 'suplpier') DESC LIMIT 3`, f.domain, f.branch)
	require.NoError(t, err)
	plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	// At a thousand words the primary-key range of the branch is as cheap
	// as the trigram index; either way no scan of the whole table.
	require.NotContains(t, strings.Join(plan, "\n"), "Seq Scan")
}
