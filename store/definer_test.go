package store_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// TestNoDefinerFunctionTakesADomain: every SECURITY DEFINER function
// lorebase_app may execute takes its Domain from lb_domain() only: none has
// a parameter naming a Domain. (A function running as its invoker is bound
// by row-level security whatever it is passed.)
func TestNoDefinerFunctionTakesADomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT p.oid::regprocedure::text, coalesce(p.proargnames, '{}')::text[], coalesce(p.proargmodes::text[], '{}')
		FROM pg_proc p
		WHERE p.pronamespace = current_schema()::regnamespace AND p.prosecdef
		  AND has_function_privilege('lorebase_app', p.oid, 'EXECUTE')`)
	require.NoError(t, err)
	type fn struct {
		sig  string
		args []string
	}
	fns, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (fn, error) {
		var f fn
		var names, modes []string
		err := r.Scan(&f.sig, &names, &modes)
		for i, n := range names {
			// Input parameters only: OUT and TABLE columns are results.
			if i < len(modes) && modes[i] != "i" && modes[i] != "b" && modes[i] != "v" {
				continue
			}
			f.args = append(f.args, n)
		}
		return f, err
	})
	require.NoError(t, err)
	require.Greater(t, len(fns), 10, "the read functions are SECURITY DEFINER and executable by lorebase_app")
	for _, f := range fns {
		for _, a := range f.args {
			switch a {
			case "d", "domain", "domain_id", "p_domain", "p_domain_id":
				t.Errorf("%s takes a Domain as parameter %q: take it from lb_domain()", f.sig, a)
			}
		}
	}
}

// TestDefinerFunctionsStayInTheDomain: scoped to one Domain, naming
// another Domain's branch id to a SECURITY DEFINER function reads nothing
// of it (its lexicon's words are no correction; its Record is not found).
func TestDefinerFunctionsStayInTheDomain(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	a, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	b, err := s.CreateDomain(ctx, "beta")
	require.NoError(t, err)
	var betaMain int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, b.ID).Scan(&betaMain))
	_, err = s.Pool.Exec(ctx, `INSERT INTO mat_lexicon (domain_id, branch_id, word, records) VALUES ($1, $2, 'zeppelinwerke', 1)`, b.ID, betaMain)
	require.NoError(t, err)
	_, err = s.Pool.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, created_seq, seq) VALUES ($1, $2, 'SECRET-1', 'K', 1, 1)`, b.ID, betaMain)
	require.NoError(t, err)

	// As the owner, scoped to beta, the word is a correction (the check
	// below can fail).
	read := func(domain int32, sql string, args ...any) ([]string, error) {
		var out []string
		err := s.Read(ctx, domain, sql, args, func(rows pgx.Rows) error {
			lists, err := pgx.CollectRows(rows, pgx.RowTo[[]string])
			out = slices.Concat(lists...)
			return err
		})
		return out, err
	}
	got, err := read(b.ID, `SELECT corrections FROM lb_search_terms($1, 'zeppelinwerk')`, betaMain)
	require.NoError(t, err)
	require.Equal(t, []string{"zeppelinwerke"}, got)

	got, err = read(a.ID, `SELECT corrections FROM lb_search_terms($1, 'zeppelinwerk')`, betaMain)
	require.NoError(t, err)
	require.Empty(t, got, "alpha learns nothing of beta's lexicon")
	got, err = read(a.ID, `SELECT corrections FROM lb_search_terms_levels(ARRAY[$1::int, $1::int], 'zeppelinwerk')`, betaMain)
	require.NoError(t, err)
	require.Empty(t, got)

	_, err = read(b.ID, `SELECT '{}'::text[] FROM lb_require_record($1, 'SECRET-1', NULL)`, betaMain)
	require.NoError(t, err)
	_, err = read(a.ID, `SELECT '{}'::text[] FROM lb_require_record($1, 'SECRET-1', NULL)`, betaMain)
	require.ErrorContains(t, err, "record not found")
}

// TestAppRolePrivileges: history is append-only for lorebase_app, it may
// only revoke tokens (no other change to them), and of River's tables it
// may read and insert jobs only.
func TestAppRolePrivileges(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	require.NoError(t, err)
	defer conn.Close(ctx)
	has := func(table, priv string) bool {
		var ok bool
		require.NoError(t, conn.QueryRow(ctx, `SELECT has_table_privilege('lorebase_app', $1, $2)`, table, priv).Scan(&ok))
		return ok
	}
	for _, tbl := range []string{"revisions", "objects", "mat_history", "mat_link_history", "objects_p0", "mat_history_p3"} {
		if !strings.Contains(tbl, "_p") {
			require.True(t, has(tbl, "INSERT"), tbl)
			require.True(t, has(tbl, "SELECT"), tbl)
		}
		for _, p := range []string{"UPDATE", "DELETE", "TRUNCATE"} {
			require.False(t, has(tbl, p), "%s %s", p, tbl)
		}
	}
	require.False(t, has("tokens", "UPDATE"), "only the revoked_at column")
	var col bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT has_column_privilege('lorebase_app', 'tokens', 'revoked_at', 'UPDATE'),
		NOT has_column_privilege('lorebase_app', 'tokens', 'role', 'UPDATE')`).Scan(&col, new(bool)))
	require.True(t, col)
	require.False(t, has("tokens", "DELETE"))

	rows, err := conn.Query(ctx, `SELECT tablename::text FROM pg_tables WHERE schemaname = current_schema() AND tablename LIKE 'river\_%'`)
	require.NoError(t, err)
	river, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, river, "river_job")
	for _, tbl := range river {
		for _, p := range []string{"SELECT", "INSERT", "UPDATE", "DELETE", "TRUNCATE"} {
			want := tbl == "river_job" && (p == "SELECT" || p == "INSERT")
			require.Equal(t, want, has(tbl, p), "%s on %s", p, tbl)
		}
	}
	// River's insert ends in a no-op DO UPDATE SET kind: that column only.
	var kindOnly bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT has_column_privilege('lorebase_app', 'river_job', 'kind', 'UPDATE')
		AND NOT has_column_privilege('lorebase_app', 'river_job', 'state', 'UPDATE')
		AND NOT has_column_privilege('lorebase_app', 'river_job', 'args', 'UPDATE')`).Scan(&kindOnly))
	require.True(t, kindOnly)

	// In a scoped transaction, rewriting a Revision is refused.
	s, err := store.Open(ctx, conn.Config().ConnString(), store.Config{})
	require.NoError(t, err)
	defer s.Close()
	d, err := s.CreateDomain(ctx, "alpha")
	require.NoError(t, err)
	err = s.InDomain(ctx, d.ID, func(ctx context.Context, tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `DELETE FROM revisions`)
		return err
	})
	require.ErrorContains(t, err, "permission denied")
}
