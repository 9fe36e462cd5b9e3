package schema

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
)

// Document is a schema document as a client sends it.
type Document struct {
	Kinds     []KindDoc     `json:"kinds"`
	Relations []RelationDoc `json:"relations"`
}

// KindDoc describes one Kind in a Document.
type KindDoc struct {
	Name       string         `json:"name"`
	Title      string         `json:"title"`
	Attributes []AttributeDoc `json:"attributes"`
	Embedding  *EmbeddingDoc  `json:"embedding,omitempty"`
}

// EmbeddingDoc declares how the Records of a Kind are embedded for
// semantic search: the text Attributes embedded, the vector's dimensions
// and the model ("hash", "client" or the name of the configured HTTP
// embedder's model).
type EmbeddingDoc struct {
	Attributes []string `json:"attributes"`
	Dims       int      `json:"dims"`
	Model      string   `json:"model"`
}

// AttributeDoc describes one Attribute of a Kind in a Document.
type AttributeDoc struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Required bool     `json:"required,omitempty"`
	Unique   bool     `json:"unique,omitempty"`
	Indexed  bool     `json:"indexed,omitempty"`
	Search   bool     `json:"search,omitempty"`
	Values   []string `json:"values,omitempty"` // enum values
	Kind     string   `json:"kind,omitempty"`   // ref target Kind
}

// RelationDoc describes one Relation in a Document.
type RelationDoc struct {
	Name        string `json:"name"`
	From        string `json:"from"`
	To          string `json:"to"`
	Cardinality string `json:"cardinality"` // "one" or "many"; empty means "many"
	Required    bool   `json:"required,omitempty"`
	Inverse     string `json:"inverse,omitempty"`
}

// fieldType is the JSON shape expected for one field of a document object.
type fieldType int

const (
	fieldString fieldType = iota
	fieldBool
	fieldStrings
	fieldObjects
	fieldObject
	fieldInt
)

// shape describes the fields of one document object. The shapes below are
// immutable lookup tables.
type shape map[string]struct {
	typ  fieldType
	elem shape
}

var (
	attributeShape = shape{
		"name": {typ: fieldString}, "type": {typ: fieldString},
		"required": {typ: fieldBool}, "unique": {typ: fieldBool},
		"indexed": {typ: fieldBool}, "search": {typ: fieldBool},
		"values": {typ: fieldStrings}, "kind": {typ: fieldString},
	}
	embeddingShape = shape{
		"attributes": {typ: fieldStrings}, "dims": {typ: fieldInt}, "model": {typ: fieldString},
	}
	kindShape = shape{
		"name": {typ: fieldString}, "title": {typ: fieldString},
		"attributes": {typ: fieldObjects, elem: attributeShape},
		"embedding":  {typ: fieldObject, elem: embeddingShape},
	}
	relationShape = shape{
		"name": {typ: fieldString}, "from": {typ: fieldString}, "to": {typ: fieldString},
		"cardinality": {typ: fieldString}, "required": {typ: fieldBool},
		"inverse": {typ: fieldString},
	}
	documentShape = shape{
		"kinds":     {typ: fieldObjects, elem: kindShape},
		"relations": {typ: fieldObjects, elem: relationShape},
	}
)

// Parse decodes a schema document strictly: malformed JSON, unknown fields,
// trailing data and values of the wrong JSON type are reported as Problems
// with Code "invalid_json" and the Field where they occur (for example
// "kinds[0].attributes[2].colour"). A JSON null is accepted for any field and
// means the field is absent. Parse does not validate the document's content;
// Compile does.
func Parse(data []byte) (*Document, []Problem) {
	var ps problems
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var raw any
	if err := dec.Decode(&raw); err != nil {
		if errors.Is(err, io.EOF) {
			ps.add("", CodeInvalidJSON, "The schema document is empty; send a JSON object with \"kinds\" and \"relations\".")
		} else {
			ps.add("", CodeInvalidJSON, "The schema document is not valid JSON: %v.", err)
		}
		return nil, ps
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		ps.add("", CodeInvalidJSON, "The schema document has unexpected data after its end (at byte %d); send exactly one JSON object.", dec.InputOffset())
		return nil, ps
	}
	checkShape("", raw, documentShape, &ps)
	if len(ps) > 0 {
		return nil, ps
	}
	var doc Document
	strict := json.NewDecoder(bytes.NewReader(data))
	strict.DisallowUnknownFields()
	if err := strict.Decode(&doc); err != nil {
		// Unreachable when checkShape agrees with the struct definitions.
		ps.add("", CodeInvalidJSON, "The schema document could not be decoded: %v.", err)
		return nil, ps
	}
	return &doc, nil
}

// checkShape reports every way v, found at path, differs from the object
// shape sh.
func checkShape(path string, v any, sh shape, ps *problems) {
	obj, ok := v.(map[string]any)
	if !ok {
		ps.add(path, CodeInvalidJSON, "%s must be a JSON object, not %s.", describePath(path), jsonTypeName(v))
		return
	}
	keys := make([]string, 0, len(obj))
	for k := range obj {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		fp := joinPath(path, k)
		f, known := sh[k]
		if !known {
			ps.add(fp, CodeInvalidJSON, "Unknown field %q; remove it or check its spelling.", k)
			continue
		}
		fv := obj[k]
		if fv == nil {
			continue
		}
		switch f.typ {
		case fieldString:
			if _, ok := fv.(string); !ok {
				ps.add(fp, CodeInvalidJSON, "%q must be a string, not %s.", k, jsonTypeName(fv))
			}
		case fieldBool:
			if _, ok := fv.(bool); !ok {
				ps.add(fp, CodeInvalidJSON, "%q must be true or false, not %s.", k, jsonTypeName(fv))
			}
		case fieldStrings:
			arr, ok := fv.([]any)
			if !ok {
				ps.add(fp, CodeInvalidJSON, "%q must be an array of strings, not %s.", k, jsonTypeName(fv))
				continue
			}
			for i, e := range arr {
				if _, ok := e.(string); !ok {
					ps.add(fmt.Sprintf("%s[%d]", fp, i), CodeInvalidJSON, "Each entry of %q must be a string, not %s.", k, jsonTypeName(e))
				}
			}
		case fieldObject:
			checkShape(fp, fv, f.elem, ps)
		case fieldInt:
			n, ok := fv.(json.Number)
			if _, err := n.Int64(); !ok || err != nil {
				ps.add(fp, CodeInvalidJSON, "%q must be an integer, not %s.", k, jsonTypeName(fv))
			}
		case fieldObjects:
			arr, ok := fv.([]any)
			if !ok {
				ps.add(fp, CodeInvalidJSON, "%q must be an array of objects, not %s.", k, jsonTypeName(fv))
				continue
			}
			for i, e := range arr {
				checkShape(fmt.Sprintf("%s[%d]", fp, i), e, f.elem, ps)
			}
		}
	}
}

func joinPath(path, key string) string {
	if path == "" {
		return key
	}
	return path + "." + key
}

func describePath(path string) string {
	if path == "" {
		return "The schema document"
	}
	return path
}

// jsonTypeName names the JSON type of a value decoded with UseNumber.
func jsonTypeName(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	case json.Number, float64:
		return "a number"
	case []any:
		return "an array"
	case map[string]any:
		return "an object"
	default:
		return fmt.Sprintf("a %T", v)
	}
}
