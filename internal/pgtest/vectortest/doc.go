// Package vectortest gives the tests of the pgvector (HNSW) path a
// database with the vector extension: LOREBASE_TEST_DATABASE_URL's server
// when it has pgvector, else a pgvector/pgvector:pg16 container started
// with testcontainers-go when a Docker engine answers; otherwise the test
// is skipped, saying why. It is apart from package pgtest so that the
// other test binaries do not link testcontainers.
package vectortest
