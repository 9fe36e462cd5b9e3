package perf

import (
	"strings"
	"testing"
)

const meminfo = `MemTotal:       24576000 kB
MemAvailable:   18000000 kB
HugePages_Total:    8400
HugePages_Free:     8222
HugePages_Rsvd:     8213
HugePages_Surp:        0
Hugepagesize:       2048 kB
Hugetlb:        17203200 kB
`

func TestParseHugePages(t *testing.T) {
	h, ok := parseHugePages(meminfo)
	if !ok || h != (hugePages{Total: 8400, Free: 8222, Rsvd: 8213, Size: 2 << 20}) {
		t.Fatalf("parseHugePages = %+v, %v", h, ok)
	}
	if got := h.Available(); got != 9 {
		t.Errorf("Available = %d, want 9 (free less promised)", got)
	}
	if got, want := h.String(), "8400 of 2 MB reserved, 8391 in use or promised"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if got, want := (hugePages{Size: 2 << 20}).String(), "none reserved (2 MB pages)"; got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	for name, text := range map[string]string{
		"no huge pages":      "MemTotal: 1 kB\nMemAvailable: 1 kB\n",
		"no page size":       strings.Replace(meminfo, "Hugepagesize:       2048 kB\n", "", 1),
		"size not in kB":     strings.Replace(meminfo, "2048 kB", "2048 MB", 1),
		"a count unreadable": strings.Replace(meminfo, "HugePages_Free:     8222", "HugePages_Free:     x", 1),
	} {
		if h, ok := parseHugePages(text); ok {
			t.Errorf("%s: parseHugePages = %+v, true; want false", name, h)
		}
	}
}

func TestHugePagesToAdd(t *testing.T) {
	tests := []struct {
		name string
		h    hugePages
		need int64
		want int64
	}{
		{"none reserved", hugePages{Size: 2 << 20}, 8391, 8391},
		{"enough free", hugePages{Total: 9000, Free: 9000, Size: 2 << 20}, 8391, 0},
		{"free but promised to another server", hugePages{Total: 9000, Free: 9000, Rsvd: 8000, Size: 2 << 20}, 8391, 7391},
		{"some used", hugePages{Total: 100, Free: 40, Size: 2 << 20}, 70, 30},
	}
	for _, tt := range tests {
		if got := hugePagesToAdd(tt.h, tt.need); got != tt.want {
			t.Errorf("%s: hugePagesToAdd = %d, want %d", tt.name, got, tt.want)
		}
	}
}

func TestHugePagesWarning(t *testing.T) {
	const gib = int64(1) << 30
	none := hugePages{Size: 2 << 20}
	tests := []struct {
		name          string
		sharedBuffers int64
		h             hugePages
		ok            bool
		warn          bool
	}{
		{"10m profile, none reserved", 16 * gib, none, true, true},
		{"10m profile, too few reserved", 16 * gib, hugePages{Total: 4000, Free: 4000, Size: 2 << 20}, true, true},
		{"10m profile, reserved", 16 * gib, hugePages{Total: 8400, Free: 8400, Size: 2 << 20}, true, false},
		{"10m profile, reserved and in use by the server", 16 * gib, hugePages{Total: 8400, Free: 300, Rsvd: 200, Size: 2 << 20}, true, false},
		{"1m profile", 4 * gib, none, true, false},
		{"counts unknown", 16 * gib, none, false, false},
	}
	for _, tt := range tests {
		got := hugePagesWarning(tt.sharedBuffers, tt.h, tt.ok)
		if (got != "") != tt.warn {
			t.Errorf("%s: hugePagesWarning = %q, want a warning: %v", tt.name, got, tt.warn)
		}
		if tt.warn && !strings.Contains(got, "--huge-pages") {
			t.Errorf("%s: the warning %q does not say how to reserve them", tt.name, got)
		}
	}
}
