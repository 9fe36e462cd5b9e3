package store_test

import (
	"context"
	"io/fs"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/migrations"
	"github.com/lorebase/lorebase/store"
)

// normalizeFunctionSQL drops the comment lines outside function bodies,
// the schema qualifier pg_get_functiondef prints and the statement
// terminators, and collapses whitespace.
func normalizeFunctionSQL(text string) string {
	var kept []string
	inBody := false
	for _, line := range strings.Split(text, "\n") {
		if !inBody && strings.HasPrefix(strings.TrimSpace(line), "--") {
			continue
		}
		if strings.Count(line, "$function$")%2 == 1 {
			inBody = !inBody
		}
		kept = append(kept, line)
	}
	s := strings.Join(kept, "\n")
	s = strings.ReplaceAll(s, "FUNCTION public.", "FUNCTION ")
	s = strings.ReplaceAll(s, "$function$;", "$function$")
	return strings.Join(strings.Fields(s), " ")
}

// splitFunctions cuts a normalized file into its CREATE statements.
func splitFunctions(norm string) []string {
	const head = "CREATE OR REPLACE FUNCTION "
	var out []string
	for _, part := range strings.Split(norm, head) {
		if strings.TrimSpace(part) != "" {
			out = append(out, head+strings.TrimSpace(part))
		}
	}
	sort.Strings(out)
	return out
}

// TestFunctionFilesMatchDatabase: every lb_* function of a migrated
// database has its file, every file's functions exist, and each file holds
// exactly pg_get_functiondef of every overload of its name.
func TestFunctionFilesMatchDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	require.NoError(t, err)
	defer conn.Close(ctx)

	rows, err := conn.Query(ctx, `SELECT p.proname::text, pg_get_functiondef(p.oid)
  FROM pg_proc p WHERE p.pronamespace = current_schema()::regnamespace AND p.proname LIKE 'lb\_%'`)
	require.NoError(t, err)
	defs := map[string][]string{}
	var name, def string
	_, err = pgx.ForEachRow(rows, []any{&name, &def}, func() error {
		defs[name] = append(defs[name], normalizeFunctionSQL(def))
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, defs)

	files, err := store.FunctionFiles()
	require.NoError(t, err)
	byName := map[string]store.FunctionFile{}
	for _, f := range files {
		byName[f.Name] = f
	}
	for name := range defs {
		_, ok := byName[name]
		require.True(t, ok, "function %s has no file migrations/functions/%s.sql", name, name)
	}
	for _, f := range files {
		t.Run(f.Name, func(t *testing.T) {
			want, ok := defs[f.Name]
			require.True(t, ok, "migrations/functions/%s.sql defines no function %s in the database", f.Name, f.Name)
			sort.Strings(want)
			require.Equal(t, want, splitFunctions(normalizeFunctionSQL(f.SQL)),
				"migrations/functions/%s.sql differs from pg_get_functiondef (write the file as it prints)", f.Name)
		})
	}
}

var createOrDropFunction = regexp.MustCompile(`(?i)(CREATE\s+(?:OR\s+REPLACE\s+)?|DROP\s+)FUNCTION\s+(?:IF\s+EXISTS\s+)?(?:public\.)?(\w+)`)

// TestNoFunctionOnlyInNumberedMigrations: a function a numbered migration
// declares, and no later one drops, has its file, which holds its body.
func TestNoFunctionOnlyInNumberedMigrations(t *testing.T) {
	t.Parallel()
	files, err := store.FunctionFiles()
	require.NoError(t, err)
	have := map[string]bool{}
	for _, f := range files {
		have[f.Name] = true
	}
	ups, err := fs.Glob(migrations.FS, "*.up.sql")
	require.NoError(t, err)
	require.NotEmpty(t, ups)
	sort.Strings(ups)
	declared := map[string]string{} // function: the migration that declares it
	for _, up := range ups {
		text, err := fs.ReadFile(migrations.FS, up)
		require.NoError(t, err)
		for _, m := range createOrDropFunction.FindAllStringSubmatch(string(text), -1) {
			if strings.HasPrefix(strings.ToUpper(m[1]), "DROP") {
				delete(declared, m[2])
				continue
			}
			declared[m[2]] = up
		}
	}
	require.NotEmpty(t, declared)
	for name, up := range declared {
		require.True(t, have[name], "%s creates function %s, which has no file migrations/functions/%s.sql", up, name, name)
	}
}

// TestFunctionFilesApplyByChecksum: an unchanged file is skipped, a file
// whose recorded checksum differs is applied again, and a function dropped
// behind the loader's back is recreated.
func TestFunctionFilesApplyByChecksum(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	defer conn.Close(ctx)

	applied := func(name string) (at string) {
		require.NoError(t, conn.QueryRow(ctx, `SELECT applied_at::text FROM lorebase_functions WHERE name = $1`, name).Scan(&at))
		return at
	}
	before := applied("lb_level_cuts")

	// A body changed in the database and its checksum forgotten: the file
	// is applied again and wins.
	_, err = conn.Exec(ctx, `CREATE OR REPLACE FUNCTION lb_rev_seq(p_revision text) RETURNS bigint LANGUAGE sql AS 'SELECT 0::bigint'`)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `UPDATE lorebase_functions SET checksum = '\x00' WHERE name = 'lb_rev_seq'`)
	require.NoError(t, err)
	// A function dropped: recreated although its checksum is recorded.
	_, err = conn.Exec(ctx, `DROP FUNCTION lb_level_cuts(bigint[], bigint[])`)
	require.NoError(t, err)

	s, err := store.Open(ctx, url, store.Config{})
	require.NoError(t, err)
	defer s.Close()
	st, err := s.Migrations(ctx)
	require.NoError(t, err)
	require.Equal(t, 1, st.FunctionsPending, "the forgotten checksum is pending")
	require.False(t, st.UpToDate())

	require.NoError(t, store.Migrate(ctx, url))

	var src string
	require.NoError(t, conn.QueryRow(ctx, `SELECT prosrc FROM pg_proc WHERE proname = 'lb_rev_seq'`).Scan(&src))
	require.NotContains(t, src, "SELECT 0::bigint")
	var cuts []int64
	require.NoError(t, conn.QueryRow(ctx, `SELECT lb_level_cuts('{5,9}', '{5,10}')`).Scan(&cuts))
	require.Equal(t, []int64{9223372036854775807, 9}, cuts)
	require.NotEqual(t, before, applied("lb_level_cuts"), "the dropped function's file ran again")
	untouched := applied("lb_get")
	require.NoError(t, store.Migrate(ctx, url))
	require.Equal(t, untouched, applied("lb_get"), "an unchanged file is skipped")
	st, err = s.Migrations(ctx)
	require.NoError(t, err)
	require.True(t, st.UpToDate(), "%+v", st)
}
