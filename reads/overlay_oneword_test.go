package reads_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/reads"
)

// TestOverlayOneWordReadsEachAnswerOnce: an overlay's one-word search
// (lb_search_overlay's static statement) reads each Record of its answer
// from the level that holds it, its kind and title, and probes the other
// level for none: a base Record is not looked up in the overlay's rows
// again (whether the overlay holds it was decided before the limit), nor
// an own Record in the base's. Main holds 200 Parts naming bracket, the
// overlay 40 Parts of its own (so its own keys are probed, not listed),
// some naming bracket, one naming spindle, which main has none of; the
// answers are the copy's.
func TestOverlayOneWordReadsEachAnswerOnce(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := overlayPartsWorld(t, s, "overlay-one-word", 200, []string{"Part bracket", "Part bracket bracket", "Part bracket steel"},
		[]string{"Part bracket", "Part other", "Part plate", "Part ring"}, put("Part", "O-spindle", map[string]any{"name": "Part spindle"}))

	conn, plans := pgtest.AutoExplainGeneric(t, s.Requests)
	_, err := conn.Exec(f.ctx, `SET auto_explain.log_buffers = on`)
	require.NoError(t, err)
	for _, tc := range []struct {
		word string
		// the level every answer comes from, and the other
		from, other string
	}{
		{"bracket", "bm", "om"},
		{"spindle", "om", "bm"},
	} {
		t.Run(tc.word, func(t *testing.T) {
			want := searchOverlayAsCopy(t, f, conn, plans, reads.SearchQuery{Q: tc.word, Limit: 10})
			require.NotEmpty(t, want.Results)
			for _, r := range want.Results {
				require.Equal(t, tc.from == "om", strings.HasPrefix(r.Key, "O-"), "answer %s", r.Key)
			}

			seen := 0
			for _, p := range plans() {
				e, err := pgtest.ParseExplained(p)
				require.NoError(t, err)
				if !strings.Contains(e.Query, "WITH bw AS") || !strings.Contains(e.Query, "mat_records om") {
					continue
				}
				seen++
				read := map[string]float64{}
				for _, n := range pgtest.NodesOn(e.Plan, "mat_records") {
					for _, a := range []string{"om", "bm"} {
						if n.Alias == a || strings.HasPrefix(n.Alias, a+"_") {
							read[a] += n.SharedHit + n.SharedRead
						}
					}
				}
				require.Positive(t, read[tc.from], "the answer's rows read: %s", p)
				require.Zero(t, read[tc.other], "the other level probed for the answer's keys: %s", p)
			}
			require.Equal(t, 1, seen, "the one-word statement of lb_search_overlay ran once")
		})
	}
}
