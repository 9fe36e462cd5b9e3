package jobs

import (
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

func TestSizerAimsAtTheHoldTime(t *testing.T) {
	t.Parallel()
	cfg := Config{BatchTarget: 200 * time.Millisecond, BatchContended: 50 * time.Millisecond, FirstBatchRows: 1000, MinBatchRows: 50, MaxBatchRows: 50000}.withDefaults()
	for _, c := range []struct {
		name      string
		held      time.Duration
		contended bool
		want      int
	}{
		{"fast batches grow, at most doubling", 10 * time.Millisecond, false, 2000},
		{"on target stays", 200 * time.Millisecond, false, 1000},
		{"slow batches shrink, at most halving", 2 * time.Second, false, 500},
		{"a waiting commit aims at the contended target", 100 * time.Millisecond, true, 500},
	} {
		t.Run(c.name, func(t *testing.T) {
			s := newSizer(cfg, 0, 0)
			s.observe(1000, c.held, c.contended)
			require.Equal(t, c.want, s.limit())
		})
	}
	// Once contended, the lower target stays.
	s := newSizer(cfg, 0, 0)
	s.observe(1000, 50*time.Millisecond, true)
	s.observe(s.limit(), 50*time.Millisecond, false)
	require.Equal(t, 1000, s.limit())
	// Bounds, a fixed size, and a resumed size.
	s = newSizer(cfg, 0, 0)
	for range 20 {
		s.observe(s.limit(), time.Millisecond, false)
	}
	require.Equal(t, 50000, s.limit())
	require.Equal(t, 7, newSizer(cfg, 7, 0).limit())
	require.Equal(t, 3000, newSizer(cfg, 0, 3000).limit())
	require.Equal(t, 50, newSizer(cfg, 0, 1).limit())
	// A short batch (a table's end) does not grow the size.
	s = newSizer(cfg, 0, 0)
	s.observe(10, time.Millisecond, false)
	require.Equal(t, 1000, s.limit())
}

func TestKeysetSQL(t *testing.T) {
	t.Parallel()
	seq := int64(42)
	sql, args := linkHistoryTable.keysetSQL("r", &cursor{Keys: []string{"a'b", "rel", "c"}, Seq: &seq}, 3)
	require.Equal(t, " AND (r.from_key, r.relation, r.to_key, r.seq) > ($3::text, $4::text, $5::text, $6::bigint)", sql)
	require.Equal(t, []any{"a'b", "rel", "c", int64(42)}, args)
	sql, args = recordsTable.keysetSQL("r", nil, 1)
	require.Empty(t, sql)
	require.Empty(t, args)
}

func TestOnConflict(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		t    table
		own  bool
		want string
	}{
		{recordsTable, false, ""},
		{recordsTable, true, "\n  ON CONFLICT (domain_id, branch_id, key) DO NOTHING"},
		{linksTable, true, "\n  ON CONFLICT (domain_id, branch_id, from_key, relation, to_key) DO NOTHING"},
		{historyTable, true, "\n  ON CONFLICT (domain_id, branch_id, key, seq) DO NOTHING"},
		{linkHistoryTable, true, "\n  ON CONFLICT (domain_id, branch_id, from_key, relation, to_key, seq) DO NOTHING"},
		{linkHistoryTable, false, ""},
	} {
		require.Equal(t, c.want, onConflict(c.own, c.t), "%s own=%v", c.t.name, c.own)
	}
}
