package commit_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
)

// lexiconDiff compares the word lexicon of main with a count of the words
// of its live Records, both ways; it returns the words that differ.
func (b *bundle) lexiconDiff(t testing.TB) []string {
	t.Helper()
	rows, err := b.store.Pool.Query(b.ctx, `
		WITH kept AS (
			SELECT l.word, l.records FROM mat_lexicon l JOIN refs r ON r.domain_id = l.domain_id AND r.id = l.branch_id
			 WHERE l.domain_id = $1 AND r.name = 'main'),
		counted AS (
			SELECT w AS word, count(*)::int AS records
			  FROM mat_records m JOIN refs r ON r.domain_id = m.domain_id AND r.id = m.branch_id,
			       unnest(tsvector_to_array(m.search)) w
			 WHERE m.domain_id = $1 AND r.name = 'main' AND NOT m.deleted
			 GROUP BY w)
		SELECT 'kept ' || word || ':' || records FROM (SELECT * FROM kept EXCEPT SELECT * FROM counted) a
		UNION ALL
		SELECT 'counted ' || word || ':' || records FROM (SELECT * FROM counted EXCEPT SELECT * FROM kept) b
		ORDER BY 1`, b.domain)
	require.NoError(t, err)
	defer rows.Close()
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// TestLexiconFollowsCommits checks the word lexicon the mat_records
// triggers keep against the words of the Records after each commit: new
// Records, updates that keep their words (the common case), updates that
// change them, deletions, puts again after a deletion and a Record put
// again under another Kind.
func TestLexiconFollowsCommits(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	steps := []struct {
		name    string
		changes []commit.Change
		word    string
		records int
	}{
		{"new records", []commit.Change{
			put("Supplier", "S-1", `{"name": "Acme steel works", "vat": "V1"}`),
			put("Supplier", "S-2", `{"name": "Bolt steel"}`),
			put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1", "weight_kg": 1.5}`),
			put("Part", "P-2", `{"name": "Hex nut", "maker": "S-2"}`),
			put("Warehouse", "W-1", `{"name": "North depot"}`),
		}, "steel", 2},
		{"words kept", []commit.Change{
			patch("P-1", `{"weight_kg": 2.5}`),
			put("Part", "P-2", `{"name": "Hex nut", "maker": "S-1", "weight_kg": 3}`),
			patch("S-1", `{"tier": "gold"}`),
		}, "hex", 2},
		{"words changed", []commit.Change{
			patch("P-1", `{"name": "Flange bolt"}`),
			patch("S-2", `{"name": "Bolt copper"}`),
		}, "steel", 1},
		{"deleted", []commit.Change{del("W-1"), del("P-2")}, "hex", 0},
		{"put again", []commit.Change{put("Part", "P-2", `{"name": "Hex nut again", "maker": "S-2"}`)}, "hex", 1},
		{"other kind", []commit.Change{del("P-2"), put("Warehouse", "P-2", `{"name": "Hex depot"}`)}, "depot", 1},
		{"mixed", []commit.Change{
			patch("P-1", `{"weight_kg": 9}`),
			patch("S-1", `{"name": "Acme works"}`),
			put("Supplier", "S-3", `{"name": "Steel again"}`),
			del("P-2"),
		}, "steel", 1},
	}
	for _, s := range steps {
		b.commit(t, s.changes...)
		require.Empty(t, b.lexiconDiff(t), "after %s", s.name)
		var n int
		err := b.store.Pool.QueryRow(b.ctx, `SELECT coalesce(sum(records), 0) FROM mat_lexicon WHERE domain_id = $1 AND word = $2`, b.domain, s.word).Scan(&n)
		require.NoError(t, err)
		require.Equal(t, s.records, n, "records holding %q after %s", s.word, s.name)
	}
	var zero int
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT count(*) FROM mat_lexicon WHERE domain_id = $1 AND records <= 0`, b.domain).Scan(&zero))
	require.Zero(t, zero, "words no Record holds leave the lexicon")
}

// TestRevisionChangesStoredWithLZ4 checks that a Revision's change list,
// large enough to be compressed, is stored with lz4 (migration 0007).
func TestRevisionChangesStoredWithLZ4(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	res := b.commit(t, benchChanges(1, 200)...)
	var method *string
	err := b.store.Pool.QueryRow(b.ctx, `SELECT pg_column_compression(changes) FROM revisions WHERE domain_id = $1 AND id = $2`,
		b.domain, res.Revision).Scan(&method)
	require.NoError(t, err)
	require.NotNil(t, method, "a change list of 200 changes is compressed")
	require.Equal(t, "lz4", *method)
}
