// Package keepertest starts Keeper for tests: the HTTP API and UI over a
// database, served by an httptest server, with a River client running
// every worker (index builds, branch copies and deletions, merges), the
// merge engine queueing large merges through it, and everything closed in
// order (HTTP server, Keeper, jobs, store) when the test ends.
//
// Tests of internal/keeper, web and client build their Keeper here rather
// than each by hand. Only tests import it: it imports testing and
// internal/pgtest.
package keepertest
