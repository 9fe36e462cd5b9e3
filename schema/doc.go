// Package schema owns the shape of a Domain's data in Lorebase: the schema
// document a client sends, its strict parsing (Parse), its validation and
// compilation into an immutable Schema (Compile), the validation and
// normalization of a Record's values against a Kind (ValidateValues,
// ValidatePatch, MissingRequired), the derived texts used for titles and
// full-text search (TitleOf, SearchText), and the list of data checks needed
// before a Domain may move from one schema to another (Diff).
//
// A Schema is stored compiled as JSON (jsonb) and round-trips through
// encoding/json; its name indexes and document order survive the trip.
//
// Everything here is pure Go: the package never touches the database. Callers
// run the Checks that Diff returns against the stored data themselves.
//
// Problems, never errors, describe what is wrong with a document or a value
// set: each names the offending field with a JSON-path-like string
// ("kinds[1].attributes[0].type", "values.vat"), a short machine code and a
// sentence a person can act on. Compile and the value validators report every
// problem they find, not just the first.
package schema
