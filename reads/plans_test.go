package reads_test

import (
	"context"
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// preparedStmt matches a companion's statement that runs a read through
// lb_rec_prepared (an overlay's page and attribute query): its first
// argument is the statement, prepared with the value and the page's start
// as $1 and $2.
var preparedStmt = regexp.MustCompile(`^SELECT \* FROM lb_rec_prepared\('((?:[^']|'')*)', `)

// explain gets the statements a read function runs from its companion
// (called as lorebase_app in the Domain) and EXPLAINs each as the owner:
// the read functions are SECURITY DEFINER, so that is their plan. A
// statement lb_rec_prepared runs is explained as it runs there: prepared,
// its generic plan (plan_cache_mode = force_generic_plan, jit and parallel
// workers off as lb_page and lb_query_by_attribute set them), whatever
// the values.
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
			lines, err := explainStmt(ctx, tx, st)
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

// explainStmt EXPLAINs one statement of a read in tx: a statement that
// lb_rec_prepared runs as the generic plan of its prepared statement.
func explainStmt(ctx context.Context, tx pgx.Tx, st string) ([]string, error) {
	m := preparedStmt.FindStringSubmatch(st)
	if m == nil {
		rows, err := tx.Query(ctx, `EXPLAIN `+st)
		if err != nil {
			return nil, err
		}
		return pgx.CollectRows(rows, pgx.RowTo[string])
	}
	for _, set := range []string{`SET LOCAL plan_cache_mode = force_generic_plan`, `SET LOCAL jit = off`,
		`SET LOCAL max_parallel_workers_per_gather = 0`} {
		if _, err := tx.Exec(ctx, set); err != nil {
			return nil, err
		}
	}
	if _, err := tx.Exec(ctx, `PREPARE explain_read(text, text) AS `+strings.ReplaceAll(m[1], "''", "'"),
		pgx.QueryExecModeSimpleProtocol); err != nil {
		return nil, err
	}
	// A prepared statement outlives the transaction.
	defer func() { _, _ = tx.Exec(ctx, `DEALLOCATE explain_read`, pgx.QueryExecModeSimpleProtocol) }()
	rows, err := tx.Query(ctx, `EXPLAIN EXECUTE explain_read(NULL, NULL)`, pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		return nil, err
	}
	lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return nil, err
	}
	return append(lines, "generic plan of lb_rec_prepared"), nil
}

func TestPlansUseIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "plans")
	generate(t, f, 20000)
	attrIdx := jobs.IndexName(f.domain, f.branch, "Supplier", "country")
	// A later change of P-77, so that as of the generated Revision it is
	// read from its history.
	var first int64
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT min(seq) FROM revisions WHERE domain_id = $1`, f.domain).Scan(&first))
	f.commit("later", "", put("Part", "P-77", map[string]any{"name": "part moved", "maker": "S-3"}))
	for _, tc := range []struct {
		name, companion string
		want            []string
	}{
		{"get", `SELECT lb_get_sql('main', 'P-77')`, []string{"_pkey"}},
		{"get at", fmt.Sprintf(`SELECT lb_get_sql('main', 'P-77', %d)`, first), []string{"mat_history_p"}},
		{"page", `SELECT lb_page_sql('main', 'Supplier', 'S-5', 51)`, []string{"Index Scan"}},
		{"page all", `SELECT lb_page_sql('main', '', 'P-5', 51)`, []string{"_pkey"}},
		{"query by attribute", `SELECT lb_query_by_attribute_sql('main', 'Supplier', 'country', 'C7', '', 51)`, []string{attrIdx}},
		// The Links' indexes cover the columns a hop reads (0022).
		{"links", `SELECT lb_links_sql('main', 'S-7', 'both', '')`, []string{`Index Only Scan using mat_links_p\d+_pkey`,
			`Index Only Scan using mat_links_p\d+_domain_id_branch_id_to_key_relation_from_key_o_idx`}},
		{"links at", fmt.Sprintf(`SELECT lb_links_sql('main', 'P-77', 'both', '', %d)`, first), []string{"mat_link_history_p"}},
		// The keys and Links of a neighborhood; its Records are read by a
		// statement of their own (TestNeighborhoodRecordsByBitmap).
		{"neighborhood", `SELECT lb_neighborhood_sql('main', 'S-7', 2, 200)`, []string{`Index Only Scan using mat_links_p\d+_pkey`,
			`Index Only Scan using mat_links_p\d+_domain_id_branch_id_to_key_relation_from_key_o_idx`}},
		{"history", `SELECT lb_history_sql('main', 'P-77', NULL, 21)`, []string{"mat_history_p"}},
		{"lineage", `SELECT lb_lineage_sql('main', 'P-77')`, []string{"_pkey"}},
		{"search", `SELECT * FROM lb_search_sql('main', 'supplier w7 w91', '', 20)`, []string{"search_idx"}},
		// Two words: besides the GIN index, the pairs of their postings'
		// score plateaus (lb_search_pairs), read from the rank index.
		{"search two words", `SELECT * FROM lb_search_sql('main', 'supplier w7', '', 20)`, []string{"search_idx", "word_score_key_idx"}},
		// Three words: besides the GIN index, the triples of their
		// postings' score plateaus (lb_search_triples), ranges of the rank
		// index. Explained here without the settings their functions run
		// them with (no hash or merge join); TestSearchTripleStatements
		// checks their plans with them.
		{"search three words", `SELECT * FROM lb_search_sql('main', 'supplier w7 w91', '', 20)`,
			[]string{"search_idx", "word_score_key_idx"}},
		// A misspelled word: its corrections' best postings.
		{"search typo", `SELECT * FROM lb_search_sql('main', 'suplpier', '', 20)`, []string{"word_score_key_idx", "_pkey"}},
		{"resolve", `SELECT lb_resolve_sql('main', 'S-7', '', 20)`, []string{"_pkey"}},
	} {
		plan := explain(t, f, tc.companion)
		for _, w := range tc.want {
			require.Regexp(t, w, plan, "%s:\n%s", tc.name, plan)
		}
		require.NotRegexp(t, `Seq Scan on mat_\w+`, plan, "%s:\n%s", tc.name, plan)
	}
	// The plain-SQL head get, as lorebase_app under row-level security and
	// with the generic plan a prepared statement ends up with: primary-key
	// probes only.
	require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		if _, err := tx.Exec(f.ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
			return err
		}
		if _, err := tx.Exec(f.ctx, `PREPARE head_get(text, text, int) AS `+reads.GetLevelsSQLForTest); err != nil {
			return err
		}
		rows, err := tx.Query(f.ctx, fmt.Sprintf(`EXPLAIN EXECUTE head_get('main', 'P-77', %d)`, f.domain))
		if err != nil {
			return err
		}
		lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		plan := strings.Join(lines, "\n")
		require.Contains(t, plan, "_pkey", plan)
		require.NotRegexp(t, `Seq Scan on mat_\w+`, plan, plan)
		_, err = tx.Exec(f.ctx, `DEALLOCATE head_get`)
		return err
	}))

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

// overlayDomain generates a Domain of n Records on main, forks the overlay
// "ov" (and the copy "cp", still copying), commits about a hundred own
// Records, Links and tombstones on the overlay, then moves main on.
func overlayDomain(t testing.TB, s *store.Store, n int) *fixture {
	t.Helper()
	f := newFixture(t, s, "overlay-plans")
	generate(t, f, n)
	ov := f.fork("ov", "overlay", revInfo{})
	cp := f.fork("cp", "copy", revInfo{})
	var cs []change
	for i := 1; i <= 60; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("O-%d", i), map[string]any{"name": fmt.Sprintf("overlay part w%d", i), "maker": fmt.Sprintf("S-%d", i)}))
	}
	for i := 1; i <= 30; i++ {
		cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i*7), map[string]any{"name": fmt.Sprintf("supplier w%d overlaid", i), "country": "C7"}))
	}
	for i := 1; i <= 10; i++ {
		cs = append(cs, link("supplied_by", fmt.Sprintf("O-%d", i), fmt.Sprintf("S-%d", i+100)))
	}
	ov.commit("agent", "", cs...)
	ov.commit("agent", "", del("O-1"), del("O-2"), unlink("supplied_by", "O-3", "S-103"))
	cp.commit("agent", "", put("Part", "Q-1", map[string]any{"name": "copy part"}))
	cp.materialize()
	cs = nil
	for i := 1; i <= 50; i++ {
		cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i*13), map[string]any{"name": fmt.Sprintf("supplier w%d moved", i), "country": "C9"}))
	}
	f.commit("main", "", cs...)
	for _, tb := range []string{"mat_records", "mat_links", "mat_history", "mat_link_history", "mat_lexicon", "mat_search_words", "revisions", "refs"} {
		_, err := s.Pool.Exec(f.ctx, "ANALYZE "+tb)
		require.NoError(t, err)
	}
	return ov
}

func TestOverlayPlansUseIndexes(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ov := overlayDomain(t, s, 20000)
	main := ov.on("main")
	attrIdx := jobs.IndexName(main.domain, main.branch, "Supplier", "country")
	for _, br := range []string{"ov", "cp"} {
		for _, tc := range []struct {
			name, companion string
			want            []string
		}{
			{"get", `SELECT lb_get_sql('%s', 'P-77')`, []string{"_pkey"}},
			{"page", `SELECT lb_page_sql('%s', 'Supplier', 'S-5', 51)`, []string{"Merge Append"}},
			{"page all", `SELECT lb_page_sql('%s', '', 'P-5', 51)`, []string{"_pkey", "Merge Append"}},
			{"query by attribute", `SELECT lb_query_by_attribute_sql('%s', 'Supplier', 'country', 'C7', '', 51)`, []string{attrIdx}},
			{"links", `SELECT lb_links_sql('%s', 'S-7', 'both', '')`, []string{`Index Only Scan using mat_links_p\d+_pkey`,
				`Index Only Scan using mat_links_p\d+_domain_id_branch_id_to_key_relation_from_key_o_idx`}},
			{"neighborhood", `SELECT lb_neighborhood_sql('%s', 'S-7', 2, 200)`, []string{`Index Only Scan using mat_links_p\d+_pkey`,
				`Index Only Scan using mat_links_p\d+_domain_id_branch_id_to_key_relation_from_key_o_idx`, `mat_records_p\d+_pkey`}},
			{"history", `SELECT lb_history_sql('%s', 'S-7', NULL, 21)`, []string{"mat_history_p"}},
			{"lineage", `SELECT lb_lineage_sql('%s', 'S-13')`, []string{"_pkey"}},
			{"search", `SELECT * FROM lb_search_sql('%s', 'supplier w7 w91', '', 20)`, []string{"search_idx"}},
			{"search typo", `SELECT * FROM lb_search_sql('%s', 'suplpier', '', 20)`, nil},
			{"resolve", `SELECT lb_resolve_sql('%s', 'S-7', '', 20)`, []string{"_pkey"}},
		} {
			plan := explain(t, ov, fmt.Sprintf(tc.companion, br))
			want := tc.want
			if br == "ov" && strings.HasPrefix(tc.name, "search") {
				// The keys whose search main changed after the fork: the
				// range of mat_records_iseq_idx past the fork, not every
				// key main changed (the history's seq index).
				want = append(append([]string(nil), want...), `Index Scan using mat_records_p\d+_domain_id_branch_id_iseq_idx`, `iseq > `)
				require.NotContains(t, plan, "branch_id_seq_key_idx", "%s %s", br, tc.name)
			}
			if br == "ov" && (strings.HasPrefix(tc.name, "page") || tc.name == "query by attribute") {
				// Prepared once a session, its generic plan.
				want = append(append([]string(nil), want...), "generic plan of lb_rec_prepared")
			}
			for _, w := range want {
				require.Regexp(t, w, plan, "%s %s:\n%s", br, tc.name, plan)
			}
			require.NotRegexp(t, `Seq Scan on mat_\w+`, plan, "%s %s:\n%s", br, tc.name, plan)
		}
	}
	// On main the attribute query compares the index's expression on
	// ivals, and the plan reads the index.
	var stmt string
	require.NoError(t, ov.s.InDomain(ov.ctx, ov.domain, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT lb_query_by_attribute_sql('main', 'Supplier', 'country', 'C7', '', 51)`).Scan(&stmt)
	}))
	require.Contains(t, stmt, `(m.ivals ->> 'country') = 'C7'`)
	plan := explain(t, ov, `SELECT lb_query_by_attribute_sql('main', 'Supplier', 'country', 'C7', '', 51)`)
	require.Contains(t, plan, attrIdx, plan)
	require.NotRegexp(t, `Seq Scan on mat_\w+`, plan)
	// The plain-SQL head get on the overlay and on the copy still copying
	// (two levels, lb_record_at inlined), as lorebase_app with the generic
	// plan a prepared statement ends up with: primary-key probes only.
	require.NoError(t, pgx.BeginFunc(ov.ctx, s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(ov.ctx, tx, ov.domain); err != nil {
			return err
		}
		if _, err := tx.Exec(ov.ctx, `SET LOCAL plan_cache_mode = force_generic_plan`); err != nil {
			return err
		}
		if _, err := tx.Exec(ov.ctx, `PREPARE head_get(text, text, int) AS `+reads.GetLevelsSQLForTest); err != nil {
			return err
		}
		for _, br := range []string{"ov", "cp"} {
			rows, err := tx.Query(ov.ctx, fmt.Sprintf(`EXPLAIN EXECUTE head_get('%s', 'S-13', %d)`, br, ov.domain))
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan := strings.Join(lines, "\n")
			require.Regexp(t, `Index Scan using mat_records_p\d+_pkey`, plan, plan)
			require.Regexp(t, `Index Scan Backward using mat_history_p\d+_pkey`, plan, plan)
			require.NotRegexp(t, `Seq Scan on mat_\w+`, plan, plan)
		}
		// The plain-SQL history page likewise: the history's primary key.
		if _, err := tx.Exec(ov.ctx, `PREPARE history_page(text, text, text, int, int) AS `+reads.HistorySQLForTest); err != nil {
			return err
		}
		for _, br := range []string{"ov", "cp"} {
			rows, err := tx.Query(ov.ctx, fmt.Sprintf(`EXPLAIN EXECUTE history_page('%s', 'S-13', '', 21, %d)`, br, ov.domain))
			if err != nil {
				return err
			}
			lines, err := pgx.CollectRows(rows, pgx.RowTo[string])
			if err != nil {
				return err
			}
			plan := strings.Join(lines, "\n")
			require.Regexp(t, `Index Scan Backward using mat_history_p\d+_pkey`, plan, plan)
			require.NotRegexp(t, `Seq Scan on mat_\w+`, plan, plan)
		}
		_, err := tx.Exec(ov.ctx, `DEALLOCATE head_get; DEALLOCATE history_page`)
		return err
	}))
	// The overlay over main reads main's rows by the same index.
	plan = explain(t, ov, `SELECT lb_query_by_attribute_sql('ov', 'Supplier', 'country', 'C7', '', 51)`)
	require.Contains(t, plan, "Index Scan using "+attrIdx, plan)
	// main's keys whose Kind or indexed values changed after the fork come
	// from mat_records_iseq_idx, not from every key main changed.
	require.Regexp(t, `Index Scan using mat_records_p\d+_domain_id_branch_id_iseq_idx`, plan)
	require.NotContains(t, plan, "branch_id_seq_key_idx", plan)
	// The overlay as of a Revision of main before the fork, and main as
	// of the same Revision.
	var first int64
	require.NoError(t, s.Pool.QueryRow(ov.ctx, `SELECT min(seq) FROM revisions WHERE domain_id = $1`, ov.domain).Scan(&first))
	for _, br := range []string{"ov", "main"} {
		for _, c := range []string{
			`SELECT lb_get_sql('%s', 'S-13', %d)`,
			`SELECT lb_page_sql('%s', 'Supplier', 'S-5', 51, %d)`,
			`SELECT lb_links_sql('%s', 'S-13', 'both', '', %d)`,
			`SELECT * FROM lb_search_sql('%s', 'supplier w7', '', 20, %d)`,
		} {
			plan := explain(t, ov, fmt.Sprintf(c, br, first))
			require.NotRegexp(t, `Seq Scan on mat_\w+`, plan, "%s %s:\n%s", br, c, plan)
		}
	}
}

// TestLevelStatementsInFunctions checks that the read functions run the
// multi-level statements their companions return: each function's body
// holds the text of lb_levels_stmt (static SQL over the level parameters).
func TestLevelStatementsInFunctions(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	ctx := context.Background()
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	for _, tc := range []struct{ stmt, fn string }{
		{"get", "lb_get"},
		{"present", "lb_links"},
		{"links", "lb_links"},
		{"present", "lb_neighborhood"},
		{"neighborhood", "lb_neighborhood"},
	} {
		var stmt, src string
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT lb_levels_stmt($1)`, tc.stmt).Scan(&stmt))
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT prosrc FROM pg_proc WHERE proname = $1`, tc.fn).Scan(&src))
		require.NotEmpty(t, stmt, tc.stmt)
		require.Contains(t, norm(src), norm(stmt), "%s does not run lb_levels_stmt('%s')", tc.fn, tc.stmt)
	}
}
