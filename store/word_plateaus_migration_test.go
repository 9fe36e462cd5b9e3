package store_test

import "testing"

// TestSearchWordPlateausMigration: migration 0030 creates the type of a
// word's plateaus that lb_search_word_plateaus returns and
// lb_search_pairs_of takes; the down migration drops both functions and
// the type (the callers of the version before call lb_search_pairs, whose
// file of that version reads the plateaus itself).
func TestSearchWordPlateausMigration(t *testing.T) {
	t.Parallel()
	requireDownDrops(t, `SELECT p.oid::regprocedure::text FROM pg_proc p
			WHERE p.proname IN ('lb_search_word_plateaus', 'lb_search_pairs_of')
			UNION ALL SELECT t.typname::text FROM pg_type t WHERE t.typname = 'lb_search_word_plateaus'
			ORDER BY 1`, []string{
		"lb_search_pairs_of(integer,integer,lb_search_word_plateaus,lb_search_word_plateaus,integer,integer,integer,integer,integer)",
		"lb_search_word_plateaus",
		"lb_search_word_plateaus(integer,integer,text,integer,integer,integer)",
	}, "0030_search_word_plateaus.down.sql")
}
