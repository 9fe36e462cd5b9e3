package schema

import (
	"fmt"
	"sort"
)

// Problem is one thing wrong with a document or a value.
type Problem struct {
	// Field is a JSON-path-like location: "kinds[1].attributes[0].type",
	// or for values "values.vat". It is "" for the document as a whole.
	Field string `json:"field"`
	// Code is a short machine code such as "required", "type", "enum",
	// "unknown_attribute", "invalid_name", "duplicate" or "unknown_kind".
	Code string `json:"code"`
	// Message is a sentence a person can act on.
	Message string `json:"message"`
}

// Problem codes used by this package.
const (
	CodeInvalidJSON      = "invalid_json"      // Parse: malformed, unknown field, wrong JSON type, trailing data
	CodeRequired         = "required"          // a required setting or value is missing or null
	CodeInvalidName      = "invalid_name"      // a name does not match ^[A-Za-z][A-Za-z0-9_]{0,62}$
	CodeDuplicate        = "duplicate"         // a name or enum value is used twice
	CodeInvalidType      = "invalid_type"      // an attribute type is not one of the known types
	CodeNotAllowed       = "not_allowed"       // a setting is not allowed for this attribute type
	CodeInvalidValue     = "invalid_value"     // a setting has a value outside its allowed set
	CodeUnknownKind      = "unknown_kind"      // a reference to a Kind that does not exist
	CodeUnknownAttribute = "unknown_attribute" // a reference to an Attribute that does not exist
	CodeTooMany          = "too_many"          // a list exceeds its limit
	CodeType             = "type"              // a value is not of the Attribute's type
	CodeEnum             = "enum"              // a value is not one of the enum's values
	CodeInvalidText      = "invalid_text"      // a string contains NUL or is not valid UTF-8
	CodeTooLong          = "too_long"          // a string exceeds its length limit
	CodeTooDeep          = "too_deep"          // a json value nests deeper than MaxJSONDepth
	CodeInvalidKey       = "invalid_key"       // a ref value is not a usable Record key
)

// problems accumulates Problems.
type problems []Problem

func (ps *problems) add(field, code, format string, args ...any) {
	*ps = append(*ps, Problem{Field: field, Code: code, Message: fmt.Sprintf(format, args...)})
}

// sortProblems orders problems by Field, keeping the order of problems on the
// same Field.
func sortProblems(ps []Problem) {
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].Field < ps[j].Field })
}
