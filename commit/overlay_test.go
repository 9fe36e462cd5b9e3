package commit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/store"
)

// An overlay's own Records of a Kind past the threshold queue that Kind's
// per-Attribute index builds in the commit's transaction, once; main and
// small overlays queue nothing.
func TestOverlayIndexThreshold(t *testing.T) {
	t.Parallel()
	var mu sync.Mutex
	var asked []string
	indexName := "overlay_test_idx"
	cfg := commit.Config{
		OverlayIndexThreshold: 3,
		IndexBuilds: func(_ context.Context, _ pgx.Tx, _, branchID int32, kind string, attrs []string) error {
			mu.Lock()
			defer mu.Unlock()
			asked = append(asked, fmt.Sprintf("%d %s %v", branchID, kind, attrs))
			return nil
		},
		IndexName: func(int32, int32, string, string) string { return indexName },
	}
	b := setup(t, cfg)
	var changes []commit.Change
	for i := 0; i < 5; i++ {
		changes = append(changes, put("Supplier", fmt.Sprintf("S-%d", i), fmt.Sprintf(`{"name": "s%d"}`, i)))
	}
	b.commit(t, changes...)
	require.Empty(t, asked, "main is indexed by its schema, never by size")

	noJobs := store.BranchJobs{Copy: func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil }}
	ov, err := b.store.CreateBranch(b.ctx, b.domain, store.CreateBranchRequest{Name: "agent/1", From: "main"}, noJobs)
	require.NoError(t, err)
	var ovID int32
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = $2`, b.domain, ov.Name).Scan(&ovID))

	commitOn := func(changes ...commit.Change) {
		t.Helper()
		_, err := b.p.Commit(b.ctx, b.domain, "agent/1", req(changes...), "")
		require.NoError(t, err)
	}
	commitOn(patch("S-0", `{"country": "DE"}`), patch("S-1", `{"country": "DE"}`), patch("S-2", `{"country": "DE"}`))
	require.Empty(t, asked, "3 own Suppliers: at the threshold, not past it")

	commitOn(put("Supplier", "S-9", `{"name": "nine", "vat": "V9"}`))
	require.Equal(t, []string{fmt.Sprintf("%d Supplier [vat country]", ovID)}, asked, "past the threshold: vat (unique) and country (indexed)")

	// Once the index exists, nothing more is asked.
	_, err = b.store.Pool.Exec(b.ctx, `CREATE INDEX `+indexName+` ON mat_records (domain_id)`)
	require.NoError(t, err)
	commitOn(put("Supplier", "S-10", `{"name": "ten"}`))
	require.Len(t, asked, 1)
}
