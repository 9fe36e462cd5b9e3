package schema

import (
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func text(name string) AttributeDoc { return AttributeDoc{Name: name, Type: "text"} }

func kind(name string, attrs ...AttributeDoc) KindDoc {
	return KindDoc{Name: name, Title: "name", Attributes: append([]AttributeDoc{text("name")}, attrs...)}
}

func TestCompile(t *testing.T) {
	tests := []struct {
		name string
		doc  Document
		want []string // "field:code"; nil means it compiles
	}{
		{"empty", Document{}, nil},
		{"minimal", Document{Kinds: []KindDoc{kind("A")}}, nil},
		{"every type", Document{Kinds: []KindDoc{kind("A",
			AttributeDoc{Name: "n", Type: "number", Unique: true},
			AttributeDoc{Name: "i", Type: "integer"},
			AttributeDoc{Name: "b", Type: "boolean"},
			AttributeDoc{Name: "d", Type: "date"},
			AttributeDoc{Name: "ts", Type: "timestamp"},
			AttributeDoc{Name: "e", Type: "enum", Values: []string{"x"}, Search: true},
			AttributeDoc{Name: "u", Type: "ulid"},
			AttributeDoc{Name: "j", Type: "json", Indexed: true},
			AttributeDoc{Name: "r", Type: "ref", Kind: "A"},
		)}}, nil},
		{"invalid names", Document{
			Kinds: []KindDoc{
				{Name: "1A", Title: "x", Attributes: []AttributeDoc{text("x")}},
				{Name: "", Title: "x", Attributes: []AttributeDoc{text("x")}},
				{Name: "B", Title: "x", Attributes: []AttributeDoc{text("x"), text("bad-name"), text("_x"), text(strings.Repeat("a", 64))}},
			},
			Relations: []RelationDoc{{Name: "has space", From: "B", To: "B", Inverse: "é"}},
		}, []string{
			"kinds[0].name:invalid_name", "kinds[1].name:invalid_name",
			"kinds[2].attributes[1].name:invalid_name", "kinds[2].attributes[2].name:invalid_name", "kinds[2].attributes[3].name:invalid_name",
			"relations[0].name:invalid_name", "relations[0].inverse:invalid_name",
		}},
		{"63 character name ok", Document{Kinds: []KindDoc{kind("A" + strings.Repeat("b", 62))}}, nil},
		{"duplicates", Document{
			Kinds: []KindDoc{kind("A", text("x"), text("x")), kind("A"), kind("B", AttributeDoc{Name: "owner", Type: "ref", Kind: "A"})},
			Relations: []RelationDoc{
				{Name: "r", From: "A", To: "B", Inverse: "r"},
				{Name: "s", From: "A", To: "B", Inverse: "t"},
				{Name: "t", From: "A", To: "B"},
				{Name: "s", From: "A", To: "B"},
				{Name: "owner", From: "B", To: "A"},
				{Name: "u", From: "B", To: "A", Inverse: "owner"},
			},
		}, []string{
			"kinds[1].name:duplicate", "kinds[0].attributes[2].name:duplicate",
			"relations[0].inverse:duplicate", "relations[2].name:duplicate", "relations[3].name:duplicate",
			"relations[4].name:duplicate", "relations[5].inverse:duplicate",
		}},
		{"same ref attribute name on two kinds ok", Document{Kinds: []KindDoc{
			kind("A", AttributeDoc{Name: "owner", Type: "ref", Kind: "B"}),
			kind("B", AttributeDoc{Name: "owner", Type: "ref", Kind: "A"}),
		}}, nil},
		{"types", Document{Kinds: []KindDoc{kind("A",
			AttributeDoc{Name: "a"},
			AttributeDoc{Name: "b", Type: "string"},
		)}}, []string{"kinds[0].attributes[1].type:required", "kinds[0].attributes[2].type:invalid_type"}},
		{"enum values", Document{Kinds: []KindDoc{kind("A",
			AttributeDoc{Name: "a", Type: "enum"},
			AttributeDoc{Name: "b", Type: "enum", Values: []string{"x", "", "x", "y\x00"}},
			AttributeDoc{Name: "c", Type: "text", Values: []string{"x"}},
		)}}, []string{
			"kinds[0].attributes[1].values:required",
			"kinds[0].attributes[2].values[1]:invalid_value", "kinds[0].attributes[2].values[2]:duplicate", "kinds[0].attributes[2].values[3]:invalid_value",
			"kinds[0].attributes[3].values:not_allowed",
		}},
		{"ref kind", Document{Kinds: []KindDoc{kind("A",
			AttributeDoc{Name: "a", Type: "ref"},
			AttributeDoc{Name: "b", Type: "ref", Kind: "Nope"},
			AttributeDoc{Name: "c", Type: "text", Kind: "A"},
			AttributeDoc{Name: "d", Type: "ref", Kind: "B"},
		), kind("B")}}, []string{
			"kinds[0].attributes[1].kind:required", "kinds[0].attributes[2].kind:unknown_kind", "kinds[0].attributes[3].kind:not_allowed",
		}},
		{"title", Document{Kinds: []KindDoc{
			{Name: "A", Attributes: []AttributeDoc{text("x")}},
			{Name: "B", Title: "y", Attributes: []AttributeDoc{text("x")}},
			{Name: "C", Title: "j", Attributes: []AttributeDoc{{Name: "j", Type: "json"}}},
			{Name: "D", Title: "b", Attributes: []AttributeDoc{{Name: "b", Type: "boolean"}}},
			{Name: "E", Title: "r", Attributes: []AttributeDoc{{Name: "r", Type: "ref", Kind: "A"}}},
			{Name: "F", Title: "i", Attributes: []AttributeDoc{{Name: "i", Type: "integer"}}},
		}}, []string{"kinds[0].title:required", "kinds[1].title:unknown_attribute", "kinds[2].title:not_allowed",
			"kinds[3].title:not_allowed", "kinds[4].title:not_allowed"}},
		{"search and unique", Document{Kinds: []KindDoc{kind("A",
			AttributeDoc{Name: "a", Type: "integer", Search: true},
			AttributeDoc{Name: "b", Type: "json", Unique: true},
			AttributeDoc{Name: "c", Type: "boolean", Unique: true},
			AttributeDoc{Name: "d", Type: "ulid", Unique: true},
		)}}, []string{"kinds[0].attributes[1].search:not_allowed", "kinds[0].attributes[2].unique:not_allowed", "kinds[0].attributes[3].unique:not_allowed"}},
		{"relations", Document{Kinds: []KindDoc{kind("A")}, Relations: []RelationDoc{
			{Name: "a", From: "A", To: "A", Cardinality: "one"},
			{Name: "b"},
			{Name: "c", From: "X", To: "Y"},
			{Name: "d", From: "A", To: "A", Cardinality: "several"},
		}}, []string{"relations[1].from:required", "relations[1].to:required",
			"relations[2].from:unknown_kind", "relations[2].to:unknown_kind", "relations[3].cardinality:invalid_value"}},
		{"too many attributes and enum values", Document{Kinds: []KindDoc{func() KindDoc {
			k := kind("A", AttributeDoc{Name: "e", Type: "enum", Values: make([]string, MaxEnumValues+1)})
			for i := range k.Attributes[1].Values {
				k.Attributes[1].Values[i] = fmt.Sprint("v", i)
			}
			for i := len(k.Attributes); i <= MaxAttributes; i++ {
				k.Attributes = append(k.Attributes, text(fmt.Sprint("a", i)))
			}
			return k
		}()}}, []string{"kinds[0].attributes:too_many", "kinds[0].attributes[1].values:too_many"}},
		{"too many relations", Document{Kinds: []KindDoc{kind("A")}, Relations: func() []RelationDoc {
			rs := make([]RelationDoc, MaxRelations+1)
			for i := range rs {
				rs[i] = RelationDoc{Name: fmt.Sprint("r", i), From: "A", To: "A"}
			}
			return rs
		}()}, []string{"relations:too_many"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			s, ps := Compile(&tt.doc)
			if tt.want == nil {
				require.Empty(t, ps)
				require.NotNil(t, s)
				return
			}
			require.Nil(t, s)
			require.ElementsMatch(t, tt.want, codes(ps))
		})
	}
}

func TestCompileTooManyKinds(t *testing.T) {
	d, ps := Parse([]byte(manyKinds(MaxKinds + 1)))
	require.Empty(t, ps)
	_, ps = Compile(d)
	require.Equal(t, []string{"kinds:too_many"}, codes(ps))

	d, ps = Parse([]byte(manyKinds(MaxKinds)))
	require.Empty(t, ps)
	_, ps = Compile(d)
	require.Empty(t, ps)
}

func TestCompileNil(t *testing.T) {
	s, ps := Compile(nil)
	require.Nil(t, s)
	require.Equal(t, []string{":required"}, codes(ps))
}

func TestCompileDefaultsAndCopies(t *testing.T) {
	doc := &Document{
		Kinds:     []KindDoc{kind("A", AttributeDoc{Name: "e", Type: "enum", Values: []string{"x", "y"}})},
		Relations: []RelationDoc{{Name: "r", From: "A", To: "A"}},
	}
	s, ps := Compile(doc)
	require.Empty(t, ps)
	require.Equal(t, CardinalityMany, s.Relations["r"].Cardinality)
	doc.Kinds[0].Attributes[1].Values[0] = "changed"
	require.Equal(t, []string{"x", "y"}, s.Kinds["A"].Attributes[1].Values)
}
