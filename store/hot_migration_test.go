package store_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/migrations"
)

// TestHotUpdatesMigration: migration 0021 upgrades a database whose
// per-Attribute indexes are on values: ivals backfilled for their Kinds,
// each index rebuilt on ivals under its name and marked ready, the seq
// index moved from mat_records to mat_history; its down migration puts
// the indexes back on values.
func TestHotUpdatesMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	d, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&branch))
	up, err := migrations.FS.ReadFile("0021_hot_updates.up.sql")
	require.NoError(t, err)
	down, err := migrations.FS.ReadFile("0021_hot_updates.down.sql")
	require.NoError(t, err)
	exec := func(sql string, args ...any) {
		t.Helper()
		_, err := s.Pool.Exec(ctx, sql, args...)
		require.NoError(t, err, sql)
	}
	one := func(sql string, args ...any) string {
		t.Helper()
		var v *string
		require.NoError(t, s.Pool.QueryRow(ctx, sql, args...).Scan(&v), sql)
		if v == nil {
			return "<nil>"
		}
		return *v
	}
	// The database before 0021: 0023's trigger reads ivals, so it goes first.
	down23, err := migrations.FS.ReadFile("0023_record_iseq.down.sql")
	require.NoError(t, err)
	exec(string(down23))
	exec(string(down))
	exec(`INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", created_seq, seq)
		SELECT $1, $2, 'S-' || i, CASE WHEN i % 4 = 0 THEN 'Part' ELSE 'Supplier' END, 'S ' || i,
		       CASE WHEN i % 7 = 0 THEN jsonb_build_object('name', 'S ' || i)
		            ELSE jsonb_build_object('name', 'S ' || i, 'country', 'C' || (i % 5), 'vat', i) END, 1, 1
		  FROM generate_series(1, 300) i`, d.ID, branch)
	part := one(`SELECT tableoid::regclass::text FROM mat_records WHERE domain_id = $1 LIMIT 1`, d.ID)
	for _, a := range []string{"country", "vat"} {
		name := "mat_records_attr_" + a
		exec(fmt.Sprintf(`CREATE INDEX %s ON %s (("values" ->> '%s'), key) WHERE domain_id = %d AND branch_id = %d AND kind = 'Supplier'`,
			name, part, a, d.ID, branch))
		exec(`INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute, name) VALUES ($1, $2, 'Supplier', $3, $4)`,
			d.ID, branch, a, name)
	}
	exec(string(up))
	for _, a := range []string{"country", "vat"} {
		require.Contains(t, one(`SELECT indexdef FROM pg_indexes WHERE indexname = $1`, "mat_records_attr_"+a),
			fmt.Sprintf("((ivals ->> '%s'::text)), key) WHERE ((domain_id = %d) AND (branch_id = %d) AND (kind = 'Supplier'::text))", a, d.ID, branch))
		require.Equal(t, "true", one(`SELECT ready::text FROM attribute_indexes WHERE attribute = $1`, a))
	}
	require.Equal(t, "0", one(`SELECT count(*)::text FROM mat_records WHERE kind = 'Supplier'
		AND ((ivals ->> 'country') IS DISTINCT FROM ("values" ->> 'country') OR (ivals ->> 'vat') IS DISTINCT FROM ("values" ->> 'vat'))`))
	require.Equal(t, `{"vat": 3, "country": "C3"}`, one(`SELECT ivals::text FROM mat_records WHERE key = 'S-3'`))
	require.Equal(t, "<nil>", one(`SELECT ivals::text FROM mat_records WHERE key = 'S-7'`), "no indexed value: NULL")
	require.Equal(t, "<nil>", one(`SELECT ivals::text FROM mat_records WHERE key = 'S-4'`), "a Kind without indexes")
	require.Equal(t, "<nil>", one(`SELECT to_regclass('mat_records_seq_idx')::text`))
	require.Equal(t, "mat_history_seq_idx", one(`SELECT to_regclass('mat_history_seq_idx')::text`))

	exec(string(down))
	require.Contains(t, one(`SELECT indexdef FROM pg_indexes WHERE indexname = 'mat_records_attr_country'`), `((("values" ->> 'country'::text)), key)`)
	require.Equal(t, "<nil>", one(`SELECT (SELECT attname::text FROM pg_attribute WHERE attrelid = 'mat_records'::regclass AND attname = 'ivals' AND NOT attisdropped)`))
	require.Equal(t, "mat_records_seq_idx", one(`SELECT to_regclass('mat_records_seq_idx')::text`))
	exec(string(up))
	require.Equal(t, "true", one(`SELECT ready::text FROM attribute_indexes WHERE attribute = 'country'`))
}
