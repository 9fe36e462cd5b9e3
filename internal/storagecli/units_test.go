package storagecli

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestParseSize(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   string
		want int64
		err  string
	}{
		{in: "16GiB", want: 16 << 30},
		{in: "16GB", want: 16 << 30},
		{in: "16gb", want: 16 << 30},
		{in: "512MB", want: 512 << 20},
		{in: "8kB", want: 8192},
		{in: "8KiB", want: 8192},
		{in: "1TB", want: 1 << 40},
		{in: "1.5GB", want: 3 << 29},
		{in: " 64 MB ", want: 64 << 20},
		{in: "1048576", want: 1 << 20},
		{in: "100B", want: 100},
		{in: "0", want: 0},
		{in: "", err: "empty"},
		{in: "GB", err: "no number"},
		{in: "12XB", err: "unknown unit"},
		{in: "-1GB", err: "no number"},
		{in: "1.2.3MB", err: "not a number"},
		{in: "0.1B", err: "not a whole number"},
		{in: "9999999TB", err: "out of range"},
		{in: "99999999999999999999", err: "out of range"},
		{in: "1GB\x00", err: "unknown unit"},
		{in: "1'; DROP TABLE x; --", err: "unknown unit"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			t.Parallel()
			got, err := ParseSize(tt.in)
			if tt.err != "" {
				require.ErrorContains(t, err, tt.err)
				return
			}
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
		})
	}
}

func TestFormatSetting(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   int64
		want string
	}{
		{4 << 30, "4GB"},
		{1536 << 20, "1536MB"},
		{8192, "8kB"},
		{1 << 40, "1TB"},
		{100, "100B"},
		{0, "0B"},
	}
	for _, tt := range tests {
		require.Equal(t, tt.want, FormatSetting(tt.in))
		back, err := ParseSize(tt.want)
		require.NoError(t, err)
		require.Equal(t, tt.in, back, "round trip of %s", tt.want)
	}
}

func TestHumanSize(t *testing.T) {
	t.Parallel()
	require.Equal(t, "512 B", HumanSize(512))
	require.Equal(t, "1.5 kB", HumanSize(1536))
	require.Equal(t, "12 MB", HumanSize(12<<20))
	require.Equal(t, "2.5 GB", HumanSize(5<<29))
	require.Equal(t, "-1 MB", HumanSize(-1<<20))
}

func TestParseValue(t *testing.T) {
	t.Parallel()
	mem := &pgSetting{name: "shared_buffers", vartype: "integer", unit: "8kB"}
	kbSetting := &pgSetting{name: "work_mem", vartype: "integer", unit: "kB"}
	timeSetting := &pgSetting{name: "checkpoint_timeout", vartype: "integer", unit: "s"}
	real := &pgSetting{name: "random_page_cost", vartype: "real"}
	boolean := &pgSetting{name: "jit", vartype: "bool"}
	tests := []struct {
		s    *pgSetting
		a, b string
	}{
		{mem, "16384", "128MB"},
		{mem, "4GB", "524288"},
		{kbSetting, "4096", "4MB"},
		{kbSetting, "1GB", "1048576"},
		{timeSetting, "300", "5min"},
		{timeSetting, "1h", "3600s"},
		{real, "1.1", "1.10"},
		{boolean, "off", "false"},
		{boolean, "ON", "yes"},
	}
	for _, tt := range tests {
		a, err := parseValue(tt.s, tt.a)
		require.NoError(t, err)
		b, err := parseValue(tt.s, tt.b)
		require.NoError(t, err)
		require.True(t, a.equal(b), "%s: %s = %s", tt.s.name, tt.a, tt.b)
	}
	_, err := parseValue(mem, "4 parsecs")
	require.ErrorContains(t, err, "unknown unit")
	_, err = parseValue(real, "1.1MB")
	require.ErrorContains(t, err, "takes no unit")
	_, err = parseValue(boolean, "maybe")
	require.ErrorContains(t, err, "not a boolean")
	_, err = parseValue(timeSetting, "5 fortnights")
	require.ErrorContains(t, err, "unknown unit")
}

func TestValidateAgainstRange(t *testing.T) {
	t.Parallel()
	lo, hi := "64", "2147483647"
	s := &pgSetting{name: "work_mem", vartype: "integer", unit: "kB", context: "user", minVal: &lo, maxVal: &hi}
	_, err := validate(s, "16MB")
	require.NoError(t, err)
	_, err = validate(s, "32kB")
	require.ErrorContains(t, err, "below the minimum 64kB")
	_, err = validate(s, "4TB")
	require.ErrorContains(t, err, "above the maximum")
	e := &pgSetting{name: "huge_pages", vartype: "enum", context: "postmaster", enumVals: []string{"off", "on", "try"}}
	_, err = validate(e, "sometimes")
	require.ErrorContains(t, err, "not one of off, on, try")
	_, err = validate(&pgSetting{name: "block_size", vartype: "integer", context: "internal"}, "16384")
	require.ErrorContains(t, err, "cannot be set")
}
