// Package specvalidate checks HTTP responses against Keeper's OpenAPI
// document (package apispec) with kin-openapi. Tests wrap the server's
// handler with Validator.Wrap so every response a test receives is checked:
// its status must be documented for its operation and its body must match
// the schema of that status and content type. A response to a path or
// method the document does not know must be the server's own 404 or 405
// problem document; anything else is an undocumented route and fails.
//
// It is a test aid: nothing in the keeper binary imports it.
package specvalidate
