package commit

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestPostingsTriggerProbesByKeyForANewDomain: a Domain created in the
// partition of a larger one, whose 20,000 Records filled it before the
// statistics were taken, writes 20,000 Records of its own (postings and
// lexicon by the trigger). An update that changes 5 of its Records' search
// vectors and a deletion of 2 then find the postings and lexicon rows they
// change through the primary keys: every node of the trigger's statements
// that ran on mat_search_words or mat_lexicon is a probe of the Domain,
// branch and key (or word). With the Domain as a constant the planner
// estimates its branch at a row and scans all of its postings and lexicon
// once per row looked up. The postings and lexicon left are those of the
// Records' search vectors.
func TestPostingsTriggerProbesByKeyForANewDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, big := supplyDomain(t)
	d := pgtest.DomainBeside(t, s.Pool, big.ID, func(name string) (*store.Domain, int32) {
		n, err := s.CreateDomain(ctx, name)
		require.NoError(t, err)
		return n, n.ID
	})
	mainOf := func(domainID int32) int32 {
		var id int32
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, domainID).Scan(&id))
		return id
	}
	pgtest.AutovacuumOff(t, s.Pool, "mat_records", "mat_search_words", "mat_lexicon")
	// Each Record holds three words of its own and two common ones.
	const records = 20000
	fill := func(domainID, branch int32) {
		_, err := s.Pool.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq, versions)
		SELECT $1, $2, 'P-' || i, 'Part', 'part ' || i, jsonb_build_object('name', 'part ' || i),
		       to_tsvector('simple', 'part bolt w' || i || ' x' || (i % 5000) || ' y' || (i % 700)), jsonb_build_object('name', 1), 1, 1, 1
		  FROM generate_series(1, $3::int) i`, domainID, branch, records)
		require.NoError(t, err)
	}
	fill(big.ID, mainOf(big.ID))
	_, err := s.Pool.Exec(ctx, `ANALYZE mat_records, mat_search_words, mat_lexicon`)
	require.NoError(t, err)
	branch := mainOf(d.ID)
	fill(d.ID, branch)

	conn, plans := pgtest.AutoExplain(t, s.Pool, true)
	_, err = conn.Exec(ctx, `SET auto_explain.log_format = json`)
	require.NoError(t, err)
	check := func(what string) {
		t.Helper()
		n := 0
		for _, p := range plans() {
			e, err := pgtest.ParseExplained(p)
			require.NoError(t, err)
			if strings.Contains(e.Query, "mat_search_words s") {
				n++
				t.Logf("%s: %s", what, strings.TrimSpace(p[:strings.Index(p, "{")]))
				requireKeyProbes(t, e.Plan, p)
			}
		}
		require.Positive(t, n, "%s: the trigger's statements on the postings reported", what)
	}
	tag, err := conn.Exec(ctx, `UPDATE mat_records SET search = to_tsvector('simple', 'part nut w' || key), seq = seq + 1
		WHERE domain_id = $1 AND branch_id = $2 AND key = ANY ($3)`, d.ID, branch, []string{"P-5", "P-50", "P-500", "P-5000", "P-15000"})
	require.NoError(t, err)
	require.EqualValues(t, 5, tag.RowsAffected())
	check("update")
	tag, err = conn.Exec(ctx, `DELETE FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = ANY ($3)`,
		d.ID, branch, []string{"P-6", "P-60"})
	require.NoError(t, err)
	require.EqualValues(t, 2, tag.RowsAffected())
	check("deletion")

	// The postings and the lexicon still say what the search vectors say.
	var postings, wanted, lexicon int64
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT
		(SELECT count(*) FROM mat_search_words WHERE domain_id = $1 AND branch_id = $2),
		(SELECT count(*) FROM mat_records m, unnest(tsvector_to_array(m.search)) w WHERE m.domain_id = $1 AND m.branch_id = $2 AND NOT m.deleted),
		(SELECT coalesce(sum(records), 0) FROM mat_lexicon WHERE domain_id = $1 AND branch_id = $2)`, d.ID, branch).Scan(&postings, &wanted, &lexicon))
	require.Equal(t, wanted, postings)
	require.Equal(t, wanted, lexicon)
	var nut, bolt int64
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT
		(SELECT records FROM mat_lexicon WHERE domain_id = $1 AND branch_id = $2 AND word = 'nut'),
		(SELECT records FROM mat_lexicon WHERE domain_id = $1 AND branch_id = $2 AND word = 'bolt')`, d.ID, branch).Scan(&nut, &bolt))
	require.EqualValues(t, 5, nut)
	require.EqualValues(t, records-5-2, bolt)
}
