package merge

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
)

// Conflict codes.
const (
	CodeAttribute       = "attribute"        // both sides changed one Attribute to different values
	CodeDeleteUpdate    = "delete_update"    // the source deleted a Record the target changed
	CodeUpdateDelete    = "update_delete"    // the source changed a Record the target deleted
	CodeAddAdd          = "add_add"          // both created one key with different bodies
	CodeLinkCardinality = "link_cardinality" // a cardinality-one Relation points elsewhere on each side
	CodeSchema          = "schema"           // both changed the schema differently
	CodeUnique          = "unique"           // the merged result duplicates a unique Attribute
	CodeRequiredLink    = "required_link"    // the merged result leaves a required Relation empty
	CodeDanglingRef     = "dangling_ref"     // the merged result refers to or links a missing Record
	CodeLinkedDelete    = "linked_delete"    // the merged result deletes a Record still linked
)

// Choices of a resolution.
const (
	ChoiceTarget = "target"
	ChoiceSource = "source"
	ChoiceValue  = "value"
)

// Value is the base's value of a conflict (null: absent).
type Value struct {
	Value any `json:"value"`
}

// SideValue is one side's value of a conflict and the Revision and author
// that set it.
type SideValue struct {
	Value    any    `json:"value"`
	Revision string `json:"revision,omitempty"`
	Author   string `json:"author,omitempty"`
}

// Resolution is a choice for one conflict, valid while the conflict's
// fingerprint is unchanged.
type Resolution struct {
	Conflict    string          `json:"conflict,omitempty"`
	Choice      string          `json:"choice"`
	Value       json.RawMessage `json:"value,omitempty"`
	Fingerprint string          `json:"fingerprint"`
}

// Conflict is one place where the source and the target cannot both be
// kept, or where their merge violates the schema or the data.
type Conflict struct {
	ID          string      `json:"id"`
	Code        string      `json:"code"`
	Kind        string      `json:"kind,omitempty"`
	Key         string      `json:"key,omitempty"`
	Attribute   string      `json:"attribute,omitempty"`
	Relation    string      `json:"relation,omitempty"`
	Message     string      `json:"message,omitempty"`
	Base        Value       `json:"base"`
	Target      SideValue   `json:"target"`
	Source      SideValue   `json:"source"`
	Fingerprint string      `json:"fingerprint"`
	Resolution  *Resolution `json:"resolution,omitempty"`

	// link is the Link a link_cardinality or Link dangling_ref conflict
	// is about.
	link *linkKey
}

// conflictID is deterministic from kind, key, path and code.
func conflictID(kind, key, path, code string) string {
	h := sha256.Sum256([]byte(strings.Join([]string{kind, key, path, code}, "\x00")))
	return "c" + hex.EncodeToString(h[:10])
}

// fingerprint hashes the three values of a conflict.
func fingerprint(base, target, source any) string {
	b, err := commit.CanonicalJSON([]any{base, target, source})
	if err != nil {
		b = []byte(fmt.Sprint(base, target, source))
	}
	h := sha256.Sum256(b)
	return hex.EncodeToString(h[:10])
}

// newConflict builds a conflict with its id and fingerprint.
func newConflict(code, kind, key, path string, base, target, source any) *Conflict {
	c := &Conflict{Code: code, Kind: kind, Key: key, Base: Value{base}, Target: SideValue{Value: target}, Source: SideValue{Value: source}}
	switch code {
	case CodeAttribute, CodeUnique, CodeDanglingRef:
		c.Attribute = path
	case CodeLinkCardinality:
		c.Relation = path
	}
	c.ID = conflictID(kind, key, path, code)
	c.Fingerprint = fingerprint(base, target, source)
	return c
}

// violation reports whether a conflict code comes from the validator.
func violation(code string) bool {
	switch code {
	case CodeUnique, CodeRequiredLink, CodeDanglingRef, CodeLinkedDelete, CodeLinkCardinality:
		return true
	}
	return false
}

// ChoiceAllowed reports whether a choice can resolve a conflict of the code:
// a violation cannot be resolved by keeping the source (that is what
// violates), except a Link cardinality (the target's Link gives way), and
// a required Link or a still-linked deletion has no value to set.
func ChoiceAllowed(code, choice string) bool {
	switch choice {
	case ChoiceTarget:
		return true
	case ChoiceSource:
		return !violation(code) || code == CodeLinkCardinality
	case ChoiceValue:
		return code != CodeRequiredLink && code != CodeLinkedDelete
	}
	return false
}

// ConflictsError: the merge has conflicts without a resolution (409).
type ConflictsError struct {
	Conflicts []*Conflict
}

func (e *ConflictsError) Error() string {
	return fmt.Sprintf("the merge has %d unresolved conflicts", len(e.Conflicts))
}

// errUnresolved is the kind of a ConflictsError: a conflict with the
// current state.
var errUnresolved = lberr.New(lberr.Conflict, "unresolved conflicts")

// Unwrap makes a ConflictsError of kind lberr.Conflict.
func (e *ConflictsError) Unwrap() error { return errUnresolved }

// invalid is a 422 naming the field of the request that is wrong.
func invalid(field, code, message string) error {
	return &lberr.Error{Kind: lberr.Unprocessable, Title: "invalid merge request", Problems: []lberr.Problem{{Field: field, Code: code, Message: message}}}
}
