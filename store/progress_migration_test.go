package store_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/migrations"
)

// TestKindProgressMigration: migration 0015 (its progress part) moves a branch's single
// re-embedding entry under its Kind and leaves keyed entries alone; its
// down migration keeps one entry again.
func TestKindProgressMigration(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	d, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	up, err := migrations.FS.ReadFile("0015_progress_domain_delete.up.sql")
	require.NoError(t, err)
	down, err := migrations.FS.ReadFile("0015_progress_domain_delete.down.sql")
	require.NoError(t, err)
	set := func(p string) {
		_, err := s.Pool.Exec(ctx, `UPDATE refs SET progress = $2::jsonb WHERE domain_id = $1 AND name = 'main'`, d.ID, p)
		require.NoError(t, err)
	}
	get := func() string {
		var p string
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT progress::text FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&p))
		return p
	}
	run := func(sql []byte) {
		_, err := s.Pool.Exec(ctx, string(sql))
		require.NoError(t, err)
	}
	old := `{"kind": "Part", "spec": "ab12", "model": "hash", "after": "P-9", "state": "running", "embedded": 9, "total_estimate": 20}`
	keyed := `{"embedding": {"Part": ` + old + `}}`
	set(`{"embedding": ` + old + `}`)
	run(up)
	require.JSONEq(t, keyed, get())
	run(up)
	require.JSONEq(t, keyed, get(), "keyed entries stay as they are")
	set(`{"embedding": {"spec": {"kind": "spec", "spec": "cd34", "model": "hash", "state": "done", "embedded": 1, "total_estimate": 1}}}`)
	run(up)
	require.JSONEq(t, `{"embedding": {"spec": {"kind": "spec", "spec": "cd34", "model": "hash", "state": "done", "embedded": 1, "total_estimate": 1}}}`, get(),
		"a Kind named spec is a keyed entry")
	set(keyed)
	run(down)
	require.JSONEq(t, `{"embedding": `+old+`}`, get())
}
