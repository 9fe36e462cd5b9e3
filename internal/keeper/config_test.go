package keeper_test

import (
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/keeper"
)

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

func TestConfigDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := keeper.LoadConfig("", envOf(nil))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:8080", cfg.Listen)
	require.Equal(t, 30000, cfg.Database.StatementTimeoutMS)
	require.EqualValues(t, 32<<20, cfg.HTTP.MaxBodyBytes)
	require.Equal(t, 1000, cfg.Store.Reads.SearchCandidates)
	require.Equal(t, 5, cfg.Search.Partial.MinResults)
	require.Equal(t, 100, cfg.Search.Partial.Candidates)
	require.Equal(t, 20, cfg.Read.History.DefaultLimit)
	require.Equal(t, 50, cfg.Read.Page.DefaultLimit)
	require.Equal(t, 1000, cfg.Read.Page.MaxLimit)
	require.Equal(t, 500, cfg.Write.CopyThresholdRows)
	require.Equal(t, 50000, cfg.Write.MaxChanges)
	require.Equal(t, 200, cfg.Jobs.BatchTargetMS)
	require.Equal(t, 50, cfg.Jobs.BatchContendedMS)
	require.Empty(t, cfg.AdminToken)
}

func TestConfigFileThenEnvironment(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keeper.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
listen: 0.0.0.0:9000
database:
  url: postgres://file/db
  max_conns: 20
http:
  max_body_bytes: 1048576
  request_timeout: 7s
store:
  reads:
    search_candidates: 500
read:
  page:
    max_limit: 200
admin_token: from-the-file-0123456789
`), 0o600))
	cfg, err := keeper.LoadConfig(path, envOf(map[string]string{
		"LOREBASE_DATABASE_URL":                  "postgres://env/db",
		"LOREBASE_STORE_READS_SEARCH_CANDIDATES": "750",
		"LOREBASE_JOBS_BATCH_TARGET_MS":          "300",
		"LOREBASE_HTTP_MAX_BODY_BYTES":           "2048",
	}))
	require.NoError(t, err)
	require.Equal(t, "0.0.0.0:9000", cfg.Listen)
	require.Equal(t, "postgres://env/db", cfg.Database.URL, "the environment wins")
	require.Equal(t, 20, cfg.Database.MaxConns)
	require.EqualValues(t, 2048, cfg.HTTP.MaxBodyBytes)
	require.Equal(t, 750, cfg.Store.Reads.SearchCandidates)
	require.Equal(t, 200, cfg.Read.Page.MaxLimit)
	require.Equal(t, 300, cfg.Jobs.BatchTargetMS)
	require.Equal(t, "from-the-file-0123456789", cfg.AdminToken)
	require.Equal(t, 7*time.Second, cfg.HTTP.RequestTimeout)
}

func TestConfigEveryKeyHasAnEnvironmentVariable(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	for _, k := range keeper.ConfigKeys() {
		switch k {
		case "listen":
			env[keeper.EnvName(k)] = "127.0.0.1:1234"
		case "database.url":
			env[keeper.EnvName(k)] = "postgres://x/y"
		case "admin_token":
			env[keeper.EnvName(k)] = "an-admin-token-0123456789"
		case "database.max_conns":
			env[keeper.EnvName(k)] = "7"
		case "http.max_body_bytes":
			env[keeper.EnvName(k)] = "4096"
		case "jobs.batch_contended_ms":
			env[keeper.EnvName(k)] = "11"
		case "database.app_url":
			env[keeper.EnvName(k)] = "postgres://request@x/y"
		case "http.request_timeout", "write.idempotency_ttl", "jobs.rescue_stuck_after", "jobs.sweep_interval":
			env[keeper.EnvName(k)] = "12s"
		default:
			env[keeper.EnvName(k)] = "12"
		}
	}
	cfg, err := keeper.LoadConfig("", envOf(env))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:1234", cfg.Listen)
	require.Equal(t, 7, cfg.Database.MaxConns)
	require.Equal(t, 12, cfg.Write.MaxChanges)
	require.Equal(t, 11, cfg.Jobs.BatchContendedMS)
	require.Equal(t, 12*time.Second, cfg.HTTP.RequestTimeout)
	require.Equal(t, "postgres://request@x/y", cfg.Database.AppURL)
	require.Equal(t, "LOREBASE_STORE_READS_SEARCH_CANDIDATES", keeper.EnvName("store.reads.search_candidates"))
	require.Equal(t, "LOREBASE_DATABASE_URL", keeper.EnvName("database.url"))
	require.Equal(t, "LOREBASE_ADMIN_TOKEN", keeper.EnvName("admin_token"))
	require.Equal(t, "LOREBASE_LISTEN", keeper.EnvName("listen"))
}

func TestConfigErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for name, c := range map[string]struct {
		file string
		env  map[string]string
		want string
	}{
		"unknown key":        {file: "listn: x\n", want: "listn"},
		"wrong type":         {file: "read:\n  page:\n    max_limit: lots\n", want: "max_limit"},
		"not an integer":     {env: map[string]string{"LOREBASE_WRITE_MAX_CHANGES": "many"}, want: "LOREBASE_WRITE_MAX_CHANGES"},
		"zero":               {env: map[string]string{"LOREBASE_READ_PAGE_MAX_LIMIT": "0"}, want: "read.page.max_limit"},
		"default over max":   {env: map[string]string{"LOREBASE_READ_PAGE_DEFAULT_LIMIT": "2000"}, want: "read.page.default_limit"},
		"bad listen":         {env: map[string]string{"LOREBASE_LISTEN": "8080"}, want: "listen"},
		"short admin token":  {env: map[string]string{"LOREBASE_ADMIN_TOKEN": "short"}, want: "admin_token"},
		"contended > target": {env: map[string]string{"LOREBASE_JOBS_BATCH_CONTENDED_MS": "500"}, want: "jobs.batch_contended_ms"},
		"tiny body":          {env: map[string]string{"LOREBASE_HTTP_MAX_BODY_BYTES": "10"}, want: "http.max_body_bytes"},
		"not a duration":     {env: map[string]string{"LOREBASE_HTTP_REQUEST_TIMEOUT": "30"}, want: "LOREBASE_HTTP_REQUEST_TIMEOUT"},
		"zero duration":      {env: map[string]string{"LOREBASE_WRITE_IDEMPOTENCY_TTL": "0s"}, want: "write.idempotency_ttl"},
		"duration in file":   {file: "http:\n  request_timeout: soon\n", want: `invalid duration "soon"`},
	} {
		path := ""
		if c.file != "" {
			path = filepath.Join(dir, name+".yaml")
			require.NoError(t, os.WriteFile(path, []byte(c.file), 0o600))
		}
		_, err := keeper.LoadConfig(path, envOf(c.env))
		require.Error(t, err, name)
		require.Contains(t, err.Error(), c.want, name)
	}
	_, err := keeper.LoadConfig(filepath.Join(dir, "missing.yaml"), envOf(nil))
	require.ErrorContains(t, err, "missing.yaml")
}
