package schema

import "slices"

// Reasons for a Check.
const (
	ReasonKindDropped       = "kind_dropped"       // a Kind was removed: its Records must not exist
	ReasonAttributeDropped  = "attribute_dropped"  // an Attribute was removed: Records holding it lose the value
	ReasonAttributeRequired = "attribute_required" // an Attribute became (or was added as) required: every Record needs a value
	ReasonTypeChanged       = "type_changed"       // an Attribute's type changed: existing values must convert to NewType
	ReasonEnumNarrowed      = "enum_narrowed"      // enum values were removed: no Record may hold them
	ReasonUniqueAdded       = "unique_added"       // an Attribute became unique: existing values must be distinct
	ReasonRefKindChanged    = "ref_kind_changed"   // a ref Attribute targets another Kind: existing refs must point to it
	ReasonRelationDropped   = "relation_dropped"   // a Relation was removed or its from/to Kinds changed: its Links must not exist
	ReasonRelationRequired  = "relation_required"  // a Relation became (or was added as) required: every From Record needs a Link
	ReasonCardinalityOne    = "cardinality_one"    // a Relation went from many to one: no Record may have several Links
)

// Check is one reason a new schema may be incompatible with data that exists;
// the caller checks each against the database.
type Check struct {
	Kind      string   `json:"kind"`                // Kind concerned (a Relation's From Kind for relation checks)
	Attribute string   `json:"attribute,omitempty"` // Attribute concerned, "" for a whole Kind or a Relation
	Relation  string   `json:"relation,omitempty"`  // Relation concerned, "" otherwise
	Reason    string   `json:"reason"`              // one of the Reason constants
	Removed   []string `json:"removed,omitempty"`   // for enum_narrowed: the enum values removed
	NewType   Type     `json:"new_type,omitempty"`  // for type_changed: the new type
}

// Diff lists the checks needed to move from schema from to schema to, in
// document order of from (then to). A nil schema is treated as Empty. Changes
// that need no check (a new Kind, a new optional Attribute, widening an enum,
// dropping required or unique, search/indexed/title/inverse changes) are not
// listed. When an Attribute's type changes, only type_changed is reported for
// it (plus attribute_required or unique_added when those are added too).
func Diff(from, to *Schema) []Check {
	if from == nil {
		from = Empty()
	}
	if to == nil {
		to = Empty()
	}
	var checks []Check
	for _, name := range from.KindNames() {
		oldK := from.Kinds[name]
		nk, kept := to.Kind(name)
		if !kept {
			checks = append(checks, Check{Kind: name, Reason: ReasonKindDropped})
			continue
		}
		for _, oa := range oldK.Attributes {
			if _, kept := nk.Attr(oa.Name); !kept {
				checks = append(checks, Check{Kind: name, Attribute: oa.Name, Reason: ReasonAttributeDropped})
			}
		}
		for _, na := range nk.Attributes {
			checks = append(checks, diffAttribute(name, oldK, na)...)
		}
	}
	for _, name := range from.RelationNames() {
		or := from.Relations[name]
		nr, kept := to.Relation(name)
		if !kept || nr.From != or.From || nr.To != or.To {
			checks = append(checks, Check{Kind: or.From, Relation: name, Reason: ReasonRelationDropped})
			continue
		}
		if nr.Required && !or.Required {
			checks = append(checks, Check{Kind: nr.From, Relation: name, Reason: ReasonRelationRequired})
		}
		if nr.Cardinality == CardinalityOne && or.Cardinality != CardinalityOne {
			checks = append(checks, Check{Kind: nr.From, Relation: name, Reason: ReasonCardinalityOne})
		}
	}
	for _, name := range to.RelationNames() {
		nr := to.Relations[name]
		or, existed := from.Relation(name)
		moved := existed && (or.From != nr.From || or.To != nr.To)
		// A required relation that is new (or re-pointed) needs a Link on
		// every existing From Record. A new Kind has no Records yet.
		if nr.Required && (!existed || moved) {
			if _, kindExisted := from.Kind(nr.From); kindExisted {
				checks = append(checks, Check{Kind: nr.From, Relation: name, Reason: ReasonRelationRequired})
			}
		}
	}
	return checks
}

// diffAttribute lists the checks for Attribute na of Kind kind, given the
// Kind's old definition oldK.
func diffAttribute(kind string, oldK *Kind, na *Attribute) []Check {
	var checks []Check
	oa, existed := oldK.Attr(na.Name)
	if !existed {
		if na.Required {
			checks = append(checks, Check{Kind: kind, Attribute: na.Name, Reason: ReasonAttributeRequired})
		}
		return checks
	}
	if na.Required && !oa.Required {
		checks = append(checks, Check{Kind: kind, Attribute: na.Name, Reason: ReasonAttributeRequired})
	}
	if na.Type != oa.Type {
		checks = append(checks, Check{Kind: kind, Attribute: na.Name, Reason: ReasonTypeChanged, NewType: na.Type})
	} else {
		switch na.Type {
		case TypeEnum:
			var removed []string
			for _, v := range oa.Values {
				if !slices.Contains(na.Values, v) {
					removed = append(removed, v)
				}
			}
			if len(removed) > 0 {
				checks = append(checks, Check{Kind: kind, Attribute: na.Name, Reason: ReasonEnumNarrowed, Removed: removed})
			}
		case TypeRef:
			if na.Kind != oa.Kind {
				checks = append(checks, Check{Kind: kind, Attribute: na.Name, Reason: ReasonRefKindChanged})
			}
		}
	}
	if na.Unique && !oa.Unique {
		checks = append(checks, Check{Kind: kind, Attribute: na.Name, Reason: ReasonUniqueAdded})
	}
	return checks
}
