package keeper_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/jobkind"
)

// TestLargeCommitAnalyzesItsDomain: through Keeper, a commit that creates
// 1,200 Records and Links queues store.analyze for its Domain, and Keeper's
// job client runs it: the job completes and the Domain's partition of
// mat_records has been analyzed since the commit. A small commit of
// another Domain queues none.
func TestLargeCommitAnalyzesItsDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	e := testServer(t)
	small := e.withSupply("small")
	e.seedSupply("small", small, 3)
	admin := e.withSupply("acme")
	var before string
	require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT now()::text`).Scan(&before))
	e.seedSupply("acme", admin, 400)
	state := func(domain string) (string, int) {
		var s string
		var n int
		require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT coalesce(max(j.state::text), ''), count(j.id)::int
			FROM domains d LEFT JOIN river_job j ON j.kind = $2 AND (j.args->>'domain_id')::int = d.id
			WHERE d.name = $1`, domain, jobkind.Analyze).Scan(&s, &n))
		return s, n
	}
	e.waitFor("the analyze job of acme", func() bool {
		s, n := state("acme")
		require.LessOrEqual(t, n, 1)
		return s == "completed"
	})
	_, n := state("small")
	require.Zero(t, n, "a commit of 9 Records and Links queues no analyze")
	var analyzed bool
	require.NoError(t, e.Store.Pool.QueryRow(ctx, `SELECT s.last_analyze > $2::timestamptz
		FROM pg_stat_user_tables s
		WHERE s.relid = (SELECT m.tableoid FROM mat_records m JOIN domains d ON d.id = m.domain_id WHERE d.name = $1 LIMIT 1)`,
		"acme", before).Scan(&analyzed))
	require.True(t, analyzed, "acme's partition of mat_records analyzed after its commit")
}
