package schema

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func compileDoc(t *testing.T, d Document) *Schema {
	t.Helper()
	s, ps := Compile(&d)
	require.Empty(t, ps)
	return s
}

func TestDiff(t *testing.T) {
	base := Document{
		Kinds: []KindDoc{
			kind("A",
				AttributeDoc{Name: "e", Type: "enum", Values: []string{"x", "y", "z"}},
				AttributeDoc{Name: "n", Type: "integer"},
				AttributeDoc{Name: "r", Type: "ref", Kind: "A"},
				AttributeDoc{Name: "gone", Type: "text"},
			),
			kind("B"),
		},
		Relations: []RelationDoc{
			{Name: "ab", From: "A", To: "B"},
			{Name: "ba", From: "B", To: "A", Cardinality: "one", Required: true},
		},
	}
	edit := func(f func(d *Document)) Document {
		d := compileDoc(t, base).Document()
		f(d)
		return *d
	}
	attr := func(d *Document, k, a int) *AttributeDoc { return &d.Kinds[k].Attributes[a] }

	tests := []struct {
		name string
		to   Document
		want []Check
	}{
		{"unchanged", base, nil},
		{"always fine", edit(func(d *Document) {
			d.Kinds = append(d.Kinds, kind("C", AttributeDoc{Name: "q", Type: "text", Required: true}))
			d.Kinds[0].Attributes = append(d.Kinds[0].Attributes, text("opt"))
			attr(d, 0, 1).Values = append(attr(d, 0, 1).Values, "w")
			d.Relations[1].Required = false
			d.Relations[1].Cardinality = "many"
			d.Relations = append(d.Relations, RelationDoc{Name: "cc", From: "C", To: "C", Required: true})
		}), nil},
		{"kind dropped", edit(func(d *Document) {
			d.Kinds = d.Kinds[:1]
			d.Relations = nil
		}), []Check{
			{Kind: "B", Reason: ReasonKindDropped},
			{Kind: "A", Relation: "ab", Reason: ReasonRelationDropped},
			{Kind: "B", Relation: "ba", Reason: ReasonRelationDropped},
		}},
		{"attribute dropped", edit(func(d *Document) {
			d.Kinds[0].Attributes = d.Kinds[0].Attributes[:4]
		}), []Check{{Kind: "A", Attribute: "gone", Reason: ReasonAttributeDropped}}},
		{"attribute required", edit(func(d *Document) {
			attr(d, 0, 2).Required = true
			d.Kinds[0].Attributes = append(d.Kinds[0].Attributes, AttributeDoc{Name: "new", Type: "text", Required: true})
		}), []Check{
			{Kind: "A", Attribute: "n", Reason: ReasonAttributeRequired},
			{Kind: "A", Attribute: "new", Reason: ReasonAttributeRequired},
		}},
		{"type changed", edit(func(d *Document) {
			attr(d, 0, 2).Type = "text"
			attr(d, 0, 1).Type = "text"
			attr(d, 0, 1).Values = nil
		}), []Check{
			{Kind: "A", Attribute: "e", Reason: ReasonTypeChanged, NewType: TypeText},
			{Kind: "A", Attribute: "n", Reason: ReasonTypeChanged, NewType: TypeText},
		}},
		{"enum narrowed", edit(func(d *Document) {
			attr(d, 0, 1).Values = []string{"y", "new"}
		}), []Check{{Kind: "A", Attribute: "e", Reason: ReasonEnumNarrowed, Removed: []string{"x", "z"}}}},
		{"unique added", edit(func(d *Document) {
			attr(d, 0, 2).Unique = true
		}), []Check{{Kind: "A", Attribute: "n", Reason: ReasonUniqueAdded}}},
		{"ref kind changed", edit(func(d *Document) {
			attr(d, 0, 3).Kind = "B"
		}), []Check{{Kind: "A", Attribute: "r", Reason: ReasonRefKindChanged}}},
		{"relation dropped or moved", edit(func(d *Document) {
			d.Relations[0].To = "A"
			d.Relations = d.Relations[:1]
		}), []Check{
			{Kind: "A", Relation: "ab", Reason: ReasonRelationDropped},
			{Kind: "B", Relation: "ba", Reason: ReasonRelationDropped},
		}},
		{"relation required", edit(func(d *Document) {
			d.Relations[0].Required = true
			d.Relations = append(d.Relations, RelationDoc{Name: "aa", From: "A", To: "A", Required: true})
		}), []Check{
			{Kind: "A", Relation: "ab", Reason: ReasonRelationRequired},
			{Kind: "A", Relation: "aa", Reason: ReasonRelationRequired},
		}},
		{"cardinality one", edit(func(d *Document) {
			d.Relations[0].Cardinality = "one"
		}), []Check{{Kind: "A", Relation: "ab", Reason: ReasonCardinalityOne}}},
	}
	from := compileDoc(t, base)
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Diff(from, compileDoc(t, tt.to)))
		})
	}
}

func TestDiffNil(t *testing.T) {
	s := mustCompile(t, sampleJSON)
	require.Empty(t, Diff(nil, s))
	require.Empty(t, Diff(Empty(), s))
	require.Equal(t, []Check{
		{Kind: "Supplier", Reason: ReasonKindDropped},
		{Kind: "Part", Reason: ReasonKindDropped},
		{Kind: "Part", Relation: "supplied_by", Reason: ReasonRelationDropped},
	}, Diff(s, nil))
}
