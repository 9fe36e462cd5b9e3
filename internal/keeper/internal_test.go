package keeper

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/store"
)

func TestMatchPattern(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		pattern, name string
		want          bool
	}{
		{"*", "main", true},
		{"*", "agent/scout/7", true},
		{"main", "main", true},
		{"main", "mainline", false},
		{"agent/scout/*", "agent/scout/7", true},
		{"agent/scout/*", "agent/scout/7/deep", true},
		{"agent/scout/*", "agent/scout", false},
		{"agent/scout/*", "main", false},
		{"agent/*/draft", "agent/a/b/draft", true},
		{"agent/*/draft", "agent/a/draftx", false},
		{"*-tmp", "x-tmp", true},
		{"a*a", "a", false},
		{"a*a", "aa", true},
		{"**", "", true},
	} {
		require.Equal(t, c.want, matchPattern(c.pattern, c.name), "%q ~ %q", c.pattern, c.name)
	}
}

func TestNulEscapeOffset(t *testing.T) {
	t.Parallel()
	require.Equal(t, -1, nulEscapeOffset([]byte(`{"a": "\\u0000"}`)), "an escaped backslash then text")
	require.Equal(t, 7, nulEscapeOffset([]byte(`{"a": "\u0000"}`)))
	require.Equal(t, 9, nulEscapeOffset([]byte(`{"a": "\\\u0000"}`)))
	require.Equal(t, -1, nulEscapeOffset([]byte(`{"a": "u0000"}`)))
}

func TestValidBranchName(t *testing.T) {
	t.Parallel()
	for name, want := range map[string]bool{
		"main": true, "agent/scout-7": true, "v1.2_x": true,
		"": false, "/main": false, "main/": false, "a//b": false, "a..b": false, "-x": false, "a b": false, "a\x00": false,
	} {
		require.Equal(t, want, store.ValidBranchName(name), name)
	}
}
