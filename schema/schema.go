package schema

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Type is the type of an Attribute's values.
type Type string

// The attribute types.
const (
	TypeText      Type = "text"      // a JSON string without NUL, at most MaxTextBytes
	TypeNumber    Type = "number"    // a finite float64
	TypeInteger   Type = "integer"   // an int64
	TypeBoolean   Type = "boolean"   // true or false
	TypeDate      Type = "date"      // "YYYY-MM-DD"
	TypeTimestamp Type = "timestamp" // RFC 3339, normalized to UTC
	TypeEnum      Type = "enum"      // one of the Attribute's Values
	TypeULID      Type = "ulid"      // a ULID, normalized to upper case
	TypeJSON      Type = "json"      // any JSON value nesting at most MaxJSONDepth
	TypeRef       Type = "ref"       // the key of a Record of the Attribute's Kind
)

// Valid reports whether t is one of the known types.
func (t Type) Valid() bool {
	switch t {
	case TypeText, TypeNumber, TypeInteger, TypeBoolean, TypeDate,
		TypeTimestamp, TypeEnum, TypeULID, TypeJSON, TypeRef:
		return true
	}
	return false
}

// Cardinality values of a Relation.
const (
	CardinalityOne  = "one"
	CardinalityMany = "many"
)

// Schema is a compiled, validated schema. Treat it as immutable.
type Schema struct {
	Kinds     map[string]*Kind     `json:"kinds"`
	Relations map[string]*Relation `json:"relations"`

	kindOrder     []string // Kind names in document order
	relationOrder []string // Relation names in document order
}

// Kind is a compiled Kind: the type of a Record.
type Kind struct {
	Name       string       `json:"name"`
	Title      string       `json:"title"`      // name of the title Attribute
	Attributes []*Attribute `json:"attributes"` // document order
	Embedding  *Embedding   `json:"embedding,omitempty"`

	index map[string]*Attribute
}

// Attribute is a compiled Attribute of a Kind.
type Attribute struct {
	Name     string   `json:"name"`
	Type     Type     `json:"type"`
	Required bool     `json:"required,omitempty"`
	Unique   bool     `json:"unique,omitempty"`
	Indexed  bool     `json:"indexed,omitempty"`
	Search   bool     `json:"search,omitempty"`
	Values   []string `json:"values,omitempty"` // enum values, in document order
	Kind     string   `json:"kind,omitempty"`   // ref target Kind
}

// Embedding is a Kind's compiled embedding declaration.
type Embedding struct {
	Attributes []string `json:"attributes"` // text or enum Attributes, in the order embedded
	Dims       int      `json:"dims"`
	Model      string   `json:"model"`
}

// The embedding models that need no configuration.
const (
	ModelHash   = "hash"   // the built-in deterministic feature-hashing embedder
	ModelClient = "client" // vectors come only from the changes of commits
)

// MaxDims bounds an embedding's dimensions: the most pgvector's HNSW index
// takes for its vector type.
const MaxDims = 2000

// Spec identifies what an embedding's vectors mean: the Kind, the model,
// the dimensions and the Attributes embedded. Vectors of different specs
// are never compared.
func (e *Embedding) Spec(kind string) string {
	h := sha256.New()
	fmt.Fprintf(h, "%s\x00%s\x00%d", kind, e.Model, e.Dims)
	for _, a := range e.Attributes {
		fmt.Fprintf(h, "\x00%s", a)
	}
	return hex.EncodeToString(h.Sum(nil)[:8])
}

// Equal reports whether two declarations (either nil) are the same.
func (e *Embedding) Equal(o *Embedding) bool {
	if e == nil || o == nil {
		return e == o
	}
	return e.Model == o.Model && e.Dims == o.Dims && slices.Equal(e.Attributes, o.Attributes)
}

// Text is the text an embedder embeds for a Record's values: the
// declared Attributes' values, in order, one per line.
func (e *Embedding) Text(values map[string]any) string {
	var b strings.Builder
	for _, a := range e.Attributes {
		if s, ok := values[a].(string); ok && s != "" {
			if b.Len() > 0 {
				b.WriteByte('\n')
			}
			b.WriteString(s)
		}
	}
	return b.String()
}

// Relation is a compiled Relation: a named kind of Link from one Kind to another.
type Relation struct {
	Name        string `json:"name"`
	From        string `json:"from"`
	To          string `json:"to"`
	Cardinality string `json:"cardinality"` // CardinalityOne or CardinalityMany, never empty
	Inverse     string `json:"inverse,omitempty"`
	Required    bool   `json:"required,omitempty"`
}

// Empty returns a schema with no Kinds and no Relations: a new Domain's schema.
func Empty() *Schema {
	return &Schema{Kinds: map[string]*Kind{}, Relations: map[string]*Relation{}}
}

// Kind returns the Kind named name.
func (s *Schema) Kind(name string) (*Kind, bool) {
	if s == nil {
		return nil, false
	}
	k, ok := s.Kinds[name]
	return k, ok
}

// Relation returns the Relation named name.
func (s *Schema) Relation(name string) (*Relation, bool) {
	if s == nil {
		return nil, false
	}
	r, ok := s.Relations[name]
	return r, ok
}

// KindNames returns the Kind names in document order.
func (s *Schema) KindNames() []string {
	if s == nil {
		return nil
	}
	return orderOf(s.kindOrder, s.Kinds)
}

// RelationNames returns the Relation names in document order.
func (s *Schema) RelationNames() []string {
	if s == nil {
		return nil
	}
	return orderOf(s.relationOrder, s.Relations)
}

// orderOf returns a copy of order when it lists exactly the keys of m, else
// the keys of m sorted.
func orderOf[V any](order []string, m map[string]V) []string {
	if len(order) == len(m) {
		ok := true
		for _, n := range order {
			if _, in := m[n]; !in {
				ok = false
				break
			}
		}
		if ok {
			return slices.Clone(order)
		}
	}
	names := make([]string, 0, len(m))
	for n := range m {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

// Document converts the schema back to a document, in the original document
// order. Compiling the result yields an equal schema. Relation cardinality is
// always explicit ("one" or "many").
func (s *Schema) Document() *Document {
	doc := &Document{Kinds: []KindDoc{}, Relations: []RelationDoc{}}
	for _, name := range s.KindNames() {
		k := s.Kinds[name]
		kd := KindDoc{Name: k.Name, Title: k.Title, Attributes: make([]AttributeDoc, 0, len(k.Attributes))}
		if e := k.Embedding; e != nil {
			kd.Embedding = &EmbeddingDoc{Attributes: slices.Clone(e.Attributes), Dims: e.Dims, Model: e.Model}
		}
		for _, a := range k.Attributes {
			kd.Attributes = append(kd.Attributes, AttributeDoc{
				Name: a.Name, Type: string(a.Type),
				Required: a.Required, Unique: a.Unique, Indexed: a.Indexed, Search: a.Search,
				Values: slices.Clone(a.Values), Kind: a.Kind,
			})
		}
		doc.Kinds = append(doc.Kinds, kd)
	}
	for _, name := range s.RelationNames() {
		r := s.Relations[name]
		doc.Relations = append(doc.Relations, RelationDoc{
			Name: r.Name, From: r.From, To: r.To, Cardinality: r.Cardinality,
			Required: r.Required, Inverse: r.Inverse,
		})
	}
	return doc
}

// schemaJSON is the stored form of a Schema.
type schemaJSON struct {
	Kinds         map[string]*Kind     `json:"kinds"`
	Relations     map[string]*Relation `json:"relations"`
	KindOrder     []string             `json:"kind_order"`
	RelationOrder []string             `json:"relation_order"`
}

// MarshalJSON encodes the schema with its Kinds and Relations keyed by name,
// plus "kind_order" and "relation_order" holding the document order.
func (s *Schema) MarshalJSON() ([]byte, error) {
	out := schemaJSON{
		Kinds: s.Kinds, Relations: s.Relations,
		KindOrder: s.KindNames(), RelationOrder: s.RelationNames(),
	}
	if out.Kinds == nil {
		out.Kinds = map[string]*Kind{}
	}
	if out.Relations == nil {
		out.Relations = map[string]*Relation{}
	}
	b, err := json.Marshal(out)
	if err != nil {
		return nil, fmt.Errorf("schema: encode schema: %w", err)
	}
	return b, nil
}

// UnmarshalJSON decodes a schema written by MarshalJSON and rebuilds its
// indexes. It checks that names agree with their map keys; it does not
// re-run Compile's rules.
func (s *Schema) UnmarshalJSON(data []byte) error {
	var in schemaJSON
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("schema: decode schema: %w", err)
	}
	out := Schema{Kinds: in.Kinds, Relations: in.Relations}
	if out.Kinds == nil {
		out.Kinds = map[string]*Kind{}
	}
	if out.Relations == nil {
		out.Relations = map[string]*Relation{}
	}
	for name, k := range out.Kinds {
		if k == nil || k.Name != name {
			return fmt.Errorf("schema: decode schema: kind entry %q does not hold a Kind of that name", name)
		}
	}
	for name, r := range out.Relations {
		if r == nil || r.Name != name {
			return fmt.Errorf("schema: decode schema: relation entry %q does not hold a Relation of that name", name)
		}
	}
	if err := checkOrder(in.KindOrder, out.Kinds); err != nil {
		return fmt.Errorf("schema: decode schema: kind_order: %w", err)
	}
	if err := checkOrder(in.RelationOrder, out.Relations); err != nil {
		return fmt.Errorf("schema: decode schema: relation_order: %w", err)
	}
	out.kindOrder = in.KindOrder
	out.relationOrder = in.RelationOrder
	*s = out
	return nil
}

// checkOrder accepts an absent order (nil) or one listing each key of m once.
func checkOrder[V any](order []string, m map[string]V) error {
	if order == nil {
		return nil
	}
	seen := make(map[string]bool, len(order))
	for _, n := range order {
		if _, ok := m[n]; !ok {
			return fmt.Errorf("names %q, which is not defined", n)
		}
		if seen[n] {
			return fmt.Errorf("lists %q twice", n)
		}
		seen[n] = true
	}
	if len(seen) != len(m) {
		return fmt.Errorf("lists %d names for %d definitions", len(seen), len(m))
	}
	return nil
}

// UnmarshalJSON decodes a Kind and rebuilds its attribute index.
func (k *Kind) UnmarshalJSON(data []byte) error {
	type plain Kind
	var in plain
	if err := json.Unmarshal(data, &in); err != nil {
		return fmt.Errorf("schema: decode kind: %w", err)
	}
	out := Kind(in)
	out.index = make(map[string]*Attribute, len(out.Attributes))
	for i, a := range out.Attributes {
		if a == nil {
			return fmt.Errorf("schema: decode kind %q: attribute %d is null", out.Name, i)
		}
		if _, dup := out.index[a.Name]; dup {
			return fmt.Errorf("schema: decode kind %q: attribute %q appears twice", out.Name, a.Name)
		}
		out.index[a.Name] = a
	}
	*k = out
	return nil
}

// Attr returns the Attribute named name.
func (k *Kind) Attr(name string) (*Attribute, bool) {
	if k == nil {
		return nil, false
	}
	if k.index != nil {
		a, ok := k.index[name]
		return a, ok
	}
	for _, a := range k.Attributes {
		if a.Name == name {
			return a, true
		}
	}
	return nil, false
}

// RefAttributes returns the ref Attributes of the Kind in document order. Each
// is a foreign-key Link named after the Attribute, from this Kind to
// Attribute.Kind.
func (k *Kind) RefAttributes() []*Attribute {
	var refs []*Attribute
	for _, a := range k.Attributes {
		if a.Type == TypeRef {
			refs = append(refs, a)
		}
	}
	return refs
}
