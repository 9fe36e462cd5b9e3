package perf_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/perf"
)

func TestMemoryWarning(t *testing.T) {
	t.Parallel()
	const gib = int64(1) << 30
	for _, tc := range []struct {
		name              string
		shared, available int64
		want              string
	}{
		{"quiet machine, 10m profile", 16 * gib, 22 * gib, ""},
		{"exactly three quarters", 3 * gib, 4 * gib, ""},
		{"beside three 1m servers", 16 * gib, 18 * gib, "shared_buffers 16 GB is 88% of the memory available now (18 GB)"},
		{"more than is available", 2 * gib, 1 * gib, "shared_buffers 2 GB is 200% of the memory available now (1 GB)"},
		{"profile without shared_buffers", 0, gib, ""},
		{"available unknown", 16 * gib, 0, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := perf.MemoryWarning(tc.shared, tc.available)
			if tc.want == "" {
				require.Empty(t, got)
				return
			}
			require.Contains(t, got, tc.want)
		})
	}
}
