// Package assembly builds Keeper's working parts over one store: the one
// River client of the process with every worker, the commit pipeline and
// its job hooks (index builds, re-embedding, embedding), the reads, the
// merge engine and the sweeper. cmd/keeper and the test Keeper
// (internal/keepertest) both build their parts here, so tests run the
// wiring that ships.
package assembly
