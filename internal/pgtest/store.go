package pgtest

import (
	"context"
	"testing"

	"github.com/lorebase/lorebase/store"
)

// Store opens a store.Store on a new, migrated database (NewDatabase) with
// the default configuration, closed when the test ends.
func Store(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), NewDatabase(t), store.Config{})
	if err != nil {
		t.Fatalf("pgtest: open store: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}
