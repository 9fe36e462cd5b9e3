package perf

import (
	"context"
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/supply"
)

// TestPrefetch: the batches come in order, whole, with their puts counted,
// and the generating goroutine stops when the loop stops ranging (before
// the last batch) or the context ends.
func TestPrefetch(t *testing.T) {
	batches := func(n int, done chan<- struct{}) func(func([]supply.Change) bool) {
		return func(yield func([]supply.Change) bool) {
			defer close(done)
			for i := range n {
				b := []supply.Change{{Op: "put", Key: fmt.Sprintf("K-%d", i)}, {Op: "link", From: fmt.Sprintf("K-%d", i)}, {Op: "put", Key: fmt.Sprintf("L-%d", i)}}
				if !yield(b) {
					return
				}
			}
		}
	}
	for _, tc := range []struct {
		name   string
		stopAt int // stop ranging after this many batches (0: range over all)
		cancel bool
	}{
		{"all", 0, false},
		{"stopped", 2, false},
		{"cancelled", 2, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			done := make(chan struct{})
			var got []string
			for b := range prefetch(ctx, batches(5, done)) {
				require.Len(t, b.changes, 3)
				require.Equal(t, 2, b.records)
				got = append(got, b.changes[0].Key)
				if len(got) == tc.stopAt {
					if tc.cancel {
						cancel()
						continue
					}
					break
				}
			}
			<-done // the generator has returned
			want := []string{"K-0", "K-1", "K-2", "K-3", "K-4"}
			if tc.stopAt > 0 && !tc.cancel {
				want = want[:tc.stopAt]
			}
			if tc.cancel {
				// After the cancellation at most the batch waiting in
				// the channel and the one being handed over come.
				require.LessOrEqual(t, len(got), tc.stopAt+2)
				want = want[:len(got)]
			}
			require.Equal(t, want, got)
		})
	}
}
