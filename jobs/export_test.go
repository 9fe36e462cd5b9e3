package jobs

import (
	"context"

	"github.com/lorebase/lorebase/store"
)

// BuildIndexPaused is BuildIndex with pause run after the first backfill,
// before the index is created.
func BuildIndexPaused(ctx context.Context, s *store.Store, a IndexArgs, pause func(context.Context) error) error {
	return buildIndex(ctx, s, a, buildHooks{pause: pause})
}

// BuildIndexInBatch is BuildIndex with batch run in each backfill batch,
// after it read the recorded Attributes and before it writes.
func BuildIndexInBatch(ctx context.Context, s *store.Store, a IndexArgs, batch func(context.Context) error) error {
	return buildIndex(ctx, s, a, buildHooks{batch: batch})
}

// OwnRowsAhead reports whether the copy branch b of Domain d holds rows of
// the table named after the cursor keys (nil: from the start), the look a
// copy batch makes before it picks its insert.
func OwnRowsAhead(ctx context.Context, s *store.Store, d, b int32, tableName string, after []string) (bool, error) {
	t := map[string]table{"mat_records": recordsTable, "mat_links": linksTable}[tableName]
	var c *cursor
	if after != nil {
		c = &cursor{Keys: after}
	}
	tx, err := s.Pool.Begin(ctx)
	if err != nil {
		return false, err
	}
	defer tx.Rollback(ctx) //nolint:errcheck // read-only
	return (&Copier{Store: s}).ownRowsAhead(ctx, tx, MaterializeArgs{DomainID: d, BranchID: b}, t, c)
}

// CopyLanesOf is the lanes' positions (phase, level) a copy begun before
// the lanes resumes from, its single position being phase and level.
func CopyLanesOf(phase string, level int) map[string][2]any {
	out := map[string][2]any{}
	for l, p := range lanesOf(copyProgress{Phase: phase, Level: level}) {
		out[l] = [2]any{p.Phase, p.Level}
	}
	return out
}

// SetCopyInBatch sets a function each batch of c runs once it holds the
// copy's ref lock.
func SetCopyInBatch(c *Copier, f func(lane string)) { c.inBatch = f }

// WokenSQL is the statement a copy's batch asks whether the commits it
// woke have run yet.
const WokenSQL = wokenSQL

// SetWarmPassed has w call f after every pass of Run.
func SetWarmPassed(w *Warmer, f func()) { w.passed = f }

// SetWarmChunk sets the most blocks one statement of w's passes asks for.
func SetWarmChunk(w *Warmer, blocks int64) { w.chunk = blocks }
