package perf_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
)

// TestHTTPReadsAnswerAsTheReads: every read of design section 6 is
// measured over HTTP too, named after its read with its budget, and each
// HTTP call answers what the same read through package reads answers for
// the same drawn inputs (the streams are the reads' own, in the same
// order); the search of steel follows.
func TestHTTPReadsAnswerAsTheReads(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const calls = 6
	w := loadedWorkload(t, supply.Config{Seed: 4, Scale: 1, ExtraLinks: 1}, 5, calls)
	_, err := w.BuildIndexes(ctx)
	require.NoError(t, err)
	hk, err := w.StartKeeper(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { require.NoError(t, hk.Close()) })

	direct, over := w.Reads(), w.HTTPReads(hk)
	require.Len(t, direct, len(perf.ReadNames()))
	require.Len(t, over, len(direct)+1)
	for i, op := range direct {
		h := over[i]
		require.Equal(t, "HTTP: "+op.Name, h.Name)
		require.Equal(t, op.Target, h.Target, h.Name)
		require.NotNil(t, h.RLS, h.Name)
		nonEmpty := 0
		for c := 0; c < calls; c++ {
			want, err := op.Answer(ctx)
			require.NoError(t, err, "%s call %d", op.Name, c)
			got, err := h.Answer(ctx)
			require.NoError(t, err, "%s call %d", h.Name, c)
			b, err := json.Marshal(want)
			require.NoError(t, err)
			var wantJSON any
			require.NoError(t, json.Unmarshal(b, &wantJSON))
			require.Equal(t, wantJSON, got, "%s call %d", h.Name, c)
			if m, ok := got.(map[string]any); ok && len(m) > 0 {
				nonEmpty++
			}
		}
		require.Equal(t, calls, nonEmpty, "%s: every answer is a JSON object with fields", h.Name)
	}
	steel := over[len(over)-1]
	require.Equal(t, "HTTP: search q=steel", steel.Name)
	got, err := steel.Answer(ctx)
	require.NoError(t, err)
	require.NotEmpty(t, got.(map[string]any)["results"], "steel is a word of every dataset")
}
