// Package perf is Lorebase's performance harness: it loads the supply
// Domain (package internal/supply) through the commit pipeline, keeps a
// loaded fixture as a template database, measures reads and writes as the
// owner and as lorebase_app, and writes a Markdown report and a JSON file.
//
// Loading is resumable: the stream of a dataset is deterministic, every
// batch is one commit whose message numbers it, and a commit is atomic, so
// the number of load commits on main is the number of batches to skip.
//
// Measurements take closures (func(ctx) error): each runs its warm-up
// calls, then its timed calls one after the other, and the harness keeps
// every latency to compute p50, p95, p99 and the mean. The floor, a bare
// primary-key SELECT on mat_records over the same pool, tells what any read
// costs before it does any work: the driver, the round trip and, for
// lorebase_app, the scoping of the transaction.
//
// With a time limit the calls of one operation stop early (the Stats say
// Capped). RunColdWarm measures the reads on keys of an unused seed, then
// the same calls again; ExplainRead, ReadResidency (pg_buffercache) and
// Prewarm (storage prewarm's code) tell why a read misses its budget.
// CompareBaseline is the regression gate of make perf-check: each read's
// ratio to the floor against a committed Baseline.
//
// Beyond one client: RunConcurrency runs N clients over two Domains (with
// and without a writer committing at a fixed rate) and checks every Record
// returned against the client's own Domain; MeasureBranches times overlay
// and copy creation, the background copy and delete jobs batch by batch,
// the overlay against the copy call by call, and main with many overlays.
// Replicate turns a loaded base dataset into a replicated one (--replicas)
// by copying its materialized rows with renumbered keys in set-based SQL.
//
// The commands are perf/cmd/supply (load only), perf/cmd/bench (load if
// needed, then measure) and perf/cmd/perfpg (the long-lived PostgreSQL of
// make perf-up and perf-down); docs/perf-harness.md describes them.
package perf
