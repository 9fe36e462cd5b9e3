// Package pgcluster starts a throwaway PostgreSQL cluster from the
// machine's own binaries (initdb and pg_ctl on PATH or under
// /usr/lib/postgresql/*/bin; as root they run as the postgres user) in a
// temporary directory, listening on a free loopback port, and creates and
// drops databases in it. A cluster does not outlive the process that
// started it: a watchdog process stops it and removes its files when that
// process ends without stopping it (a panicking or killed test binary).
// `keeper run`, the perf harness and the test helper internal/pgtest use
// it; it does not import testing.
package pgcluster
