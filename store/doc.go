// Package store is Lorebase's database layer: the connection pool,
// migrations (Lorebase's, then River's), transactions scoped to one Domain
// under row-level security, Domains, tokens and branch (ref) bookkeeping,
// and the sentinel errors the layers above translate.
//
// Every request-path statement runs as the role lorebase_app with the
// transaction setting lorebase.domain_id naming its Domain; the
// domain_isolation policies of every table then hide every other Domain.
// The scoping statement and the read travel in one pgx.Batch, so a scoped
// read costs one round trip. Calls that span Domains (creating and listing
// Domains, resolving a bearer token) run as the owner and are few and named.
package store
