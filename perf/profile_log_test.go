package perf_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/storagecli"
	"github.com/lorebase/lorebase/perf"
)

func TestProfileChangesNameEverySetting(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		res  storagecli.ApplyResult
		want []string
	}{
		{
			name: "a value set by hand is named with what replaced it",
			res: storagecli.ApplyResult{
				Settings: []storagecli.SettingChange{
					{Name: "max_wal_size", Current: "3GB", Wanted: "16GB"},
					{Name: "shared_buffers", Current: "128MB", Wanted: "16GB"},
				},
				Tables:        []storagecli.TableChange{{}, {}},
				RestartNeeded: []string{"shared_buffers"},
			},
			want: []string{
				"perf: storage profile 10m: max_wal_size = 16GB (was 3GB)\n",
				"perf: storage profile 10m: shared_buffers = 16GB (was 128MB)\n",
				"perf: storage profile 10m: 2 settings, 2 table parameters changed; restart needed for: shared_buffers\n",
			},
		},
		{
			name: "table parameters only",
			res:  storagecli.ApplyResult{Tables: []storagecli.TableChange{{}}},
			want: []string{"perf: storage profile 10m: 0 settings, 1 table parameters changed; restart needed for: none\n"},
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := perf.ProfileChanges("10m", &tc.res)
			want := ""
			for _, w := range tc.want {
				want += w
			}
			require.Equal(t, want, got)
		})
	}
}
