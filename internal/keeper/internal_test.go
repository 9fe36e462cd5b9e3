package keeper

import (
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"

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

func TestTraceQueueDropsWhenFull(t *testing.T) {
	t.Parallel()
	// A writer whose goroutine does not run: the queue fills and then
	// drops, never blocking the caller.
	w := &traceWriter{queue: make(chan traceStep, 2), dropped: prometheus.NewCounter(prometheus.CounterOpts{Name: "d"})}
	done := make(chan struct{})
	go func() {
		for range 5 {
			w.enqueue(traceStep{traceID: "t"})
		}
		close(done)
	}()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("enqueue blocked on a full queue")
	}
	require.Len(t, w.queue, 2)
	require.Equal(t, 3.0, testutil.ToFloat64(w.dropped))
}

func TestWithTrace(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ in, want string }{
		{``, `{"trace":"t"}`},
		{`null`, `{"trace":"t"}`},
		{`{"tool":"x"}`, `{"tool":"x","trace":"t"}`},
		{`{"trace":"old"}`, `{"trace":"t"}`},
		{`[1]`, `[1]`},
		{`"s"`, `"s"`},
	} {
		require.JSONEq(t, c.want, string(withTrace([]byte(c.in), "t")), c.in)
	}
}

func TestHeavyRoute(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		method, path string
		want         bool
	}{
		{"GET", "/v1/domains/d/branches/main/search", true},
		{"GET", "/v1/domains/d/branches/main/records/search", false},
		{"GET", "/v1/domains/d/branches/main/records/k/neighborhood", true},
		{"GET", "/v1/domains/d/branches/main/records/neighborhood", false},
		{"POST", "/v1/domains/d/branches/main/merges", true},
		{"POST", "/v1/domains/d/proposals/p1/merge", true},
		{"GET", "/v1/domains/d/branches/main/records/k", false},
		{"POST", "/v1/domains/d/branches/main/commits", false},
	} {
		require.Equal(t, c.want, heavyRoute(c.method, c.path), "%s %s", c.method, c.path)
	}
}
