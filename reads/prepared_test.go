package reads_test

import (
	"context"
	"crypto/md5"
	"encoding/hex"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/store"
)

// preparedPlans reads the session's statements of lb_rec_prepared: name ->
// generic and custom plans used.
func preparedPlans(t *testing.T, f *fixture, conn *pgxpool.Conn) map[string][2]int64 {
	t.Helper()
	rows, err := conn.Query(f.ctx, `SELECT name, generic_plans, custom_plans FROM pg_prepared_statements WHERE name LIKE 'lb\_rec\_%'`)
	require.NoError(t, err)
	out := map[string][2]int64{}
	for rows.Next() {
		var n string
		var g, c int64
		require.NoError(t, rows.Scan(&n, &g, &c))
		out[n] = [2]int64{g, c}
	}
	require.NoError(t, rows.Err())
	return out
}

// scopedStrings runs sql on conn in a transaction scoped to f's Domain, as
// lorebase_app, and answers its rows of one text column.
func scopedStrings(t *testing.T, f *fixture, conn *pgxpool.Conn, sql string, args ...any) []string {
	t.Helper()
	var out []string
	require.NoError(t, pgx.BeginFunc(f.ctx, conn, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		rows, err := tx.Query(f.ctx, sql, args...)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	return out
}

// preparedName answers, in tx (scoped to the Domain), the text of the
// statement lb_rec_prepared prepares for the read function call (its _sql
// twin's answer) and the name it prepares it under.
func preparedName(t *testing.T, ctx context.Context, tx pgx.Tx, call string) (name, text string) {
	t.Helper()
	var stmt string
	require.NoError(t, tx.QueryRow(ctx, `SELECT `+call).Scan(&stmt))
	m := preparedStmt.FindStringSubmatch(stmt)
	require.NotNil(t, m, stmt)
	text = strings.ReplaceAll(m[1], "''", "'")
	sum := md5.Sum([]byte(text))
	return "lb_rec_" + hex.EncodeToString(sum[:]), text
}

// TestOverlayPagePlannedOnce: an overlay's pages and attribute queries run
// one prepared statement a shape (Kind, Attribute, limit) in a session,
// with its generic plan, whatever the value and the page's start; their
// answers equal the copy's.
func TestOverlayPagePlannedOnce(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "overlay-prepared", "")
	conn, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	defer conn.Release()
	keys := func(br, call string, args ...any) []string {
		return scopedStrings(t, f, conn, `SELECT key || ' ' || title || ' ' || "values"::text || ' ' || coalesce(revision, '') FROM `+call,
			append([]any{br}, args...)...)
	}
	before := preparedPlans(t, f, conn)
	calls := []struct {
		call string
		args []any
	}{
		{`lb_page($1, 'Part', $2, 5, NULL)`, []any{""}},
		{`lb_page($1, 'Part', $2, 5, NULL)`, []any{"P-3"}},
		{`lb_page($1, 'Part', $2, 5, NULL)`, []any{"P-7"}},
		{`lb_query_by_attribute($1, 'Part', 'maker', $2, $3, 5)`, []any{"S-1", ""}},
		{`lb_query_by_attribute($1, 'Part', 'maker', $2, $3, 5)`, []any{"S-1", "P-3"}},
		{`lb_query_by_attribute($1, 'Part', 'maker', $2, $3, 5)`, []any{"S-7", ""}},
		// A value and a start that need quoting.
		{`lb_query_by_attribute($1, 'Part', 'maker', $2, $3, 5)`, []any{`S-'1\`, `P-'3\`}},
	}
	for _, c := range calls {
		got, want := keys("ov", c.call, c.args...), keys("ref", c.call, c.args...)
		require.Equal(t, want, got, "%s %v", c.call, c.args)
	}
	after := preparedPlans(t, f, conn)
	used := 0
	var generic, custom int64
	for n, p := range after {
		if p != before[n] {
			used++
			generic += p[0] - before[n][0]
			custom += p[1] - before[n][1]
		}
	}
	require.Equal(t, 2, used, "one statement for the page, one for the attribute query: %v", after)
	require.Equal(t, int64(len(calls)), generic, "%v", after)
	require.Zero(t, custom, "%v", after)
}

// TestOverlayPreparedStatementReplaced: a statement prepared in the session
// under the name lb_rec_prepared gives a read's statement, with another
// text, is replaced, not run (the read functions run it as their owner).
func TestOverlayPreparedStatementReplaced(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "overlay-prepared-hostile", "")
	conn, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	defer conn.Release()
	for _, c := range []string{
		`lb_query_by_attribute%s('%s', 'Part', 'maker', 'S-1', '', 100)`,
		`lb_page%s('%s', 'Part', 'P-3', 100)`,
	} {
		var got, want []string
		require.NoError(t, pgx.BeginFunc(f.ctx, conn, func(tx pgx.Tx) error {
			if err := store.Scope(f.ctx, tx, f.domain); err != nil {
				return err
			}
			name, _ := preparedName(t, f.ctx, tx, fmt.Sprintf(c, "_sql", "ov"))
			var had bool
			if err := tx.QueryRow(f.ctx, `SELECT EXISTS (SELECT 1 FROM pg_prepared_statements WHERE name = $1)`, name).Scan(&had); err != nil {
				return err
			}
			if had {
				if _, err := tx.Exec(f.ctx, `DEALLOCATE `+name, pgx.QueryExecModeSimpleProtocol); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(f.ctx, `PREPARE `+name+`(text, text) AS SELECT 'evil'::text, 'Part'::text, 'evil'::text, '{}'::jsonb, NULL::text`,
				pgx.QueryExecModeSimpleProtocol); err != nil {
				return err
			}
			for _, x := range []struct {
				br  string
				out *[]string
			}{{"ov", &got}, {"ref", &want}} {
				rows, err := tx.Query(f.ctx, `SELECT key FROM `+fmt.Sprintf(c, "", x.br), pgx.QueryExecModeSimpleProtocol)
				if err != nil {
					return err
				}
				if *x.out, err = pgx.CollectRows(rows, pgx.RowTo[string]); err != nil {
					return err
				}
			}
			var text string
			if err := tx.QueryRow(f.ctx, `SELECT statement FROM pg_prepared_statements WHERE name = $1`, name).Scan(&text); err != nil {
				return err
			}
			require.Contains(t, text, "mat_records", c)
			return nil
		}))
		require.NotContains(t, got, "evil", c)
		require.NotEmpty(t, want, c)
		require.Equal(t, want, got, c)
	}
}

// TestOverlayPreparedStatementReplacedAfterUse: a statement put under the
// name of one lb_rec_prepared has already prepared and run on the
// connection (DEALLOCATE, then PREPARE of another text) is replaced, never
// run: the read functions run it as their owner, so a session-level shortcut
// that skipped the catalog check would run SQL of the connection with the
// owner's rights. One deallocated behind its back is prepared again.
func TestOverlayPreparedStatementReplacedAfterUse(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "overlay-prepared-after-use", "")
	conn, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	defer conn.Release()
	const call = `lb_page%s('%s', 'Part', 'P-3', 100)`
	var name, q string
	read := func(br string) []string {
		return scopedStrings(t, f, conn, `SELECT key || ' ' || "values"::text FROM `+fmt.Sprintf(call, "", br), pgx.QueryExecModeSimpleProtocol)
	}
	text := func() string {
		var s string
		require.NoError(t, conn.QueryRow(f.ctx, `SELECT coalesce((SELECT statement FROM pg_prepared_statements WHERE name = $1), '')`,
			pgx.QueryExecModeSimpleProtocol, name).Scan(&s))
		return s
	}
	exec := func(sql string) {
		_, err := conn.Exec(f.ctx, sql, pgx.QueryExecModeSimpleProtocol)
		require.NoError(t, err)
	}
	require.NoError(t, pgx.BeginFunc(f.ctx, conn, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		name, q = preparedName(t, f.ctx, tx, fmt.Sprintf(call, "_sql", "ov"))
		return nil
	}))
	want := read("ref")
	require.NotEmpty(t, want)
	ours := fmt.Sprintf("PREPARE %s(text, text) AS %s", name, q)
	require.Equal(t, want, read("ov"))
	require.Equal(t, ours, text(), "prepared on its first use")

	// Put behind its back after its use: replaced, never run.
	exec(`DEALLOCATE ` + name)
	exec(fmt.Sprintf(`PREPARE %s(text, text) AS SELECT 'evil'::text, 'Part'::text, 'evil'::text, '{}'::jsonb, NULL::text`, name))
	got := read("ov")
	require.NotContains(t, strings.Join(got, "\n"), "evil")
	require.Equal(t, want, got)
	require.Equal(t, ours, text(), "replaced")

	// Deallocated behind its back: prepared again.
	require.NoError(t, conn.Conn().DeallocateAll(f.ctx))
	require.Equal(t, want, read("ov"))
	require.Equal(t, ours, text(), "prepared again")
}
