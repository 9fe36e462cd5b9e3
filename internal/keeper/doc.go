// Package keeper is Lorebase's HTTP API: the router (chi, base path /v1),
// bearer-token authentication and role checks, configuration (a YAML file
// plus LOREBASE_* environment variables, see docs/configuration.md),
// problem+json errors, Prometheus metrics, health and readiness, and the
// handlers that call the commit pipeline and the reads.
//
// Every Domain-scoped request resolves the Domain named in its path and
// checks it against the token: a token of one Domain asking for another
// gets exactly the 404 of a Domain that does not exist, so tokens learn
// nothing of other tenants. The work itself then runs as lorebase_app with
// the Domain set in the same transaction (store.Read, store.InDomain and the
// commit and reads packages do that), so row-level security holds even if a
// handler were wrong.
//
// Roles: a reader reads; a writer also commits to the branches matching its
// patterns (* matches any run of characters, / included); an admin also
// changes the schema, mints tokens for its Domain and writes every branch.
// The bootstrap admin (admin_token) may do everything, and alone creates and
// lists Domains.
//
// Client errors are 4xx problem documents naming what is wrong; a request
// that fails writes nothing. Server faults are logged with the request id
// and answered with a generic 500 that never carries SQL.
//
// For agents (agents.go, traces.go, cache.go, ratelimit.go): the OpenAPI
// document at /v1/openapi.json (package apispec), the MCP endpoint at /mcp
// (package agentmcp, whose tools call this router in-process), agent
// traces written off the request path, ETags and a byte-bounded response
// cache on reads, and per-token rate limits. docs/agents.md describes them.
//
// Branch names and keys in paths are URL-escaped (agent%2Fscout-7): routing
// runs on the escaped path and each parameter is unescaped on its own.
package keeper
