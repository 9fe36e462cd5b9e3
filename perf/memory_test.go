package perf_test

import (
	"strings"
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

// A named profile on a machine with less memory than it assumes keeps its
// settings but effective_cache_size, which is fitted to the machine.
func TestMachineProfile(t *testing.T) {
	t.Parallel()
	const gib = int64(1) << 30
	setting := func(t *testing.T, name string, total int64, setting string) (string, string) {
		t.Helper()
		var log strings.Builder
		p, err := perf.MachineProfile(name, total, 0, &log)
		require.NoError(t, err)
		for _, s := range p.Settings {
			if s.Name == setting {
				return s.Value, log.String()
			}
		}
		t.Fatalf("profile %s sets no %s", name, setting)
		return "", ""
	}
	for _, tc := range []struct {
		name    string
		total   int64
		ecs, sb string
		logged  bool
	}{
		{"10m", 24 * gib, "18GB", "16GB", true},
		{"10m", 64 * gib, "48GB", "16GB", false},
		{"10m", 128 * gib, "48GB", "16GB", false},
		{"10m", 0, "48GB", "16GB", false},
		{"1m", 24 * gib, "6GB", "2GB", false},
		{"1m", 4 * gib, "3GB", "2GB", true},
	} {
		ecs, log := setting(t, tc.name, tc.total, "effective_cache_size")
		require.Equal(t, tc.ecs, ecs, "%s on %d GiB", tc.name, tc.total/gib)
		sb, _ := setting(t, tc.name, tc.total, "shared_buffers")
		require.Equal(t, tc.sb, sb, "%s on %d GiB", tc.name, tc.total/gib)
		if tc.logged {
			require.Contains(t, log, "effective_cache_size = "+tc.ecs+", not ")
		} else {
			require.Empty(t, log)
		}
	}
	_, err := perf.MachineProfile("huge", 24*gib, 0, nil)
	require.Error(t, err)
}

// TestMachineProfileFitsTheWAL: a profile's max_wal_size over an eighth of
// the disk's free space is lowered to that eighth in whole GB (at least
// 1GB), min_wal_size to a quarter of it, and said; with room enough, or
// the free space unknown, the profile's values stay.
func TestMachineProfileFitsTheWAL(t *testing.T) {
	t.Parallel()
	const gib = int64(1) << 30
	for _, tc := range []struct {
		name     string
		free     int64
		max, min string
	}{
		{"10m", 20 * gib, "2GB", "512MB"},
		{"10m", 60 * gib, "7GB", "1792MB"},
		{"10m", 128 * gib, "16GB", "4GB"},
		{"10m", 200 * gib, "16GB", "4GB"},
		{"10m", 4 * gib, "1GB", "256MB"},
		{"10m", 0, "16GB", "4GB"},
	} {
		var log strings.Builder
		p, err := perf.MachineProfile(tc.name, 64*gib, tc.free, &log)
		require.NoError(t, err)
		got := map[string]string{}
		for _, s := range p.Settings {
			got[s.Name] = s.Value
		}
		require.Equal(t, tc.max, got["max_wal_size"], "%s with %d GiB free", tc.name, tc.free/gib)
		require.Equal(t, tc.min, got["min_wal_size"], "%s with %d GiB free", tc.name, tc.free/gib)
		if tc.max != "16GB" {
			require.Contains(t, log.String(), "max_wal_size = "+tc.max+", not 16GB: the disk holding the data has ")
		} else {
			require.Empty(t, log.String())
		}
	}
}
