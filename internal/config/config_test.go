package config_test

import (
	"flag"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
)

var updateDoc = flag.Bool("update-doc", false, "rewrite the key table of docs/configuration.md from the table")

const docPath = "../../docs/configuration.md"

func envOf(m map[string]string) func(string) string {
	return func(k string) string { return m[k] }
}

// TestDocMatchesTable: docs/configuration.md holds exactly the YAML file
// and the key table that keys.go gives.
func TestDocMatchesTable(t *testing.T) {
	data, err := os.ReadFile(docPath)
	require.NoError(t, err)
	doc := string(data)
	begin, end := strings.Index(doc, config.DocBegin), strings.Index(doc, config.DocEnd)
	require.True(t, begin >= 0 && end > begin, "docs/configuration.md lacks the generated key section markers")
	got := doc[begin : end+len(config.DocEnd)]
	if *updateDoc {
		doc = doc[:begin] + config.Markdown() + doc[end+len(config.DocEnd):]
		require.NoError(t, os.WriteFile(docPath, []byte(doc), 0o644))
		return
	}
	require.Equal(t, config.Markdown(), got, "docs/configuration.md differs from internal/config/keys.go: run go test ./internal/config -update-doc")
}

func TestDefaults(t *testing.T) {
	t.Parallel()
	cfg, err := config.Load("", envOf(nil))
	require.NoError(t, err, "the defaults are valid")
	require.Equal(t, config.Default(), cfg)
	require.Equal(t, "127.0.0.1:8080", cfg.Listen)
	require.Equal(t, 30*time.Second, cfg.Database.StatementTimeout)
	require.EqualValues(t, 32<<20, cfg.HTTP.MaxBodyBytes)
	require.Equal(t, 1000, cfg.Store.Reads.SearchCandidates)
	require.Equal(t, 200*time.Millisecond, cfg.Jobs.BatchTarget)
	require.Equal(t, 50*time.Millisecond, cfg.Jobs.BatchContended)
	require.Equal(t, 5*time.Second, cfg.Auth.TokenCache)
	require.Empty(t, cfg.AdminToken)
	for _, k := range config.Keys() {
		require.NotEmpty(t, k.Doc, k.Name)
		require.Contains(t, []string{"string", "integer", "duration"}, k.Type(), k.Name)
	}
}

// TestHybridWeightZero: one hybrid weight may be 0 (that ranking is left
// out), as a request's text_weight or semantic_weight may.
func TestHybridWeightZero(t *testing.T) {
	t.Parallel()
	for _, env := range []map[string]string{
		{"LOREBASE_SEARCH_HYBRID_TEXT_WEIGHT": "0"},
		{"LOREBASE_SEARCH_HYBRID_SEMANTIC_WEIGHT": "0"},
		{"LOREBASE_SEARCH_HYBRID_TEXT_WEIGHT": "100", "LOREBASE_SEARCH_HYBRID_SEMANTIC_WEIGHT": "0"},
	} {
		cfg, err := config.Load("", envOf(env))
		require.NoError(t, err, "%v", env)
		require.Equal(t, 0, min(cfg.Search.Hybrid.TextWeight, cfg.Search.Hybrid.SemanticWeight), "%v", env)
	}
}

func TestFileThenEnvironment(t *testing.T) {
	t.Parallel()
	path := filepath.Join(t.TempDir(), "keeper.yaml")
	require.NoError(t, os.WriteFile(path, []byte(`
# a comment
listen: 0.0.0.0:9000
database:
  url: postgres://file/db
  max_conns: 20
  statement_timeout: 5s
http:
  max_body_bytes: 1048576
store:
  reads:
    search_candidates: 500
read:
  page:
    max_limit: 200
admin_token: "from-the-file-0123456789"
`), 0o600))
	cfg, err := config.Load(path, envOf(map[string]string{
		"LOREBASE_DATABASE_URL":                  "postgres://env/db",
		"LOREBASE_STORE_READS_SEARCH_CANDIDATES": "750",
		"LOREBASE_JOBS_BATCH_TARGET":             "300ms",
		"LOREBASE_HTTP_MAX_BODY_BYTES":           "2048",
		"LOREBASE_WRITE_MAX_CHANGES":             "",
	}))
	require.NoError(t, err)
	require.Equal(t, "0.0.0.0:9000", cfg.Listen)
	require.Equal(t, "postgres://env/db", cfg.Database.URL, "the environment wins")
	require.Equal(t, 20, cfg.Database.MaxConns)
	require.Equal(t, 5*time.Second, cfg.Database.StatementTimeout)
	require.EqualValues(t, 2048, cfg.HTTP.MaxBodyBytes)
	require.Equal(t, 750, cfg.Store.Reads.SearchCandidates)
	require.Equal(t, 200, cfg.Read.Page.MaxLimit)
	require.Equal(t, 300*time.Millisecond, cfg.Jobs.BatchTarget)
	require.Equal(t, 50000, cfg.Write.MaxChanges, "an empty variable is unset")
	require.Equal(t, "from-the-file-0123456789", cfg.AdminToken)
}

func TestEveryKeyHasAnEnvironmentVariable(t *testing.T) {
	t.Parallel()
	env := map[string]string{}
	for _, k := range config.Keys() {
		switch k.Name {
		case "listen":
			env[config.EnvName(k.Name)] = "127.0.0.1:1234"
		case "admin_token":
			env[config.EnvName(k.Name)] = "an-admin-token-0123456789"
		case "http.max_body_bytes":
			env[config.EnvName(k.Name)] = "4096"
		case "jobs.batch_contended":
			env[config.EnvName(k.Name)] = "11ms"
		case "database.app_url":
			env[config.EnvName(k.Name)] = "postgres://request@x/y"
		default:
			switch k.Type() {
			case "duration":
				env[config.EnvName(k.Name)] = "12ms"
			case "integer":
				env[config.EnvName(k.Name)] = "3"
			default:
				env[config.EnvName(k.Name)] = "x"
			}
		}
	}
	cfg, err := config.Load("", envOf(env))
	require.NoError(t, err)
	require.Equal(t, "127.0.0.1:1234", cfg.Listen)
	require.Equal(t, "x", cfg.Database.URL)
	require.Equal(t, 3, cfg.Database.MaxConns)
	require.Equal(t, 3, cfg.Write.MaxChanges)
	require.Equal(t, 11*time.Millisecond, cfg.Jobs.BatchContended)
	require.Equal(t, "postgres://request@x/y", cfg.Database.AppURL)
	require.Equal(t, 12*time.Millisecond, cfg.HTTP.RequestTimeout)
	require.Equal(t, 12*time.Millisecond, cfg.Auth.TokenCache)
	require.Equal(t, "LOREBASE_STORE_READS_SEARCH_CANDIDATES", config.EnvName("store.reads.search_candidates"))
	require.Equal(t, "LOREBASE_ADMIN_TOKEN", config.EnvName("admin_token"))
	require.Equal(t, "LOREBASE_LISTEN", config.EnvName("listen"))
}

func TestErrors(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	for _, c := range []struct {
		name string
		file string
		env  map[string]string
		want []string
	}{
		{"unknown key", "listn: x\n", nil, []string{"line 1", "listn"}},
		{"unknown nested key", "read:\n  page:\n    max_limt: 5\n", nil, []string{"line 3", "read.page.max_limt"}},
		{"wrong type", "read:\n  page:\n    max_limit: lots\n", nil, []string{"line 3", "read.page.max_limit", "not an integer"}},
		{"section as value", "read: 5\n", nil, []string{"read is a section"}},
		{"value as section", "listen:\n  host: x\n", nil, []string{"listen takes a single string"}},
		{"old _ms key", "http:\n  read_timeout_ms: 100\n", nil, []string{"unknown key http.read_timeout_ms"}},
		{"not a duration", "", map[string]string{"LOREBASE_HTTP_READ_TIMEOUT": "100"}, []string{"LOREBASE_HTTP_READ_TIMEOUT", "not a duration"}},
		{"not an integer", "", map[string]string{"LOREBASE_WRITE_MAX_CHANGES": "many"}, []string{"LOREBASE_WRITE_MAX_CHANGES"}},
		{"zero", "", map[string]string{"LOREBASE_READ_PAGE_MAX_LIMIT": "0"}, []string{"read.page.max_limit", "must be positive"}},
		{"zero duration", "", map[string]string{"LOREBASE_DATABASE_STATEMENT_TIMEOUT": "0s"}, []string{"database.statement_timeout"}},
		{"negative cache", "", map[string]string{"LOREBASE_AUTH_TOKEN_CACHE": "-1s"}, []string{"auth.token_cache"}},
		{"default over max", "", map[string]string{"LOREBASE_READ_PAGE_DEFAULT_LIMIT": "2000"}, []string{"read.page.default_limit"}},
		{"bad listen", "", map[string]string{"LOREBASE_LISTEN": "8080"}, []string{"listen"}},
		{"short admin token", "", map[string]string{"LOREBASE_ADMIN_TOKEN": "short"}, []string{"admin_token"}},
		{"contended > target", "", map[string]string{"LOREBASE_JOBS_BATCH_CONTENDED": "500ms"}, []string{"jobs.batch_contended"}},
		{"tiny body", "", map[string]string{"LOREBASE_HTTP_MAX_BODY_BYTES": "10"}, []string{"http.max_body_bytes"}},
		{"app url is the owner", "", map[string]string{"LOREBASE_DATABASE_URL": "postgres://o@h/d", "LOREBASE_DATABASE_APP_URL": "postgres://o@h/d"}, []string{"database.app_url"}},
		{"zero idempotency ttl", "", map[string]string{"LOREBASE_WRITE_IDEMPOTENCY_TTL": "0s"}, []string{"write.idempotency_ttl"}},
		{"too many conns", "", map[string]string{"LOREBASE_DATABASE_MAX_CONNS": "10001"}, []string{"database.max_conns"}},
		{"both hybrid weights 0", "search:\n  hybrid:\n    text_weight: 0\n    semantic_weight: 0\n", nil,
			[]string{"search.hybrid.text_weight", "search.hybrid.semantic_weight", "both 0"}},
		{"hybrid weight over 100", "", map[string]string{"LOREBASE_SEARCH_HYBRID_TEXT_WEIGHT": "101"}, []string{"search.hybrid.text_weight", "between 0 and 100"}},
		{"negative hybrid weight", "", map[string]string{"LOREBASE_SEARCH_HYBRID_SEMANTIC_WEIGHT": "-1"}, []string{"search.hybrid.semantic_weight", "between 0 and 100"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			path := ""
			if c.file != "" {
				path = filepath.Join(dir, strings.ReplaceAll(c.name, " ", "_")+".yaml")
				require.NoError(t, os.WriteFile(path, []byte(c.file), 0o600))
			}
			_, err := config.Load(path, envOf(c.env))
			require.Error(t, err)
			for _, w := range c.want {
				require.Contains(t, err.Error(), w)
			}
		})
	}
	_, err := config.Load(filepath.Join(dir, "missing.yaml"), envOf(nil))
	require.ErrorContains(t, err, "missing.yaml")
}

// TestDocExampleLoads: the YAML file the documentation shows loads and
// gives the defaults.
func TestDocExampleLoads(t *testing.T) {
	t.Parallel()
	md := config.Markdown()
	begin := strings.Index(md, "```yaml\n") + len("```yaml\n")
	end := strings.Index(md[begin:], "```") + begin
	path := filepath.Join(t.TempDir(), "keeper.yaml")
	require.NoError(t, os.WriteFile(path, []byte(md[begin:end]), 0o600))
	cfg, err := config.Load(path, envOf(nil))
	require.NoError(t, err)
	require.Equal(t, config.Default(), cfg)
}
