package store_test

import "testing"

// TestSearchTripleRowsMigration: after migration 0029 lb_search_triples has
// one form (with p_pair) and the plateau read from its rows is
// lb_search_triple_rows, the forms before gone; the down migration drops
// the new forms, leaving the version before's files to create theirs.
func TestSearchTripleRowsMigration(t *testing.T) {
	t.Parallel()
	requireDownDrops(t, `SELECT p.oid::regprocedure::text FROM pg_proc p
			WHERE p.proname IN ('lb_search_triples', 'lb_search_triple_rows', 'lb_search_triple_rows_sql',
			                    'lb_search_triple_plateau', 'lb_search_triple_plateau_sql')
			ORDER BY 1`, []string{
		"lb_search_triple_rows(integer,integer,text[],integer[],real[],integer)",
		"lb_search_triple_rows_sql(integer,integer,text[],integer[],real[],integer)",
		"lb_search_triples(integer,integer,text[],integer,integer,integer,integer,integer,integer,integer)",
	}, "0029_search_triple_rows.down.sql")
}
