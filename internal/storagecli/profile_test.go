package storagecli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestForMemory(t *testing.T) {
	t.Parallel()
	tests := []struct {
		memory string
		tier   string
		want   map[string]string
	}{
		{"2GiB", "small", map[string]string{
			"shared_buffers": "512MB", "effective_cache_size": "1536MB", "work_mem": "4MB",
			"maintenance_work_mem": "128MB", "max_wal_size": "1GB", "min_wal_size": "256MB",
		}},
		{"8GiB", "medium", map[string]string{
			"shared_buffers": "2GB", "effective_cache_size": "6GB", "work_mem": "16MB",
			"maintenance_work_mem": "512MB", "max_wal_size": "2GB", "min_wal_size": "512MB",
		}},
		{"16GiB", "medium", map[string]string{
			"shared_buffers": "4GB", "effective_cache_size": "12GB", "work_mem": "32MB",
			"maintenance_work_mem": "1GB", "max_wal_size": "4GB", "min_wal_size": "1GB",
		}},
		{"64GiB", "large", map[string]string{
			"shared_buffers": "16GB", "effective_cache_size": "48GB", "work_mem": "128MB",
			"maintenance_work_mem": "2GB", "max_wal_size": "16GB", "min_wal_size": "4GB",
		}},
		{"512GB", "large", map[string]string{
			"shared_buffers": "128GB", "effective_cache_size": "384GB", "work_mem": "256MB",
			"maintenance_work_mem": "2GB", "max_wal_size": "16GB", "min_wal_size": "4GB",
		}},
		{"512MB", "small", map[string]string{
			"shared_buffers": "128MB", "effective_cache_size": "384MB", "work_mem": "4MB",
			"maintenance_work_mem": "64MB", "max_wal_size": "1GB", "min_wal_size": "256MB",
		}},
		{"3000MB", "small", map[string]string{
			"shared_buffers": "750MB", "effective_cache_size": "2250MB", "work_mem": "5MB",
			"maintenance_work_mem": "187MB",
		}},
	}
	for _, tt := range tests {
		t.Run(tt.memory, func(t *testing.T) {
			t.Parallel()
			mem, err := ParseSize(tt.memory)
			require.NoError(t, err)
			p, err := ForMemory(mem)
			require.NoError(t, err)
			require.Equal(t, tt.tier, p.Tier)
			for k, v := range tt.want {
				require.Equal(t, v, p.Setting(k), k)
			}
			require.Equal(t, "off", p.Setting("jit"))
			require.Equal(t, "1.1", p.Setting("random_page_cost"))
			require.Equal(t, "200", p.Setting("effective_io_concurrency"))
			require.Equal(t, "0.9", p.Setting("checkpoint_completion_target"))
			require.Equal(t, "lz4", p.Setting("wal_compression"))
			require.NoError(t, p.Validate())
			require.Len(t, p.Tables, 3)
		})
	}
}

func TestForMemoryOutOfRange(t *testing.T) {
	t.Parallel()
	for _, m := range []int64{0, 256 << 20, MinMemory - 1, MaxMemory + 1} {
		_, err := ForMemory(m)
		require.ErrorContains(t, err, "out of range", "memory %d", m)
	}
}

func TestNamedProfiles(t *testing.T) {
	t.Parallel()
	require.Equal(t, []string{"dev", "1m", "10m"}, ProfileNames())
	tests := []struct {
		name, sharedBuffers, recordsFill, recordsVacuum string
		memory                                          int64
	}{
		{"dev", "512MB", "100", "0.05", 2 << 30},
		{"1m", "2GB", "90", "0.02", 8 << 30},
		{"10m", "16GB", "90", "0.01", 64 << 30},
	}
	for _, tt := range tests {
		p, err := Named(tt.name)
		require.NoError(t, err)
		require.Equal(t, tt.name, p.Name)
		require.Equal(t, tt.memory, p.Memory)
		require.Equal(t, tt.sharedBuffers, p.Setting("shared_buffers"))
		require.Equal(t, "mat_records", p.Tables[0].Table)
		require.Equal(t, Param{"fillfactor", tt.recordsFill}, p.Tables[0].Params[0])
		require.Equal(t, Param{"autovacuum_vacuum_scale_factor", tt.recordsVacuum}, p.Tables[0].Params[1])
	}
	_, err := Named("huge")
	require.ErrorContains(t, err, `unknown profile "huge" (profiles: dev, 1m, 10m)`)
}

func TestProfileValidate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name    string
		profile Profile
		err     string
	}{
		{"fillfactor too low", Profile{Tables: []TableParams{{Table: "mat_records", Params: []Param{{"fillfactor", "5"}}}}}, "out of range"},
		{"fillfactor fraction", Profile{Tables: []TableParams{{Table: "mat_records", Params: []Param{{"fillfactor", "90.5"}}}}}, "not an integer"},
		{"not a number", Profile{Tables: []TableParams{{Table: "mat_links", Params: []Param{{"autovacuum_vacuum_scale_factor", "lots"}}}}}, "not a number"},
		{"unknown parameter", Profile{Tables: []TableParams{{Table: "mat_links", Params: []Param{{"toast_tuple_target", "128"}}}}}, "not supported"},
		{"other table", Profile{Tables: []TableParams{{Table: "domains", Params: []Param{{"fillfactor", "90"}}}}}, "not tuned"},
		{"duplicate setting", Profile{Settings: []Setting{{"work_mem", "4MB"}, {"work_mem", "8MB"}}}, "appears twice"},
		{"NUL", Profile{Settings: []Setting{{"work_mem", "4MB\x00"}}}, "NUL"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			require.ErrorContains(t, tt.profile.Validate(), tt.err)
		})
	}
}

func TestTableStatements(t *testing.T) {
	t.Parallel()
	stmts, err := tableStatements([]TableChange{
		{Table: "mat_records_p0", Param: "fillfactor", Wanted: "90", Change: true},
		{Table: "mat_records_p0", Param: "autovacuum_vacuum_scale_factor", Wanted: "0.020", Change: true},
		{Table: "mat_records_p1", Param: "fillfactor", Wanted: "90", Change: false},
		{Table: "mat_links_p0", Param: "autovacuum_vacuum_threshold", Wanted: "1000", Change: true},
	})
	require.NoError(t, err)
	require.Equal(t, []string{
		`ALTER TABLE "mat_records_p0" SET (fillfactor = 90, autovacuum_vacuum_scale_factor = 0.02)`,
		`ALTER TABLE "mat_links_p0" SET (autovacuum_vacuum_threshold = 1000)`,
	}, stmts)
	require.Equal(t, `ALTER SYSTEM SET "work_mem" = '4MB'`, AlterSystemSQL("work_mem", "4MB"))
	require.Equal(t, `ALTER SYSTEM SET "x""y" = 'a''b'`, AlterSystemSQL(`x"y`, "a'b"))
}
