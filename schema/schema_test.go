package schema

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const sampleJSON = `{"kinds": [
   {"name": "Supplier", "title": "name", "attributes": [
      {"name": "name", "type": "text", "required": true, "search": true},
      {"name": "vat", "type": "text", "unique": true},
      {"name": "country", "type": "text", "indexed": true},
      {"name": "tier", "type": "enum", "values": ["gold", "silver"]}]},
   {"name": "Part", "title": "name", "attributes": [
      {"name": "name", "type": "text", "required": true, "search": true},
      {"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true},
      {"name": "weight_kg", "type": "number"}]}],
 "relations": [
   {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many",
    "inverse": "supplies", "required": false}]}`

// mustCompile parses and compiles a document, failing the test on problems.
func mustCompile(t *testing.T, doc string) *Schema {
	t.Helper()
	d, ps := Parse([]byte(doc))
	require.Empty(t, ps)
	s, ps := Compile(d)
	require.Empty(t, ps)
	require.NotNil(t, s)
	return s
}

// codes returns "field:code" for each problem.
func codes(ps []Problem) []string {
	out := make([]string, len(ps))
	for i, p := range ps {
		out[i] = p.Field + ":" + p.Code
		if p.Message == "" {
			out[i] += ":NO MESSAGE"
		}
	}
	return out
}

func TestParse(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string
	}{
		{"sample", sampleJSON, nil},
		{"empty object", `{}`, nil},
		{"nulls are absent", `{"kinds": null, "relations": [{"name": "r", "inverse": null}]}`, nil},
		{"empty input", ``, []string{":invalid_json"}},
		{"syntax error", `{"kinds": [}`, []string{":invalid_json"}},
		{"not an object", `[]`, []string{":invalid_json"}},
		{"trailing garbage", `{} x`, []string{":invalid_json"}},
		{"trailing second value", `{}{}`, []string{":invalid_json"}},
		{"unknown top field", `{"kind": []}`, []string{"kind:invalid_json"}},
		{"unknown nested field", `{"kinds": [{"name": "A", "attributes": [{"name": "a"}, {"name": "b"}, {"name": "c", "colour": 1}]}]}`,
			[]string{"kinds[0].attributes[2].colour:invalid_json"}},
		{"wrong types", `{"kinds": [{"name": 1, "title": true, "attributes": {}}], "relations": [{"required": "yes", "from": []}]}`,
			[]string{"kinds[0].attributes:invalid_json", "kinds[0].name:invalid_json", "kinds[0].title:invalid_json",
				"relations[0].from:invalid_json", "relations[0].required:invalid_json"}},
		{"array entries", `{"kinds": [null, {"attributes": [{"values": ["a", 2]}]}]}`,
			[]string{"kinds[0]:invalid_json", "kinds[1].attributes[0].values[1]:invalid_json"}},
		{"kinds not array", `{"kinds": "Supplier"}`, []string{"kinds:invalid_json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, ps := Parse([]byte(tt.in))
			if tt.want == nil {
				require.Empty(t, ps)
				require.NotNil(t, doc)
				return
			}
			require.Nil(t, doc)
			require.Equal(t, tt.want, codes(ps))
		})
	}
}

func TestParseSampleContent(t *testing.T) {
	doc, ps := Parse([]byte(sampleJSON))
	require.Empty(t, ps)
	require.Len(t, doc.Kinds, 2)
	require.Equal(t, []string{"gold", "silver"}, doc.Kinds[0].Attributes[3].Values)
	require.Equal(t, "Supplier", doc.Kinds[1].Attributes[1].Kind)
	require.Equal(t, "supplies", doc.Relations[0].Inverse)
}

func TestSchemaAccessors(t *testing.T) {
	s := mustCompile(t, sampleJSON)
	require.Equal(t, []string{"Supplier", "Part"}, s.KindNames())
	part, ok := s.Kind("Part")
	require.True(t, ok)
	a, ok := part.Attr("maker")
	require.True(t, ok)
	require.Equal(t, TypeRef, a.Type)
	_, ok = part.Attr("vat")
	require.False(t, ok)
	require.Equal(t, []*Attribute{a}, part.RefAttributes())
	sup, _ := s.Kind("Supplier")
	require.Empty(t, sup.RefAttributes())
	r, ok := s.Relation("supplied_by")
	require.True(t, ok)
	require.Equal(t, &Relation{Name: "supplied_by", From: "Part", To: "Supplier", Cardinality: "many", Inverse: "supplies"}, r)
	_, ok = s.Kind("Nope")
	require.False(t, ok)
	_, ok = s.Relation("nope")
	require.False(t, ok)

	var nilSchema *Schema
	_, ok = nilSchema.Kind("Part")
	require.False(t, ok)

	e := Empty()
	require.Empty(t, e.Kinds)
	require.Empty(t, e.Relations)
	require.NotNil(t, e.Kinds)
	require.NotNil(t, e.Relations)
}

func TestDocumentRoundTrip(t *testing.T) {
	s := mustCompile(t, sampleJSON)
	doc := s.Document()
	require.Equal(t, "Supplier", doc.Kinds[0].Name)
	require.Equal(t, "many", doc.Relations[0].Cardinality)
	again, ps := Compile(doc)
	require.Empty(t, ps)
	require.Equal(t, s, again)

	orig, _ := Parse([]byte(sampleJSON))
	require.Equal(t, orig, doc)
}

func TestSchemaJSONRoundTrip(t *testing.T) {
	tests := []struct {
		name string
		s    *Schema
	}{
		{"sample", mustCompile(t, sampleJSON)},
		{"empty", Empty()},
		{"order kept", mustCompile(t, `{"kinds": [{"name": "Zed", "title": "a", "attributes": [{"name": "a", "type": "text"}]},
			{"name": "Alpha", "title": "a", "attributes": [{"name": "a", "type": "text"}]}],
			"relations": [{"name": "z", "from": "Zed", "to": "Alpha"}, {"name": "a", "from": "Alpha", "to": "Zed", "cardinality": "one"}]}`)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			b, err := json.Marshal(tt.s)
			require.NoError(t, err)
			var got Schema
			require.NoError(t, json.Unmarshal(b, &got))
			require.Equal(t, tt.s, &got)
			require.Equal(t, tt.s.Document(), got.Document())
			for name, k := range got.Kinds {
				for _, a := range k.Attributes {
					found, ok := got.Kinds[name].Attr(a.Name)
					require.True(t, ok)
					require.Same(t, a, found)
				}
			}
			b2, err := json.Marshal(&got)
			require.NoError(t, err)
			require.JSONEq(t, string(b), string(b2))
		})
	}
}

func TestSchemaUnmarshalErrors(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"wrong type", `{"kinds": 1}`, "decode schema"},
		{"name mismatch", `{"kinds": {"A": {"name": "B", "title": "", "attributes": []}}}`, `kind entry "A"`},
		{"relation mismatch", `{"relations": {"r": {"name": "s"}}}`, `relation entry "r"`},
		{"order unknown", `{"kinds": {}, "kind_order": ["A"]}`, "kind_order"},
		{"order short", `{"relations": {"r": {"name": "r"}}, "relation_order": []}`, "relation_order"},
		{"duplicate attribute", `{"kinds": {"A": {"name": "A", "attributes": [{"name": "x"}, {"name": "x"}]}}}`, "twice"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var s Schema
			err := json.Unmarshal([]byte(tt.in), &s)
			require.ErrorContains(t, err, tt.want)
		})
	}

	// Without an order, names come back sorted.
	var s Schema
	require.NoError(t, json.Unmarshal([]byte(`{"kinds": {"B": {"name": "B"}, "A": {"name": "A"}}}`), &s))
	require.Equal(t, []string{"A", "B"}, s.KindNames())
	require.NotNil(t, s.Relations)
}

func TestKindAttrWithoutIndex(t *testing.T) {
	k := &Kind{Name: "K", Attributes: []*Attribute{{Name: "a", Type: TypeText}}}
	a, ok := k.Attr("a")
	require.True(t, ok)
	require.Equal(t, "a", a.Name)
	_, ok = k.Attr("b")
	require.False(t, ok)
}

func TestTypeValid(t *testing.T) {
	for _, ty := range []Type{TypeText, TypeNumber, TypeInteger, TypeBoolean, TypeDate, TypeTimestamp, TypeEnum, TypeULID, TypeJSON, TypeRef} {
		require.True(t, ty.Valid(), ty)
	}
	require.False(t, Type("string").Valid())
	require.False(t, Type("").Valid())
}

// manyKinds builds a document JSON with n trivial kinds.
func manyKinds(n int) string {
	parts := make([]string, n)
	for i := range parts {
		parts[i] = fmt.Sprintf(`{"name": "K%d", "title": "a", "attributes": [{"name": "a", "type": "text"}]}`, i)
	}
	return `{"kinds": [` + strings.Join(parts, ",") + `]}`
}
