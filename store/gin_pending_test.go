package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/migrations"
)

// TestGinPendingListBounded: migration 0025 bounds the pending list of the
// GIN indexes searches read (each partition's search vectors, the
// lexicon's trigrams) to 256 kB, so after inserting Records whose entries
// would fill many more pages, a scan has at most 32 pending pages to read;
// its down migration gives them the server's limit back.
func TestGinPendingListBounded(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	d, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&branch))
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := s.Pool.Exec(ctx, sql, args...)
		require.NoError(t, err, sql)
	}
	exec(`CREATE EXTENSION IF NOT EXISTS pgstattuple`)
	// No autovacuum merges a pending list while the test counts it.
	exec(`DO $$ DECLARE t regclass; BEGIN
		FOR t IN SELECT inhrelid::regclass FROM pg_inherits WHERE inhparent = 'mat_records'::regclass UNION ALL SELECT 'mat_lexicon'::regclass LOOP
			EXECUTE format('ALTER TABLE %s SET (autovacuum_enabled = false)', t);
		END LOOP; END $$`)

	// Every index the migration names carries the limit.
	var limited, all int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FILTER (WHERE 'gin_pending_list_limit=256' = ANY (c.reloptions)), count(*)
		FROM pg_class c
		WHERE c.oid IN (SELECT inhrelid FROM pg_inherits WHERE inhparent = 'mat_records_search_idx'::regclass)
		   OR c.oid = 'mat_lexicon_trgm_idx'::regclass`).Scan(&limited, &all))
	require.Equal(t, 9, all, "8 partitions and the lexicon's index")
	require.Equal(t, all, limited)

	var part string
	pending := func(round int) (search, lexicon int) {
		t.Helper()
		// 4,000 Records of 12 words each, 3,000 of the words new to the
		// lexicon: about 48,000 search entries and 24,000 trigram
		// entries pending, far over 32 pages at the server's 4 MB.
		exec(`INSERT INTO mat_records (domain_id, branch_id, key, kind, title, search, created_seq, seq)
			SELECT $1, $2, 'R-' || $3::int || '-' || i, 'Part', 'R ' || i,
			       to_tsvector('simple', (SELECT string_agg('w' || $3::int || 'x' || ((i * 7 + j * 131) % 3000), ' ') FROM generate_series(1, 12) j)), 1, 1
			  FROM generate_series(1, 4000) i`, d.ID, branch, round)
		if part == "" {
			require.NoError(t, s.Pool.QueryRow(ctx, `SELECT tableoid::regclass::text FROM mat_records WHERE domain_id = $1 LIMIT 1`, d.ID).Scan(&part))
		}
		ix := part + "_domain_id_branch_id_search_idx"
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT (pgstatginindex($1::regclass)).pending_pages, (pgstatginindex('mat_lexicon_trgm_idx')).pending_pages`, ix).
			Scan(&search, &lexicon))
		return search, lexicon
	}
	search, lexicon := pending(1)
	require.LessOrEqual(t, search, 32, "search vectors' pending pages")
	require.LessOrEqual(t, lexicon, 32, "lexicon trigrams' pending pages")

	// Without the limit the same inserts leave more pages pending: the
	// bound above is the migration's doing.
	down, err := migrations.FS.ReadFile("0025_gin_pending_list.down.sql")
	require.NoError(t, err)
	exec(string(down))
	search, lexicon = pending(2)
	require.Greater(t, search, 32, "search vectors' pending pages at the server's limit")
	require.Greater(t, lexicon, 32, "lexicon trigrams' pending pages at the server's limit")
}
