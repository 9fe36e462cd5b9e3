// Package agentmcp is Keeper's Model Context Protocol endpoint (/mcp),
// built on the official github.com/modelcontextprotocol/go-sdk: streamable
// HTTP, stateless, JSON responses.
//
// Every tool is a call of Keeper's own JSON API made in-process: the tool
// builds an http.Request with the caller's bearer token and serves it
// through the API router into a buffering ResponseWriter. Grants, limits,
// validation, caching and traces are therefore exactly the API's, and a
// tool keeps working when a handler behind it changes. The Domain comes
// from the token, never from an argument. An API error becomes a tool
// error holding the problem document (status, detail and each field at
// fault) so a model can correct its call.
//
// Tools: search, get_record, neighborhood, lineage, resolve,
// describe_schema, list_branches, create_branch, commit, diff, propose,
// list_conflicts, resolve_conflict and merge_proposal. Reads carry the
// read-only hint. Each takes an optional trace, sent as X-Lorebase-Trace,
// so an agent's tool calls are steps of its trace.
package agentmcp
