package perf_test

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/perf"
)

func TestParsePlanNotice(t *testing.T) {
	tests := []struct {
		name string
		msg  string
		ok   bool
		want perf.PlanStatement
	}{
		{"custom plan", "duration: 0.042 ms  plan:\nQuery Text: SELECT 1 FROM t WHERE k = 'a'\nIndex Scan using t_pkey on t  (cost=0.29..8.30 rows=1 width=4) (actual time=0.010..0.011 rows=1 loops=1)\n  Index Cond: (k = 'a'::text)\n  Buffers: shared hit=3",
			true, perf.PlanStatement{Text: "SELECT 1 FROM t WHERE k = 'a'", Shape: "Index Scan using t_pkey on t", Duration: 0.042}},
		{"generic plan over two lines of text", "duration: 1.5 ms  plan:\nQuery Text: SELECT 1\n  FROM t2 WHERE k = p\nNested Loop  (cost=0.29..8.30 rows=1 width=4)\n  ->  Seq Scan on t2  (cost=0.00..1.00 rows=1 width=4)\n        Filter: (k = $1)",
			true, perf.PlanStatement{Text: "SELECT 1\n  FROM t2 WHERE k = p", Shape: "Nested Loop\n  ->  Seq Scan on tN", Generic: true, Duration: 1.5}},
		{"numbers in names blanked", "duration: 2 ms  plan:\nQuery Text: x\nIndex Scan using mat_records_p12_key on mat_records_p12 m  (cost=1 rows=1 width=1)",
			true, perf.PlanStatement{Text: "x", Shape: "Index Scan using mat_records_pN_key on mat_records_pN m", Duration: 2}},
		{"not a plan", "some other notice", false, perf.PlanStatement{}},
		{"no plan lines", "duration: 2 ms  plan:\nQuery Text: x\nnothing", false, perf.PlanStatement{}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got, ok := perf.ParsePlanNotice(tc.msg)
			require.Equal(t, tc.ok, ok)
			require.Equal(t, tc.want, got)
		})
	}
}

func TestPlanChanges(t *testing.T) {
	call := func(n int, shape string, generic bool) perf.AuditCall {
		return perf.AuditCall{Call: n, Duration: time.Millisecond, Statements: []perf.PlanStatement{
			{Text: "SELECT a", Shape: shape, Generic: generic, Duration: float64(n)},
			{Text: "SELECT b", Shape: "same", Duration: 1},
		}}
	}
	var calls []perf.AuditCall
	for n := 1; n <= 8; n++ {
		shape, generic := "Index Scan", false
		if n >= 6 {
			shape, generic = "Seq Scan", true
		}
		calls = append(calls, call(n, shape, generic))
	}
	runs := []perf.PlanRun{
		{Read: "r", Branch: "main", Mode: "auto", Explained: true, Calls: calls},
		{Read: "r", Branch: "main", Mode: "auto", Explained: false, Calls: calls},
	}
	got := perf.PlanChanges(runs)
	require.Len(t, got, 1)
	require.Equal(t, "SELECT a", got[0].Text)
	require.Equal(t, 6, got[0].FirstCall)
	require.Equal(t, 3, got[0].Calls)
	require.True(t, got[0].GenericAfter)
	require.Equal(t, "Index Scan", got[0].Before)
	require.Equal(t, "Seq Scan", got[0].After)
	require.InDelta(t, 3.0, got[0].BeforeMs, 1e-9)
	require.InDelta(t, 7.0, got[0].AfterMs, 1e-9)
}
