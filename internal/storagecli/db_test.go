package storagecli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func connect(t *testing.T, url string) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), url)
	require.NoError(t, err)
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// tablesOnly is a profile of table storage parameters only: applying it
// touches nothing outside the test's database.
func tablesOnly(fill string) *Profile {
	return &Profile{Name: "test-tables", Memory: 1 << 30, Tier: "test", Tables: []TableParams{
		{Table: "mat_records", Params: []Param{{"fillfactor", fill}, {"autovacuum_vacuum_scale_factor", "0.02"}}},
		{Table: "mat_links", Params: []Param{{"autovacuum_vacuum_threshold", "1000"}}},
		{Table: "mat_history", Params: []Param{{"autovacuum_analyze_scale_factor", "0.01"}}},
	}}
}

func reloptions(t *testing.T, conn *pgx.Conn, rel string) []string {
	t.Helper()
	var opts []string
	require.NoError(t, conn.QueryRow(context.Background(),
		`SELECT coalesce(reloptions, '{}') FROM pg_class WHERE oid = to_regclass($1)`, rel).Scan(&opts))
	return opts
}

func TestPlanFreshDatabase(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.NewDatabase(t))
	p, err := Named("1m")
	require.NoError(t, err)
	plan, err := PlanProfile(ctx, conn, p)
	require.NoError(t, err)
	require.True(t, plan.FileSettings, "the test role is a superuser")

	byName := map[string]SettingChange{}
	for _, s := range plan.Settings {
		byName[s.Name] = s
	}
	require.Len(t, byName, len(p.Settings))
	var sharedBuffers, workMem int64
	var jit string
	require.NoError(t, conn.QueryRow(ctx, `SELECT pg_size_bytes(current_setting('shared_buffers')),
		pg_size_bytes(current_setting('work_mem')), current_setting('jit')`).Scan(&sharedBuffers, &workMem, &jit))
	// A throwaway test cluster runs with 256MB of shared buffers, 4MB of
	// work_mem and jit off; a server given by LOREBASE_TEST_DATABASE_URL may
	// differ.
	sb := byName["shared_buffers"]
	require.Equal(t, sharedBuffers != 2<<30, sb.Change)
	require.True(t, sb.Restart)
	require.Equal(t, "postmaster", sb.Context)
	require.Equal(t, "2GB", sb.Wanted)
	require.Equal(t, FormatSetting(sharedBuffers), sb.Current)
	if sb.Change {
		require.Equal(t, ActionRestart, sb.Action)
	}
	wm := byName["work_mem"]
	require.Equal(t, workMem != 16<<20, wm.Change)
	require.False(t, wm.Restart)
	if wm.Change {
		require.Equal(t, ActionReload, wm.Action, "%+v", wm)
	}
	require.Equal(t, jit == "on", byName["jit"].Change, "%+v", byName["jit"])
	// wal_compression lz4 is one of the server's values (PlanProfile
	// refuses a value pg_settings does not list) and needs no restart.
	wc := byName["wal_compression"]
	require.Equal(t, "lz4", wc.Wanted)
	require.False(t, wc.Restart, "%+v", wc)
	if wc.Change {
		require.Equal(t, ActionReload, wc.Action, "%+v", wc)
	}

	// 3 tables x 8 partitions x 4 parameters, all at their defaults.
	require.Len(t, plan.Tables, 96)
	for _, c := range plan.Tables {
		require.True(t, c.Change, "%+v", c)
		require.Empty(t, c.Current)
	}
	require.Equal(t, "mat_records_p0", plan.Tables[0].Table)
	require.Equal(t, "fillfactor", plan.Tables[0].Param)
	require.Equal(t, "90", plan.Tables[0].Wanted)

	var out bytes.Buffer
	WritePlan(&out, plan)
	if sb.Change {
		require.Contains(t, out.String(), "shared_buffers")
		require.Contains(t, out.String(), sb.Current)
		require.Contains(t, out.String(), "restart (postmaster)")
	}
	require.Contains(t, out.String(), "→")
	require.Contains(t, out.String(), "mat_history_p7")
	require.Nil(t, plan.HugePages, "2GB of shared buffers: nothing said of huge pages")
	require.NotContains(t, out.String(), "huge pages")
}

func TestPlanSaysHugePagesFromEightGB(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.NewDatabase(t))
	p, err := Named("10m")
	require.NoError(t, err)
	plan, err := PlanProfile(ctx, conn, p)
	require.NoError(t, err)
	require.NotNil(t, plan.HugePages, "the 10m profile's 16GB of shared buffers")
	var setting, needed, sb string
	require.NoError(t, conn.QueryRow(ctx, `SELECT current_setting('huge_pages'), current_setting('shared_memory_size_in_huge_pages'),
		current_setting('shared_buffers')`).Scan(&setting, &needed, &sb))
	require.Equal(t, HugePagesNote{Setting: setting, Needed: needed, SharedBuffers: sb}, *plan.HugePages)
	var out bytes.Buffer
	WritePlan(&out, plan)
	require.Contains(t, out.String(), fmt.Sprintf("huge pages: huge_pages = %s; at shared_buffers %s the server's shared memory needs %s huge pages", setting, sb, needed))
	require.Contains(t, out.String(), "vm.nr_hugepages")
}

func TestApplyTableParameters(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.NewDatabase(t))

	res, err := Apply(ctx, conn, tablesOnly("90"), ApplyOptions{})
	require.NoError(t, err)
	require.True(t, res.Changed())
	require.False(t, res.Reloaded, "no setting changed")
	require.Len(t, res.Tables, 8*4)
	require.Empty(t, res.RestartNeeded)
	for i := 0; i < 8; i++ {
		require.ElementsMatch(t, []string{"fillfactor=90", "autovacuum_vacuum_scale_factor=0.02"},
			reloptions(t, conn, fmt.Sprintf("mat_records_p%d", i)))
		require.Equal(t, []string{"autovacuum_vacuum_threshold=1000"}, reloptions(t, conn, fmt.Sprintf("mat_links_p%d", i)))
		require.Equal(t, []string{"autovacuum_analyze_scale_factor=0.01"}, reloptions(t, conn, fmt.Sprintf("mat_history_p%d", i)))
	}
	require.Empty(t, reloptions(t, conn, "mat_link_history_p0"), "other tables are left alone")

	plan, err := PlanProfile(ctx, conn, tablesOnly("90"))
	require.NoError(t, err)
	_, nTables := plan.Changes()
	require.Zero(t, nTables)

	again, err := Apply(ctx, conn, tablesOnly("90"), ApplyOptions{})
	require.NoError(t, err)
	require.False(t, again.Changed())
	var out bytes.Buffer
	WriteApply(&out, again)
	require.Contains(t, out.String(), "nothing changed")

	// A new value changes only that parameter.
	res, err = Apply(ctx, conn, tablesOnly("80"), ApplyOptions{})
	require.NoError(t, err)
	require.Len(t, res.Tables, 8)
	require.Equal(t, "90", res.Tables[0].Current)
	require.ElementsMatch(t, []string{"fillfactor=80", "autovacuum_vacuum_scale_factor=0.02"}, reloptions(t, conn, "mat_records_p3"))
}

func TestApplyRejectsInvalidValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	conn := connect(t, pgtest.NewDatabase(t))
	names := []string{"work_mem", "effective_io_concurrency", "random_page_cost", "jit", "huge_pages"}
	// Nothing may reach postgresql.auto.conf; should a regression write
	// there, the test fails and the cluster is put back.
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, pgtest.AdminURL(t))
		if err != nil {
			t.Errorf("check settings: %v", err)
			return
		}
		defer c.Close(ctx)
		var written []string
		if err := c.QueryRow(ctx, `SELECT coalesce(array_agg(name), '{}') FROM pg_file_settings
			WHERE name = ANY($1) AND sourcefile LIKE '%postgresql.auto.conf'`, names).Scan(&written); err != nil {
			t.Errorf("check settings: %v", err)
			return
		}
		for _, n := range written {
			t.Errorf("%s was written by ALTER SYSTEM", n)
			_, _ = c.Exec(ctx, "ALTER SYSTEM RESET "+pgx.Identifier{n}.Sanitize())
		}
		if len(written) > 0 {
			_, _ = c.Exec(ctx, "SELECT pg_reload_conf()")
		}
	})
	tests := []struct {
		name string
		set  Setting
		err  string
	}{
		{"unknown setting", Setting{"no_such_setting", "1"}, "no such setting"},
		{"bad unit", Setting{"work_mem", "4 parsecs"}, "unknown unit"},
		{"above maximum", Setting{"effective_io_concurrency", "5000"}, "above the maximum"},
		{"negative", Setting{"random_page_cost", "-1"}, "below the minimum"},
		{"below minimum", Setting{"work_mem", "1kB"}, "below the minimum"},
		{"not a boolean", Setting{"jit", "sometimes"}, "not a boolean"},
		{"not in enum", Setting{"huge_pages", "always"}, "not one of"},
		{"internal", Setting{"block_size", "16384"}, "cannot be set"},
		{"hostile", Setting{"work_mem", "4MB'; DROP TABLE refs; --"}, "unknown unit"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			p := tablesOnly("70")
			p.Settings = []Setting{tt.set}
			_, err := Apply(ctx, conn, p, ApplyOptions{})
			require.ErrorContains(t, err, tt.err)
		})
	}
	// Nothing was written: not even the valid table parameters.
	require.Empty(t, reloptions(t, conn, "mat_records_p0"))
	var n int
	require.NoError(t, conn.QueryRow(ctx, `SELECT count(*) FROM refs`).Scan(&n))
}

// TestApplySettings writes server settings with ALTER SYSTEM, which changes
// postgresql.auto.conf of the whole test cluster, so it runs alone (no
// t.Parallel: the parallel tests of this package wait for it) and only
// touches settings no test depends on: checkpoint_completion_target (when
// checkpoints spread their writes) and shared_buffers 8MB above what the
// cluster runs with, which waits for a restart and so never takes effect
// on a test cluster. t.Cleanup puts back what postgresql.auto.conf held
// (or resets them) and reloads; a run killed before that leaves only these
// harmless values behind.
func TestApplySettings(t *testing.T) {
	ctx := context.Background()
	conn := connect(t, pgtest.NewDatabase(t))
	var super bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT rolsuper FROM pg_roles WHERE rolname = current_user`).Scan(&super))
	require.True(t, super, "ALTER SYSTEM needs the test role to be a superuser")

	var sharedBuffers int64
	var cct float64
	require.NoError(t, conn.QueryRow(ctx, `SELECT pg_size_bytes(current_setting('shared_buffers')),
		current_setting('checkpoint_completion_target')::float8`).Scan(&sharedBuffers, &cct))
	wantCCT := "0.85"
	if cct == 0.85 {
		wantCCT = "0.8"
	}
	p := &Profile{Name: "test-settings", Memory: 1 << 30, Tier: "test", Settings: []Setting{
		{"checkpoint_completion_target", wantCCT},
		{"shared_buffers", FormatSetting(sharedBuffers + 8<<20)},
	}}
	// What postgresql.auto.conf held before, put back afterwards.
	before := map[string]string{}
	rows, err := conn.Query(ctx, `SELECT name, setting FROM pg_file_settings
		WHERE name IN ('checkpoint_completion_target', 'shared_buffers') AND sourcefile LIKE '%postgresql.auto.conf'
		ORDER BY seqno`)
	require.NoError(t, err)
	var n, v string
	_, err = pgx.ForEachRow(rows, []any{&n, &v}, func() error {
		before[n] = v
		return nil
	})
	require.NoError(t, err)
	t.Cleanup(func() {
		ctx := context.Background()
		c, err := pgx.Connect(ctx, pgtest.AdminURL(t))
		if err != nil {
			t.Errorf("reset settings: %v", err)
			return
		}
		defer c.Close(ctx)
		for _, s := range p.Settings {
			stmt := "ALTER SYSTEM RESET " + pgx.Identifier{s.Name}.Sanitize()
			if v, ok := before[s.Name]; ok {
				stmt = AlterSystemSQL(s.Name, v)
			}
			if _, err := c.Exec(ctx, stmt); err != nil {
				t.Errorf("reset %s: %v", s.Name, err)
			}
		}
		if _, err := c.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
			t.Errorf("reload: %v", err)
		}
	})

	res, err := Apply(ctx, conn, p, ApplyOptions{})
	require.NoError(t, err)
	require.True(t, res.Reloaded)
	require.Len(t, res.Settings, 2)
	require.Equal(t, []string{"shared_buffers"}, res.RestartNeeded)

	var pending bool
	var cctNow string
	require.NoError(t, conn.QueryRow(ctx, `SELECT pending_restart FROM pg_settings WHERE name = 'shared_buffers'`).Scan(&pending))
	require.True(t, pending)
	require.NoError(t, conn.QueryRow(ctx, `SELECT setting FROM pg_settings WHERE name = 'checkpoint_completion_target'`).Scan(&cctNow))
	require.Equal(t, wantCCT, cctNow)

	var out bytes.Buffer
	WriteApply(&out, res)
	require.Contains(t, out.String(), "restart PostgreSQL for these to take effect: shared_buffers")

	plan, err := PlanProfile(ctx, conn, p)
	require.NoError(t, err)
	nSettings, _ := plan.Changes()
	require.Zero(t, nSettings, "%+v", plan.Settings)
	require.Equal(t, ActionNone, plan.Settings[0].Action)
	require.Equal(t, ActionPendingRestart, plan.Settings[1].Action)

	again, err := Apply(ctx, conn, p, ApplyOptions{})
	require.NoError(t, err)
	require.False(t, again.Changed())
	require.False(t, again.Reloaded)
	require.Equal(t, []string{"shared_buffers"}, again.RestartNeeded)
}

// fixture is a Domain with Records, Links and history rows, written as the
// owner straight into the tables.
type fixture struct {
	url    string
	conn   *pgx.Conn
	domain *store.Domain
	branch int32
	part   string
}

func newFixture(t *testing.T, records int) *fixture {
	t.Helper()
	ctx := context.Background()
	f := &fixture{url: pgtest.NewDatabase(t)}
	s, err := store.Open(ctx, f.url, store.Config{})
	require.NoError(t, err)
	defer s.Close()
	f.domain, err = s.CreateDomain(ctx, "supply")
	require.NoError(t, err)
	f.conn = connect(t, f.url)
	require.NoError(t, f.conn.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, f.domain.ID).Scan(&f.branch))
	_, f.part, err = partitionOf(ctx, f.conn, "mat_records", f.domain.ID)
	require.NoError(t, err)
	if records == 0 {
		return f
	}
	_, err = f.conn.Exec(ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, search, created_seq, seq)
		SELECT $1, $2, 'part-' || i, 'Part', 'Part number ' || i,
		       jsonb_build_object('sku', 'SKU-' || i, 'note', repeat('x', 200)),
		       to_tsvector('simple', 'Part number ' || i), i, i
		FROM generate_series(1, $3::int) i`, f.domain.ID, f.branch, records)
	require.NoError(t, err)
	_, err = f.conn.Exec(ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, seq)
		SELECT $1, $2, 'part-' || i, 'next', 'part-' || (i + 1), i FROM generate_series(1, $3::int - 1) i`,
		f.domain.ID, f.branch, records)
	require.NoError(t, err)
	_, err = f.conn.Exec(ctx, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values)
		SELECT $1, $2, 'part-' || i, i, 'rev-' || i, 'put', 'Part', 'Part number ' || i, '{}' FROM generate_series(1, $3::int) i`,
		f.domain.ID, f.branch, records)
	require.NoError(t, err)
	// A per-Attribute index, as the index job builds it.
	_, err = f.conn.Exec(ctx, fmt.Sprintf(`CREATE INDEX %s_sku_idx ON %s ((ivals ->> 'sku')) WHERE domain_id = %d AND branch_id = %d AND kind = 'Part'`,
		f.part, f.part, f.domain.ID, f.branch))
	require.NoError(t, err)
	_, err = f.conn.Exec(ctx, `ANALYZE`)
	require.NoError(t, err)
	return f
}

func TestPrewarm(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 3000)
	// Another Domain's per-Attribute index on the same partition is not this
	// Domain's hot set.
	_, err := f.conn.Exec(ctx, fmt.Sprintf(`CREATE INDEX other_domain_idx ON %s ((ivals ->> 'sku')) WHERE domain_id = %d AND branch_id = 1 AND kind = 'Part'`,
		f.part, f.domain.ID+1000))
	require.NoError(t, err)

	var steps []PrewarmStep
	res, err := Prewarm(ctx, f.conn, "supply", 0, func(s PrewarmStep) { steps = append(steps, s) })
	require.NoError(t, err)
	require.True(t, res.HasRows)
	require.Equal(t, f.domain.ID, res.DomainID)
	require.Equal(t, strings.TrimPrefix(f.part, "mat_records_"), res.Partition)
	require.Equal(t, int64(float64(res.SharedBuffers)*DefaultPrewarmFraction), res.Budget)
	require.Empty(t, res.Skipped, "a few MB fit in the default budget")
	require.Equal(t, steps, res.Steps)

	var names []string
	var cumulative int64
	for _, s := range res.Steps {
		names = append(names, s.Relation)
		require.Equal(t, s.Size, s.Loaded, s.Relation)
		cumulative += s.Loaded
		require.Equal(t, cumulative, s.Cumulative)
	}
	require.Equal(t, cumulative, res.Loaded)
	p := f.part
	n := strings.TrimPrefix(p, "mat_records_")
	require.Equal(t, []string{
		"refs_pkey", "refs_base_idx", "refs_domain_id_name_key", "refs",
		"schemas_pkey", "schemas",
		"revisions_pkey", "revisions_domain_id_seq_key", "revisions_domain_number_key", "revisions_log_idx", "revisions",
	}, names[:11], "small tables first, primary key, other indexes, heap")
	// The plateaus' tokens after the search vectors' (migration 0027).
	recordIdx := []string{p + "_pkey", p + "_domain_id_branch_id_kind_key_idx", p + "_domain_id_branch_id_search_idx",
		p + "_lb_search_tokens_idx"}
	var rum bool
	require.NoError(t, f.conn.QueryRow(ctx, `SELECT to_regclass('mat_records_search_rum_idx') IS NOT NULL`).Scan(&rum))
	if rum {
		// The RUM index of search (migration 0008, where the extension exists).
		recordIdx = append(recordIdx, p+"_search_idx")
	}
	// The iseq index (migration 0023).
	recordIdx = append(recordIdx, p+"_domain_id_branch_id_iseq_idx")
	// The indexes a commit writes at spread keys (history, objects) come
	// before the Links' indexes, every index before the heaps.
	require.Equal(t, append(recordIdx, p+"_sku_idx",
		"mat_history_"+n+"_pkey", "mat_history_"+n+"_domain_id_branch_id_seq_key_idx",
		"objects_"+n+"_pkey",
		"mat_links_"+n+"_pkey", "mat_links_"+n+"_domain_id_branch_id_to_key_relation_from_key_o_idx",
		p, "mat_links_"+n, "mat_history_"+n, "objects_"+n,
		// The search postings and the lexicon last.
		"mat_search_words_"+n+"_pkey", "mat_search_words_"+n+"_domain_id_branch_id_word_score_key_idx", "mat_search_words_"+n,
		"mat_lexicon_pkey", "mat_lexicon_trgm_idx", "mat_lexicon"), names[11:])
	require.NotContains(t, names, "other_domain_idx")

	// A small budget stops part way, within the budget.
	steps = nil
	small, err := Prewarm(ctx, f.conn, fmt.Sprint(f.domain.ID), 64<<10, func(s PrewarmStep) { steps = append(steps, s) })
	require.NoError(t, err)
	require.Equal(t, "supply", small.Domain, "found by id")
	require.LessOrEqual(t, small.Loaded, int64(64<<10))
	require.NotEmpty(t, small.Skipped)
	last := steps[len(steps)-1]
	require.LessOrEqual(t, last.Percent, 100.0)
	require.Equal(t, small.Loaded, last.Cumulative)

	var out bytes.Buffer
	WritePrewarmSummary(&out, small)
	require.Contains(t, out.String(), "budget reached; not loaded:")
}

func TestPrewarmDomainWithoutRows(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 0)
	res, err := Prewarm(ctx, f.conn, "supply", 0, nil)
	require.NoError(t, err)
	require.False(t, res.HasRows)
	require.NotEmpty(t, res.Partition)
	for _, s := range res.Steps {
		require.NotContains(t, s.Relation, "mat_")
	}
	var out bytes.Buffer
	WritePrewarmSummary(&out, res)
	require.Contains(t, out.String(), "domain supply has no Records")

	_, err = Prewarm(ctx, f.conn, "nobody", 0, nil)
	require.ErrorIs(t, err, ErrNoDomain)
	_, err = Prewarm(ctx, f.conn, "x'; DROP TABLE refs; --\\%", 0, nil)
	require.ErrorIs(t, err, ErrNoDomain)
}

func TestReport(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 2000)
	rep, err := BuildReport(ctx, f.conn)
	require.NoError(t, err)

	tables := map[string]TableReport{}
	for _, tr := range rep.Tables {
		tables[tr.Name] = tr
	}
	parent := tables["mat_records"]
	require.True(t, parent.Partitioned)
	part := tables[f.part]
	require.Equal(t, "mat_records", part.Parent)
	require.Positive(t, part.Heap)
	require.Positive(t, part.Indexes)
	require.GreaterOrEqual(t, part.Total, part.Heap+part.Indexes)
	require.InDelta(t, 2000, part.Rows, 10)
	var sum int64
	for i := 0; i < 8; i++ {
		sum += tables[fmt.Sprintf("mat_records_p%d", i)].Total
	}
	require.Equal(t, sum, parent.Total)
	for i := 0; i < 8; i++ {
		if other := fmt.Sprintf("mat_records_p%d", i); other != f.part {
			require.Greater(t, part.Total, tables[other].Total, "the Domain's partition is the largest")
		}
	}
	require.NotNil(t, part.FreeBytes, "analyzed")
	require.NotNil(t, part.FreePct)
	for i := 0; i < 8; i++ {
		require.Contains(t, tables, fmt.Sprintf("mat_links_p%d", i))
	}
	require.Contains(t, tables, "domains")

	idx := map[string]IndexReport{}
	for _, ix := range rep.Indexes {
		idx[ix.Name] = ix
	}
	require.Contains(t, idx, f.part+"_pkey")
	require.Contains(t, idx, f.part+"_sku_idx")
	require.Equal(t, f.part, idx[f.part+"_sku_idx"].Table)
	require.Positive(t, idx[f.part+"_pkey"].Size)

	require.Len(t, rep.Partitions, 8)
	n := strings.TrimPrefix(f.part, "mat_records_")
	for _, p := range rep.Partitions {
		if p.Partition == n {
			require.Equal(t, []string{"supply"}, p.Domains)
			require.InDelta(t, 2000, p.Records, 10)
			require.Positive(t, p.Total)
		} else {
			require.Empty(t, p.Domains)
		}
	}
	require.Equal(t, "p0", rep.Partitions[0].Partition)
	require.Equal(t, "p7", rep.Partitions[7].Partition)

	var out bytes.Buffer
	WriteReport(&out, rep)
	require.Contains(t, out.String(), f.part+"_sku_idx")
	require.Contains(t, out.String(), "supply")
}

func TestRun(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 100)
	env := func(k string) string {
		if k == DatabaseURLEnv {
			return f.url
		}
		return ""
	}
	noEnv := func(string) string { return "" }
	tests := []struct {
		name   string
		args   []string
		env    Env
		code   int
		stdout string
		stderr string
	}{
		{"no command", nil, env, ExitUsage, "", "Usage:"},
		{"help", []string{"help"}, env, ExitOK, "storage prewarm --domain", ""},
		{"help plan", []string{"help", "plan"}, env, ExitOK, "-memory", ""},
		{"help unknown", []string{"help", "frob"}, env, ExitUsage, "", "unknown command"},
		{"unknown command", []string{"frob"}, env, ExitUsage, "", `unknown command "frob"`},
		{"plan without profile", []string{"plan"}, env, ExitUsage, "", "give --profile NAME or --memory SIZE"},
		{"plan both", []string{"plan", "--profile", "dev", "--memory", "4GB"}, env, ExitUsage, "", "not both"},
		{"plan unknown profile", []string{"plan", "--profile", "huge"}, env, ExitUsage, "", "unknown profile"},
		{"plan bad memory", []string{"plan", "--memory", "lots"}, env, ExitUsage, "", "--memory"},
		{"plan tiny memory", []string{"plan", "--memory", "1MB"}, env, ExitUsage, "", "out of range"},
		{"plan no database", []string{"plan", "--profile", "dev"}, noEnv, ExitUsage, "", "LOREBASE_DATABASE_URL"},
		{"plan bad flag", []string{"plan", "--frob"}, env, ExitUsage, "", "flag provided but not defined"},
		{"plan extra argument", []string{"plan", "--profile", "dev", "extra"}, env, ExitUsage, "", `unexpected argument "extra"`},
		{"plan", []string{"plan", "--profile", "dev"}, env, ExitOK, "shared_buffers", ""},
		{"plan memory", []string{"plan", "--memory", "16GiB", "--database-url", f.url}, noEnv, ExitOK, "profile memory-16GB", ""},
		{"prewarm without domain", []string{"prewarm"}, env, ExitUsage, "", "--domain is required"},
		{"prewarm bad budget", []string{"prewarm", "--domain", "supply", "--budget", "0"}, env, ExitUsage, "", "--budget must be positive"},
		{"prewarm NUL domain", []string{"prewarm", "--domain", "a\x00b"}, env, ExitUsage, "", "--domain: not a Domain name"},
		{"prewarm invalid UTF-8", []string{"prewarm", "--domain", "a\xffb"}, env, ExitUsage, "", "--domain: not a Domain name"},
		{"prewarm unknown domain", []string{"prewarm", "--domain", "nobody"}, env, ExitError, "", "no such domain"},
		{"prewarm", []string{"prewarm", "--domain", "supply", "--budget", "1MB"}, env, ExitOK, "OF BUDGET", ""},
		{"report", []string{"report"}, env, ExitOK, f.part + "_pkey", ""},
		{"profiles", []string{"profiles"}, env, ExitOK, "mat_records_p*.fillfactor", ""},
		{"bad url", []string{"report", "--database-url", "postgres://%zz"}, noEnv, ExitUsage, "", "--database-url"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var stdout, stderr bytes.Buffer
			code := Run(ctx, tt.args, &stdout, &stderr, tt.env)
			require.Equal(t, tt.code, code, "stdout:\n%s\nstderr:\n%s", stdout.String(), stderr.String())
			require.Contains(t, stdout.String(), tt.stdout)
			require.Contains(t, stderr.String(), tt.stderr)
		})
	}

	for _, args := range [][]string{
		{"plan", "--profile", "10m", "--json"},
		{"report", "--json"},
		{"prewarm", "--domain", "supply", "--json"},
		{"profiles", "--json"},
	} {
		var stdout, stderr bytes.Buffer
		require.Equal(t, ExitOK, Run(ctx, args, &stdout, &stderr, env), stderr.String())
		var v any
		require.NoError(t, json.Unmarshal(stdout.Bytes(), &v), "%v: %s", args, stdout.String())
	}
	var stdout, stderr bytes.Buffer
	require.Equal(t, ExitOK, Run(ctx, []string{"plan", "--profile", "10m", "--json"}, &stdout, &stderr, env))
	var plan Plan
	require.NoError(t, json.Unmarshal(stdout.Bytes(), &plan))
	require.Equal(t, "10m", plan.Profile.Name)
	require.NotEmpty(t, plan.Settings)
}
