// Package client is the Go client of Lorebase's Keeper API.
//
// A Client holds the base URL and a bearer token; Domain and Branch are
// handles that name where calls go:
//
//	c := client.New("http://127.0.0.1:8080", token)
//	main := c.Domain("supply").Branch("main")
//	rec, err := main.Record(ctx, "S-1", nil)
//
// Every call takes a context and returns typed results. An answer of 4xx
// or 5xx is a *Problem holding the problem document (status, type, title,
// detail and each field at fault); use errors.As to read it.
//
// Retries: idempotent calls (GET, PUT, DELETE) and commits are retried with
// exponential backoff and jitter on transport errors, 429 (after its
// Retry-After), 502, 503 and 504. A commit is retried only because it
// carries an Idempotency-Key, generated when the caller gives none, so a
// retried commit applies once. Other writes (creating a branch or a
// Proposal, merging) are not retried.
//
// Keyset pages: the *Page calls return one page and its cursor; the
// iterators (Records, Branches, History, Revisions, DiffChanges,
// Proposals, Tokens, TraceSteps) walk every page as an iter.Seq2 and stop
// at the first error.
//
// Traces: WithTrace returns a client whose calls carry X-Lorebase-Trace,
// so each is a step of that agent trace and its commits name it.
package client
