// Package pgtest gives tests and `keeper demo`/`make run` a real PostgreSQL.
//
// Where LOREBASE_TEST_DATABASE_URL (tests) or LOREBASE_DATABASE_URL is set it
// uses that server. Otherwise it starts a throwaway cluster from the
// machine's own binaries (initdb and pg_ctl on PATH or under
// /usr/lib/postgresql/*/bin; as root they run as the postgres user) in a
// temporary directory, listening on a free loopback port, with fsync off.
//
// Tests get isolated databases cheaply: the first call in a test process
// migrates a template database, and every NewDatabase clones it with
// CREATE DATABASE ... TEMPLATE and drops the clone in t.Cleanup.
package pgtest
