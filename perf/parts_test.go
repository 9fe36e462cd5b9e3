package perf_test

import (
	"bytes"
	"os"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/perf"
)

func TestParseParts(t *testing.T) {
	t.Parallel()
	all := perf.PartNames()
	for _, tc := range []struct {
		in      string
		want    []string
		wantErr string
	}{
		{in: "", want: all},
		{in: "all", want: all},
		{in: "writes", want: []string{"writes"}},
		{in: "writes, reads", want: []string{"reads", "writes"}},
		{in: "merges,branches,concurrency", want: []string{"concurrency", "branches", "merges"}},
		{in: "reads,load", wantErr: `"load" is not a part`},
		{in: "reads,,writes", wantErr: `"" is not a part`},
		{in: "reads,reads", wantErr: `"reads" is named twice`},
	} {
		t.Run(tc.in, func(t *testing.T) {
			t.Parallel()
			p, err := perf.ParseParts(tc.in)
			if tc.wantErr != "" {
				require.ErrorContains(t, err, tc.wantErr)
				if tc.in != "reads,reads" {
					require.ErrorContains(t, err, "reads, writes, concurrency, branches, merges")
				}
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, p.List())
			for _, n := range all {
				require.Equal(t, p.Has(n), p.Skipped(n) == "", n)
			}
		})
	}
}

func TestReportOfSomeParts(t *testing.T) {
	t.Parallel()
	parts, err := perf.ParseParts("writes")
	require.NoError(t, err)
	st := &perf.Stats{N: 3, P50: 120 * time.Millisecond, P95: 140 * time.Millisecond, P99: 150 * time.Millisecond, Mean: 125 * time.Millisecond}
	rep := &perf.Report{
		Command: "bench --parts writes", Machine: perf.ReadMachine(),
		Dataset:            perf.Dataset{Scale: 5, Records: 925, ByKind: map[string]int{"Part": 200}},
		Parts:              parts.List(),
		ReadsSkipped:       parts.Skipped(perf.PartReads),
		Writes:             []perf.Result{{Name: "commit of 1000 changes", RLS: st}},
		ConcurrencySkipped: parts.Skipped(perf.PartConcurrency),
		BranchesSkipped:    parts.Skipped(perf.PartBranches),
		MergesSkipped:      parts.Skipped(perf.PartMerges),
	}
	var md bytes.Buffer
	require.NoError(t, rep.WriteMarkdown(&md))
	out := md.String()
	require.Contains(t, out, "Parts measured: writes.")
	require.Contains(t, out, "Not measured: not in --parts writes.")
	require.Contains(t, out, "| commit of 1000 changes | — | 3 | 120.00 | 140.00 | 150.00 | 125.00 |")
	require.NotContains(t, out, "| floor")
	require.NotContains(t, out, "ratio to floor |")
}

func TestReportGivesTheHostsHugePages(t *testing.T) {
	t.Parallel()
	m := perf.ReadMachine()
	if _, err := os.Stat("/proc/meminfo"); err != nil {
		t.Skip("no /proc/meminfo on this system")
	}
	require.NotEmpty(t, m.HugePages, "ReadMachine reads the huge pages of /proc/meminfo")
	m.HugePages = "8391 of 2 MB reserved, 8391 in use or promised"
	var md bytes.Buffer
	require.NoError(t, (&perf.Report{Command: "bench", Machine: m}).WriteMarkdown(&md))
	require.Contains(t, md.String(), "- huge pages (this host, at the start): 8391 of 2 MB reserved, 8391 in use or promised\n")
	m.HugePages = ""
	md.Reset()
	require.NoError(t, (&perf.Report{Command: "bench", Machine: m}).WriteMarkdown(&md))
	require.NotContains(t, md.String(), "huge pages")
}
