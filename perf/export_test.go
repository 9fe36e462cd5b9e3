package perf

import (
	"context"

	"github.com/lorebase/lorebase/store"
)

// ScoreRanking exposes scoreRanking to the tests: got and ex are keys with
// their gains.
func ScoreRanking(gotKeys []string, gotGains []float64, exKeys []string, exGains []float64) (overlap, strict, ndcg float64) {
	got := make([]scored, len(gotKeys))
	for i := range gotKeys {
		got[i] = scored{gotKeys[i], gotGains[i]}
	}
	ex := make([]scored, len(exKeys))
	for i := range exKeys {
		ex[i] = scored{exKeys[i], exGains[i]}
	}
	return scoreRanking(got, ex)
}

// DropReplicaIndexes exposes dropIndexes: what a replicating run killed
// after dropping the indexes leaves behind.
func DropReplicaIndexes(ctx context.Context, s *store.Store) (int, error) {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return 0, err
	}
	defer conn.Release()
	return dropIndexes(ctx, conn)
}

// EmptyReplicaStage creates the staging tables empty, as crash recovery
// leaves unlogged tables a killed replicating run had written.
func EmptyReplicaStage(ctx context.Context, s *store.Store) error {
	for _, t := range stagedTables() {
		if _, err := s.Pool.Exec(ctx, `CREATE UNLOGGED TABLE `+stagePrefix+t.name+` (LIKE `+t.name+`)`); err != nil {
			return err
		}
	}
	return nil
}

// MemoryWarning exposes memoryWarning.
var MemoryWarning = memoryWarning

// ProfileChanges exposes profileChanges to the tests.
var ProfileChanges = profileChanges

// MachineProfile exposes machineProfile: a named storage profile fitted to
// a machine with total bytes of memory and free bytes of disk.
var MachineProfile = machineProfile
