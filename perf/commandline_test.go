package perf_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/perf"
)

func TestCommandLineQuotesWhatTheShellWouldSplit(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"plain flags stay as written", []string{"--scale", "540", "--parts=reads,writes"}, "bench --scale 540 --parts=reads,writes"},
		{"an empty value stays an argument", []string{"--profile", "", "--in-place"}, "bench --profile '' --in-place"},
		{"a URL with a query string is quoted", []string{"--database-url", "postgres://p@127.0.0.1:5/x?sslmode=disable"}, "bench --database-url 'postgres://p@127.0.0.1:5/x?sslmode=disable'"},
		{"spaces and quotes", []string{"--before-reads", "DROP INDEX 'a b'"}, `bench --before-reads 'DROP INDEX '\''a b'\'''`},
		{"no arguments", nil, "bench"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, perf.CommandLine("bench", tc.args))
		})
	}
}
