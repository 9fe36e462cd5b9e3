// Package pgtest gives tests a real PostgreSQL.
//
// Where LOREBASE_TEST_DATABASE_URL is set it uses that server. Otherwise it
// starts a throwaway cluster (internal/pgcluster) with fsync off.
//
// Tests get isolated databases cheaply: the first call in a test process
// migrates a template database, and every NewDatabase clones it with
// CREATE DATABASE ... TEMPLATE and drops the clone in t.Cleanup.
package pgtest
