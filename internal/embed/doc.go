// Package embed turns text into vectors for semantic search. Embedder is
// the one interface; Hash is the built-in deterministic feature-hashing
// embedder (no model, for tests and the demo), HTTP calls an
// OpenAI-compatible /embeddings endpoint with batching, a rate limit and
// retries. Set picks the embedder of a Kind's declared model.
package embed
