package main

import (
	"os"
	"runtime"
	"strings"
	"testing"
)

func TestMinorFaultsOfThisProcess(t *testing.T) {
	if _, err := os.Stat("/proc/self/stat"); err != nil {
		t.Skip("no /proc on this system")
	}
	pid := uint32(os.Getpid())
	self, err := os.ReadFile("/proc/self/comm")
	if err != nil {
		t.Fatal(err)
	}
	command := strings.TrimSpace(string(self))
	n0 := minorFaults(pid, command)
	if n0 < 0 {
		t.Fatalf("minorFaults(self) = %d", n0)
	}
	// Touching fresh pages takes a fault each.
	b := make([]byte, 64<<20)
	for i := 0; i < len(b); i += 4096 {
		b[i] = 1
	}
	n1 := minorFaults(pid, command)
	runtime.KeepAlive(b)
	if n1-n0 < 1000 {
		t.Errorf("faults after touching 16,384 fresh pages: %d more, want at least 1,000", n1-n0)
	}
	if n := minorFaults(1<<30, command); n != -1 {
		t.Errorf("minorFaults of no process = %d, want -1", n)
	}
	// A process of that PID but another name is not the server's backend.
	if n := minorFaults(pid, "postgres-elsewhere"); n != -1 {
		t.Errorf("minorFaults of a process of another name = %d, want -1", n)
	}
}

func TestReportGivesFirstRunsAndRepeatsApart(t *testing.T) {
	var cs []call
	for i := 1; i <= 20; i++ {
		cs = append(cs, call{Class: "partial-match full-text search", N: i, Buffers: int64(100 * i),
			FirstMs: float64(2 * i), Ms: float64(i), Read: 1, FirstRead: 3, FirstFaults: int64(i), Calls: map[string]int{"lb_search_triples": 1}})
	}
	// A call whose faults could not be read makes its class's total unknown.
	cs = append(cs, call{Class: "entity resolution", N: 1, Buffers: 7, FirstMs: 3, Ms: 1.5, FirstFaults: 4},
		call{Class: "entity resolution", N: 2, Buffers: 7, FirstMs: 3, Ms: 1.5, FirstFaults: -1})
	var b strings.Builder
	report(&b, cs, []string{"partial-match full-text search", "entity resolution"}, "0.5")
	lines := strings.Split(strings.TrimSpace(b.String()), "\n")
	if h, sep := strings.Count(lines[2], "|"), strings.Count(lines[3], "|"); h != sep {
		t.Errorf("the header has %d column bars, its separator %d", h, sep)
	}
	tests := []struct {
		prefix, want string
	}{
		// p50 is the 11th of 20 sorted, p95 the 19th.
		{"| partial-match", "| partial-match full-text search | 20 | 21000 | 1050 | 1100 | 1900 | 2000 | 20 | 60 | 210 | 22.00 | 38.00 | 11.00 | 19.00 | triples=20 |"},
		{"| entity", "| entity resolution | 2 | 14 | 7 | 7 | 7 | 7 | 0 | 0 | - | 3.00 | 3.00 | 1.50 | 1.50 | - |"},
	}
	for _, tt := range tests {
		var got string
		for _, l := range lines {
			if strings.HasPrefix(l, tt.prefix) {
				got = l
			}
		}
		if got != tt.want {
			t.Errorf("row %q:\n got %q\nwant %q", tt.prefix, got, tt.want)
		}
	}
	if !strings.Contains(lines[2], "first run ms p50") || !strings.Contains(lines[2], "repeat (EXPLAIN) ms p50") {
		t.Errorf("header %q names neither the first run nor the repeat", lines[2])
	}
}
