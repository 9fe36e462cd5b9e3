package reads_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestOverlayWithoutOwnRowsSearchesAsItsBase: an overlay that decides no
// key (no own rows, its base unchanged since the fork) answers every
// search exactly as its base does, the Records ranked and the count of
// candidates included. 120 Parts each match two of the words "alpha",
// "beta" and "gamma" with the same score, so the partial tier's answer
// depends on how the base is asked: an overlay that asked its base for
// more than the limit listed other Records among the tied ones at 1M, and
// here counts other candidates ("ranked").
func TestOverlayWithoutOwnRowsSearchesAsItsBase(t *testing.T) {
	t.Parallel()
	f := newFixture(t, newStore(t), "overlay-ties")
	cs := []change{put("Supplier", "S-1", map[string]any{"name": "Supplier one", "country": "C1"})}
	for i := range 120 {
		cs = append(cs, put("Part", fmt.Sprintf("P-%03d", (i*37)%120), map[string]any{"name": fmt.Sprintf("Part %s %d", []string{"alpha beta", "alpha gamma", "beta gamma"}[(i*7/3)%3], i), "maker": "S-1"}))
	}
	f.commit("alice", "", cs...)
	f.fork("ov", "overlay", revInfo{})

	conn, err := f.s.Pool.Acquire(f.ctx)
	require.NoError(t, err)
	defer conn.Release()
	search := func(branch, q string, limit, cands, partial int) []string {
		return scopedStrings(t, f, conn, `SELECT coalesce(key, '') || ' ' || coalesce(score::text, '') || ' ' || match || ' ' || ranked || ' ' || truncated
			FROM lb_search($1, $2, '', $3, NULL, $4, 5, $5)`, branch, q, limit, cands, partial)
	}
	for _, tc := range []struct {
		q                     string
		limit, cands, partial int
	}{
		{"alpha beta zircon", 5, 10, 8},
		{"alpha beta zircon", 5, 4, 8},
		{"alpha beta zircon", 20, 10, 30},
		{"alpha beta gamma", 5, 10, 8},
		{"alpha beta gamma", 20, 10, 100},
		{"alpha beta gamma", 20, 30, 100},
		{"alpha beta gamma", 7, 5, 9},
		{"alpha zircon", 3, 5, 4},
		{"alpha beta", 10, 5, 100},
	} {
		want := search("main", tc.q, tc.limit, tc.cands, tc.partial)
		require.NotEmpty(t, want)
		require.Equal(t, want, search("ov", tc.q, tc.limit, tc.cands, tc.partial), "%+v", tc)
	}
}
