package schema

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Limits enforced by Compile and by value validation.
const (
	MaxKinds      = 500     // Kinds per schema
	MaxAttributes = 200     // Attributes per Kind
	MaxRelations  = 1000    // Relations per schema
	MaxEnumValues = 1000    // values per enum Attribute
	MaxTextBytes  = 1 << 20 // bytes in a text value
	// MaxIndexedTextBytes bounds a text value of an indexed or unique
	// Attribute: its index entry (the value and the key) must fit a btree
	// page's limit of about 2700 bytes.
	MaxIndexedTextBytes = 2000
	MaxRefBytes         = 256  // bytes in a ref value (a Record key)
	MaxJSONDepth        = 64   // nesting of arrays and objects in a json value
	maxEnumValueByte    = 1024 // bytes in one enum value
)

// ValidName reports whether s can name a Kind, Attribute, Relation or
// inverse: a letter, then letters, digits and _, at most 63 bytes.
func ValidName(s string) bool { return namePattern.MatchString(s) }

// namePattern is what Kind, Attribute, Relation and inverse names must match.
var namePattern = regexp.MustCompile(`^[A-Za-z][A-Za-z0-9_]{0,62}$`)

// titleTypes are the types a title Attribute may have.
var titleTypes = map[Type]bool{
	TypeText: true, TypeEnum: true, TypeULID: true, TypeInteger: true,
	TypeNumber: true, TypeDate: true, TypeTimestamp: true,
}

// Compile validates a document and returns the compiled schema, or every
// problem found. Rules:
//   - Kind, Attribute, Relation and inverse names match
//     ^[A-Za-z][A-Za-z0-9_]{0,62}$ ("invalid_name"); Kind names, attribute
//     names within a Kind, and the single namespace formed by all Relation
//     names, all non-empty inverse names and all ref Attribute names are
//     free of duplicates ("duplicate");
//   - an Attribute's type is one of the Type constants; values is required
//     for and only allowed on enum (non-empty, distinct, non-empty strings);
//     kind is required for and only allowed on ref, and names a Kind;
//   - a Kind's title names one of its Attributes of type text, enum, ulid,
//     integer, number, date or timestamp;
//   - search is only allowed on text and enum, unique not on json or boolean;
//   - a Relation's from and to name Kinds, its cardinality is "one" or
//     "many" (empty means "many");
//   - limits: MaxKinds, MaxAttributes, MaxRelations, MaxEnumValues ("too_many").
func Compile(doc *Document) (*Schema, []Problem) {
	var ps problems
	if doc == nil {
		ps.add("", CodeRequired, "The schema document is missing.")
		return nil, ps
	}
	if len(doc.Kinds) > MaxKinds {
		ps.add("kinds", CodeTooMany, "A schema may define at most %d kinds; this one defines %d.", MaxKinds, len(doc.Kinds))
	}
	if len(doc.Relations) > MaxRelations {
		ps.add("relations", CodeTooMany, "A schema may define at most %d relations; this one defines %d.", MaxRelations, len(doc.Relations))
	}

	// Kind names first, so that refs and relations may point forward.
	kindAt := map[string]string{} // valid Kind name -> path of its definition
	for i, kd := range doc.Kinds {
		p := fmt.Sprintf("kinds[%d]", i)
		if !checkName(&ps, p+".name", kd.Name, "kind") {
			continue
		}
		if first, dup := kindAt[kd.Name]; dup {
			ps.add(p+".name", CodeDuplicate, "Kind %q is already defined at %s; kind names must be unique.", kd.Name, first)
			continue
		}
		kindAt[kd.Name] = p
	}

	s := Empty()
	linkNames := map[string]string{} // ref attribute / relation / inverse name -> path
	for i, kd := range doc.Kinds {
		p := fmt.Sprintf("kinds[%d]", i)
		k := compileKind(&ps, p, kd, kindAt, linkNames)
		if kindAt[kd.Name] == p {
			s.Kinds[k.Name] = k
			s.kindOrder = append(s.kindOrder, k.Name)
		}
	}

	for i, rd := range doc.Relations {
		p := fmt.Sprintf("relations[%d]", i)
		r := compileRelation(&ps, p, rd, kindAt, linkNames)
		if r != nil {
			s.Relations[r.Name] = r
			s.relationOrder = append(s.relationOrder, r.Name)
		}
	}

	if len(ps) > 0 {
		return nil, ps
	}
	return s, nil
}

// checkName reports an invalid name and returns whether name is valid.
func checkName(ps *problems, field, name, what string) bool {
	if namePattern.MatchString(name) {
		return true
	}
	if name == "" {
		ps.add(field, CodeInvalidName, "A %s name is required: a letter followed by up to 62 letters, digits or underscores.", what)
	} else {
		ps.add(field, CodeInvalidName, "%q is not a valid %s name: use a letter followed by up to 62 letters, digits or underscores.", name, what)
	}
	return false
}

func compileKind(ps *problems, p string, kd KindDoc, kindAt, linkNames map[string]string) *Kind {
	if len(kd.Attributes) > MaxAttributes {
		ps.add(p+".attributes", CodeTooMany, "A kind may define at most %d attributes; %q defines %d.", MaxAttributes, kd.Name, len(kd.Attributes))
	}
	k := &Kind{Name: kd.Name, Title: kd.Title, index: map[string]*Attribute{}}
	attrAt := map[string]string{}
	for j, ad := range kd.Attributes {
		pa := fmt.Sprintf("%s.attributes[%d]", p, j)
		a := compileAttribute(ps, pa, ad, kindAt)
		if !checkName(ps, pa+".name", ad.Name, "attribute") {
			continue
		}
		if first, dup := attrAt[ad.Name]; dup {
			ps.add(pa+".name", CodeDuplicate, "Attribute %q is already defined at %s; attribute names must be unique within a kind.", ad.Name, first)
			continue
		}
		attrAt[ad.Name] = pa
		if _, seen := linkNames[a.Name]; a.Type == TypeRef && !seen {
			// Ref attributes of different kinds may share a name; relations
			// and inverses may not reuse it.
			linkNames[a.Name] = pa
		}
		k.Attributes = append(k.Attributes, a)
		k.index[a.Name] = a
	}

	switch a, ok := k.index[kd.Title]; {
	case kd.Title == "":
		ps.add(p+".title", CodeRequired, "Kind %q needs a title: the name of the attribute that titles its records.", kd.Name)
	case !ok:
		ps.add(p+".title", CodeUnknownAttribute, "Title %q is not an attribute of kind %q.", kd.Title, kd.Name)
	case a.Type.Valid() && !titleTypes[a.Type]:
		ps.add(p+".title", CodeNotAllowed, "Title attribute %q has type %s; a title must be text, enum, ulid, integer, number, date or timestamp.", kd.Title, a.Type)
	}
	if kd.Embedding != nil {
		k.Embedding = compileEmbedding(ps, p+".embedding", kd, k)
	}
	return k
}

// modelPattern is what an embedding model name must match.
var modelPattern = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._:/-]{0,127}$`)

// compileEmbedding checks a Kind's embedding declaration: attributes name
// distinct text or enum Attributes of the Kind, dims is 1..MaxDims, model
// is a plausible model name (whether an embedder serves it is the
// pipeline's check).
func compileEmbedding(ps *problems, p string, kd KindDoc, k *Kind) *Embedding {
	ed := kd.Embedding
	e := &Embedding{Attributes: slices.Clone(ed.Attributes), Dims: ed.Dims, Model: ed.Model}
	if len(ed.Attributes) == 0 {
		ps.add(p+".attributes", CodeRequired, "The embedding of kind %q needs the text attributes it embeds.", kd.Name)
	}
	seen := map[string]bool{}
	for i, name := range ed.Attributes {
		pa := fmt.Sprintf("%s.attributes[%d]", p, i)
		a, ok := k.index[name]
		switch {
		case !ok:
			ps.add(pa, CodeUnknownAttribute, "%q is not an attribute of kind %q.", name, kd.Name)
		case a.Type != TypeText && a.Type != TypeEnum:
			ps.add(pa, CodeNotAllowed, "Attribute %q has type %s; only text and enum attributes can be embedded.", name, a.Type)
		case seen[name]:
			ps.add(pa, CodeDuplicate, "Attribute %q is listed twice.", name)
		}
		seen[name] = true
	}
	if ed.Dims < 1 || ed.Dims > MaxDims {
		ps.add(p+".dims", CodeInvalidValue, "dims must be between 1 and %d; it is %d.", MaxDims, ed.Dims)
	}
	switch {
	case ed.Model == "":
		ps.add(p+".model", CodeRequired, "The embedding of kind %q needs a model: %q, %q or the configured embedder's model.", kd.Name, ModelHash, ModelClient)
	case !modelPattern.MatchString(ed.Model):
		ps.add(p+".model", CodeInvalidValue, "%q is not a model name: letters, digits and . _ : / -, at most 128.", ed.Model)
	}
	return e
}

func compileAttribute(ps *problems, pa string, ad AttributeDoc, kindAt map[string]string) *Attribute {
	t := Type(ad.Type)
	a := &Attribute{
		Name: ad.Name, Type: t,
		Required: ad.Required, Unique: ad.Unique, Indexed: ad.Indexed, Search: ad.Search,
		Kind: ad.Kind,
	}
	if len(ad.Values) > 0 {
		a.Values = slices.Clone(ad.Values)
	}
	switch {
	case ad.Type == "":
		ps.add(pa+".type", CodeRequired, "Attribute %q needs a type: one of text, number, integer, boolean, date, timestamp, enum, ulid, json, ref.", ad.Name)
	case !t.Valid():
		ps.add(pa+".type", CodeInvalidType, "%q is not a type: use one of text, number, integer, boolean, date, timestamp, enum, ulid, json, ref.", ad.Type)
	}

	if t == TypeEnum {
		switch {
		case len(ad.Values) == 0:
			ps.add(pa+".values", CodeRequired, "Enum attribute %q needs a non-empty list of values.", ad.Name)
		case len(ad.Values) > MaxEnumValues:
			ps.add(pa+".values", CodeTooMany, "An enum may have at most %d values; %q has %d.", MaxEnumValues, ad.Name, len(ad.Values))
		}
		seen := map[string]int{}
		for v, val := range ad.Values {
			pv := fmt.Sprintf("%s.values[%d]", pa, v)
			if val == "" || strings.ContainsRune(val, 0) || !utf8.ValidString(val) || len(val) > maxEnumValueByte {
				ps.add(pv, CodeInvalidValue, "Enum values must be non-empty text of at most %d bytes without NUL characters.", maxEnumValueByte)
				continue
			}
			if first, dup := seen[val]; dup {
				ps.add(pv, CodeDuplicate, "Enum value %q is already listed at %s.values[%d].", val, pa, first)
				continue
			}
			seen[val] = v
		}
	} else if len(ad.Values) > 0 {
		ps.add(pa+".values", CodeNotAllowed, "Only enum attributes take values; remove them from %q or make it an enum.", ad.Name)
	}

	if t == TypeRef {
		switch _, ok := kindAt[ad.Kind]; {
		case ad.Kind == "":
			ps.add(pa+".kind", CodeRequired, "Ref attribute %q needs the kind of record it refers to.", ad.Name)
		case !ok:
			ps.add(pa+".kind", CodeUnknownKind, "Ref attribute %q refers to kind %q, which the schema does not define.", ad.Name, ad.Kind)
		}
	} else if ad.Kind != "" {
		ps.add(pa+".kind", CodeNotAllowed, "Only ref attributes take a kind; remove it from %q or make it a ref.", ad.Name)
	}

	if t.Valid() {
		if ad.Search && t != TypeText && t != TypeEnum {
			ps.add(pa+".search", CodeNotAllowed, "Only text and enum attributes can be searched; %q is %s.", ad.Name, t)
		}
		if ad.Unique && (t == TypeJSON || t == TypeBoolean) {
			ps.add(pa+".unique", CodeNotAllowed, "A %s attribute cannot be unique; remove unique from %q.", t, ad.Name)
		}
	}
	return a
}

func compileRelation(ps *problems, p string, rd RelationDoc, kindAt, linkNames map[string]string) *Relation {
	valid := true
	claim := func(field, name, what string) {
		if !checkName(ps, field, name, what) {
			valid = false
			return
		}
		if first, dup := linkNames[name]; dup {
			ps.add(field, CodeDuplicate, "%q is already used at %s; relation names, inverse names and ref attribute names must all differ.", name, first)
			valid = false
			return
		}
		linkNames[name] = field
	}
	claim(p+".name", rd.Name, "relation")
	if rd.Inverse != "" {
		claim(p+".inverse", rd.Inverse, "inverse")
	}
	for _, end := range []struct{ field, kind string }{{p + ".from", rd.From}, {p + ".to", rd.To}} {
		if end.kind == "" {
			ps.add(end.field, CodeRequired, "Relation %q needs a kind here.", rd.Name)
			valid = false
		} else if _, ok := kindAt[end.kind]; !ok {
			ps.add(end.field, CodeUnknownKind, "Relation %q uses kind %q, which the schema does not define.", rd.Name, end.kind)
			valid = false
		}
	}
	card := rd.Cardinality
	switch card {
	case "":
		card = CardinalityMany
	case CardinalityOne, CardinalityMany:
	default:
		ps.add(p+".cardinality", CodeInvalidValue, "Cardinality %q is not allowed: use \"one\" or \"many\".", rd.Cardinality)
		valid = false
	}
	if !valid {
		return nil
	}
	return &Relation{
		Name: rd.Name, From: rd.From, To: rd.To, Cardinality: card,
		Inverse: rd.Inverse, Required: rd.Required,
	}
}
