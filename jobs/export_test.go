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
