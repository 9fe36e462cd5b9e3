package jobs_test

import (
	"bytes"
	"context"
	"log/slog"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/jobs"
)

// writePathKeys lists the primary keys of the partitions of mat_records,
// objects and mat_history in the order the Warmer takes them, with their
// sizes in blocks.
func writePathKeys(t *testing.T, f *fixture) ([]string, []int64) {
	t.Helper()
	rows, err := f.s.Pool.Query(context.Background(), `SELECT c.relname::text, pg_relation_size(c.oid) / current_setting('block_size')::bigint
		FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid JOIN pg_class r ON r.oid = x.indrelid
		WHERE x.indisprimary AND r.relname ~ '^(mat_records|objects|mat_history)_p[0-9]+$'
		ORDER BY CASE WHEN r.relname LIKE 'mat_records%' THEN 1 WHEN r.relname LIKE 'objects%' THEN 2 ELSE 3 END, c.relname`)
	require.NoError(t, err)
	defer rows.Close()
	var names []string
	var blocks []int64
	for rows.Next() {
		var n string
		var b int64
		require.NoError(t, rows.Scan(&n, &b))
		names = append(names, n)
		blocks = append(blocks, b)
	}
	require.NoError(t, rows.Err())
	return names, blocks
}

// TestWarmerAsksForTheWritePathKeys: without pg_prewarm a pass does
// nothing and says so; with it, a pass asks for every block of the
// primary keys of every partition of the Records, the objects and the
// history, in that order, and a budget smaller than all of them leaves out
// the first that does not fit and every one after it.
func TestWarmerAsksForTheWritePathKeys(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	f := newFixture(t, 3000)
	f.exec(t, `INSERT INTO objects (domain_id, hash, body)
		SELECT $1, sha256(i::text::bytea), jsonb_build_object('n', i) FROM generate_series(1, 3000) i`, f.domain)

	w := &jobs.Warmer{Store: f.s}
	res, err := w.Warm(ctx)
	require.NoError(t, err)
	require.True(t, res.Missing, "no pg_prewarm: nothing to do")
	require.Empty(t, res.Warmed)

	f.exec(t, `CREATE EXTENSION IF NOT EXISTS pg_prewarm`)
	names, blocks := writePathKeys(t, f)
	require.Len(t, names, 24, "8 partitions of each of the three tables")
	var shared int64
	require.NoError(t, f.s.Pool.QueryRow(ctx, `SELECT pg_size_bytes(current_setting('shared_buffers')) / current_setting('block_size')::bigint`).Scan(&shared))
	var total int64
	for _, b := range blocks {
		total += b
	}
	require.Greater(t, total, int64(24), "the Domain's partitions hold more than their metapages")

	var got []string
	// One statement an index, then statements of 3 blocks (the Domain's
	// keys take several).
	for _, chunk := range []int64{0, 3} {
		jobs.SetWarmChunk(w, chunk)
		res, err = w.Warm(ctx)
		require.NoError(t, err)
		require.False(t, res.Missing)
		require.Equal(t, int64(float64(shared)*jobs.WarmFraction), res.Budget)
		require.Empty(t, res.Skipped)
		got = got[:0]
		for i, ix := range res.Warmed {
			got = append(got, ix.Name)
			require.Equal(t, blocks[i], ix.Blocks, ix.Name)
			require.Equal(t, blocks[i], ix.Loaded, "every block of %s asked for once (chunk %d)", ix.Name, chunk)
		}
		require.Equal(t, names, got)
	}
	jobs.SetWarmChunk(w, 0)

	// A budget one block short of the Domain's objects key (the largest
	// of the objects' partitions), with room left for the empty
	// partitions' keys after it: that key and every one after it are left
	// out, the small ones too.
	j := 8
	for i := 9; i < 16; i++ {
		if blocks[i] > blocks[j] {
			j = i
		}
	}
	require.Greater(t, blocks[j], int64(2))
	var budget int64
	for _, b := range blocks[:j] {
		budget += b
	}
	budget += blocks[j] - 1
	w.Fraction = (float64(budget) + 0.5) / float64(shared)
	res, err = w.Warm(ctx)
	require.NoError(t, err)
	require.Equal(t, budget, res.Budget)
	got = got[:0]
	for _, ix := range res.Warmed {
		got = append(got, ix.Name)
	}
	require.Equal(t, names[:j], got)
	require.Equal(t, names[j:], res.Skipped)
}

// TestWarmerRunsUntilItsContextEnds: Run passes at once and then every
// interval, tells once that pg_prewarm is missing however many passes find
// it so, and returns when its context ends.
func TestWarmerRunsUntilItsContextEnds(t *testing.T) {
	t.Parallel()
	f := newFixture(t, 10)
	var mu sync.Mutex
	var buf bytes.Buffer
	log := slog.New(slog.NewTextHandler(&lockedWriter{mu: &mu, w: &buf}, nil))
	w := &jobs.Warmer{Store: f.s, Log: log}
	passes := make(chan struct{}, 100)
	jobs.SetWarmPassed(w, func() {
		select {
		case passes <- struct{}{}:
		default:
		}
	})
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		w.Run(ctx, 5*time.Millisecond)
	}()
	for range 3 {
		select {
		case <-passes:
		case <-time.After(10 * time.Second):
			t.Fatal("Run did not pass every interval")
		}
	}
	cancel()
	select {
	case <-done:
	case <-time.After(5 * time.Second):
		t.Fatal("Run did not return after its context ended")
	}
	mu.Lock()
	defer mu.Unlock()
	require.Equal(t, 1, strings.Count(buf.String(), "pg_prewarm extension is not installed"), buf.String())
}

// lockedWriter serializes writes to w.
type lockedWriter struct {
	mu *sync.Mutex
	w  *bytes.Buffer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}
