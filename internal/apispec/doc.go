// Package apispec holds the OpenAPI 3.1 document of Keeper's HTTP API
// (openapi.yaml, embedded), served as JSON at GET /v1/openapi.json.
//
// The document is written by hand from the contract (DESIGN.md sections 5,
// 11, 14 and 15) rather than generated from the handlers' Go types: the
// handlers answer several shapes through maps and raw JSON, and a document
// derived from them would follow every drift instead of catching it. The
// keeper test server validates every response a test receives against this
// document (package specvalidate), and a test walks the router to check
// that every route it serves is documented, so neither side can drift
// without a failing test.
package apispec
