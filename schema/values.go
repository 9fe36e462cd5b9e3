package schema

import (
	"encoding/json"
	"math"
	"sort"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/oklog/ulid/v2"
)

// ValidateValues checks a full set of values for a Record of this Kind (op
// "put"): unknown attributes, types, enum membership, and required Attributes
// present and non-null. It returns the normalized values, or nil and every
// Problem found (Field "values.<attr>", sorted by Field). values come from
// encoding/json decoding with UseNumber; float64 and Go integers are accepted
// too. Null values are dropped. Normalized forms:
//   - number: json.Number, strconv.FormatFloat(f, 'g', -1, 64);
//   - integer: json.Number, a plain decimal;
//   - date: "YYYY-MM-DD";
//   - timestamp: RFC 3339 in UTC with trailing zero fractions trimmed;
//   - ulid: upper case;
//   - text, enum, ref, boolean, json: unchanged.
func (k *Kind) ValidateValues(values map[string]any) (map[string]any, []Problem) {
	out, ps := k.validate(values, false)
	ps = append(ps, k.MissingRequired(values)...)
	if len(ps) > 0 {
		sortProblems(ps)
		return nil, ps
	}
	return out, nil
}

// ValidatePatch checks a partial set of values (op "patch"): like
// ValidateValues, but required Attributes are not checked and a null value
// means "remove this attribute"; it is kept in the result as a nil entry.
// Check the merged values with MissingRequired.
func (k *Kind) ValidatePatch(values map[string]any) (map[string]any, []Problem) {
	out, ps := k.validate(values, true)
	if len(ps) > 0 {
		sortProblems(ps)
		return nil, ps
	}
	return out, nil
}

// MissingRequired lists Problems for required Attributes absent from, or null
// in, a full (merged) value set, in attribute order.
func (k *Kind) MissingRequired(values map[string]any) []Problem {
	var ps problems
	for _, a := range k.Attributes {
		if !a.Required {
			continue
		}
		if v, ok := values[a.Name]; !ok || v == nil {
			ps.add("values."+a.Name, CodeRequired, "A %s record needs a value for %q.", k.Name, a.Name)
		}
	}
	return ps
}

func (k *Kind) validate(values map[string]any, patch bool) (map[string]any, []Problem) {
	var ps problems
	out := make(map[string]any, len(values))
	keys := make([]string, 0, len(values))
	for key := range values {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		field := "values." + key
		a, ok := k.Attr(key)
		if !ok {
			ps.add(field, CodeUnknownAttribute, "Kind %q has no attribute %q.", k.Name, key)
			continue
		}
		v := values[key]
		if v == nil {
			if patch {
				out[key] = nil
			}
			continue
		}
		nv, code, msg := a.normalize(v)
		if code != "" {
			ps = append(ps, Problem{Field: field, Code: code, Message: msg})
			continue
		}
		out[key] = nv
	}
	return out, ps
}

// normalize checks one non-nil value against the Attribute and returns its
// normalized form, or a Problem code and message.
func (a *Attribute) normalize(v any) (any, string, string) {
	bad := func() (any, string, string) {
		return nil, CodeType, "Attribute " + strconv.Quote(a.Name) + " takes " + describeType(a.Type) + ", not " + jsonTypeName(v) + "."
	}
	switch a.Type {
	case TypeText:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		limit := MaxTextBytes
		if a.Indexed || a.Unique {
			limit = MaxIndexedTextBytes
		}
		if code, msg := checkText(a.Name, s, limit); code != "" {
			if code == CodeTooLong && limit == MaxIndexedTextBytes {
				msg += " (it is indexed or unique: its index entry must fit a page)"
			}
			return nil, code, msg
		}
		return s, "", ""
	case TypeNumber:
		f, ok := toFloat(v)
		if !ok {
			return bad()
		}
		return json.Number(strconv.FormatFloat(f, 'g', -1, 64)), "", ""
	case TypeInteger:
		n, ok := toInt(v)
		if !ok {
			return bad()
		}
		return json.Number(strconv.FormatInt(n, 10)), "", ""
	case TypeBoolean:
		b, ok := v.(bool)
		if !ok {
			return bad()
		}
		return b, "", ""
	case TypeDate:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		t, err := time.Parse(time.DateOnly, s)
		if err != nil {
			return bad()
		}
		return t.Format(time.DateOnly), "", ""
	case TypeTimestamp:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		t, err := time.Parse(time.RFC3339Nano, s)
		if err != nil {
			return bad()
		}
		t = t.UTC()
		if t.Year() < 0 || t.Year() > 9999 {
			return bad()
		}
		return t.Format(time.RFC3339Nano), "", ""
	case TypeEnum:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		for _, e := range a.Values {
			if e == s {
				return s, "", ""
			}
		}
		return nil, CodeEnum, "Attribute " + strconv.Quote(a.Name) + " must be one of " + strings.Join(quoteAll(a.Values), ", ") + "; " + strconv.Quote(s) + " is not."
	case TypeULID:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		id, err := ulid.ParseStrict(s)
		if err != nil {
			return bad()
		}
		return id.String(), "", ""
	case TypeJSON:
		if code, msg := checkJSON(a.Name, v, 0); code != "" {
			return nil, code, msg
		}
		return v, "", ""
	case TypeRef:
		s, ok := v.(string)
		if !ok {
			return bad()
		}
		if s == "" || len(s) > MaxRefBytes || strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
			return nil, CodeInvalidKey, "Attribute " + strconv.Quote(a.Name) + " must hold a record key: non-empty text of at most 256 bytes without NUL characters."
		}
		return s, "", ""
	}
	return nil, CodeType, "Attribute " + strconv.Quote(a.Name) + " has unknown type " + strconv.Quote(string(a.Type)) + "."
}

// checkText rejects strings that PostgreSQL text and jsonb cannot hold, and
// strings longer than limit bytes.
func checkText(name, s string, limit int) (string, string) {
	if strings.ContainsRune(s, 0) || !utf8.ValidString(s) {
		return CodeInvalidText, "Attribute " + strconv.Quote(name) + " must be valid UTF-8 text without NUL characters."
	}
	if len(s) > limit {
		return CodeTooLong, "Attribute " + strconv.Quote(name) + " may hold at most " + strconv.Itoa(limit) + " bytes of text."
	}
	return "", ""
}

// checkJSON checks that v is a JSON value nesting at most MaxJSONDepth deep
// whose strings and keys contain no NUL (PostgreSQL jsonb rejects \u0000).
func checkJSON(name string, v any, depth int) (string, string) {
	switch x := v.(type) {
	case nil, bool:
		return "", ""
	case string:
		return checkText(name, x, math.MaxInt)
	case json.Number:
		if !isJSONNumber(string(x)) {
			return CodeType, "Attribute " + strconv.Quote(name) + " holds an invalid JSON number."
		}
		return "", ""
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return CodeType, "Attribute " + strconv.Quote(name) + " holds a number JSON cannot represent."
		}
		return "", ""
	case []any:
		if depth+1 > MaxJSONDepth {
			return tooDeep(name)
		}
		for _, e := range x {
			if code, msg := checkJSON(name, e, depth+1); code != "" {
				return code, msg
			}
		}
		return "", ""
	case map[string]any:
		if depth+1 > MaxJSONDepth {
			return tooDeep(name)
		}
		for key, e := range x {
			if code, msg := checkText(name, key, math.MaxInt); code != "" {
				return code, msg
			}
			if code, msg := checkJSON(name, e, depth+1); code != "" {
				return code, msg
			}
		}
		return "", ""
	}
	return CodeType, "Attribute " + strconv.Quote(name) + " holds a " + jsonTypeName(v) + ", which is not a JSON value."
}

func tooDeep(name string) (string, string) {
	return CodeTooDeep, "Attribute " + strconv.Quote(name) + " nests arrays and objects more than " + strconv.Itoa(MaxJSONDepth) + " deep."
}

// toFloat converts a JSON number to a finite float64.
func toFloat(v any) (float64, bool) {
	var f float64
	switch x := v.(type) {
	case json.Number:
		if !isJSONNumber(string(x)) {
			return 0, false
		}
		var err error
		if f, err = strconv.ParseFloat(string(x), 64); err != nil {
			return 0, false
		}
	case float64:
		f = x
	case float32:
		f = float64(x)
	case int:
		f = float64(x)
	case int64:
		f = float64(x)
	case int32:
		f = float64(x)
	default:
		return 0, false
	}
	if math.IsInf(f, 0) || math.IsNaN(f) {
		return 0, false
	}
	return f, true
}

// toInt converts a JSON number written as an integer within int64 range.
// Fractions and exponents are rejected; a float64 must be integral.
func toInt(v any) (int64, bool) {
	switch x := v.(type) {
	case json.Number:
		if !isJSONNumber(string(x)) {
			return 0, false
		}
		n, err := strconv.ParseInt(string(x), 10, 64)
		return n, err == nil
	case float64:
		if x != math.Trunc(x) || x < -(1<<63) || x >= 1<<63 {
			return 0, false
		}
		return int64(x), true
	case int:
		return int64(x), true
	case int64:
		return x, true
	case int32:
		return int64(x), true
	}
	return 0, false
}

// isJSONNumber reports whether s is a number in JSON syntax.
func isJSONNumber(s string) bool {
	if s == "" {
		return false
	}
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	return (s[0] == '-' || isDigit(s[0])) && isDigit(s[len(s)-1]) && json.Valid([]byte(s))
}

func describeType(t Type) string {
	switch t {
	case TypeText:
		return "text (a JSON string)"
	case TypeNumber:
		return "a finite number"
	case TypeInteger:
		return "a whole number between -9223372036854775808 and 9223372036854775807, written without fraction or exponent"
	case TypeBoolean:
		return "true or false"
	case TypeDate:
		return "a date written YYYY-MM-DD"
	case TypeTimestamp:
		return "an RFC 3339 timestamp such as 2024-05-01T12:30:00Z"
	case TypeEnum:
		return "one of its enum values as a string"
	case TypeULID:
		return "a ULID (26 Crockford base-32 characters)"
	case TypeRef:
		return "a record key as a string"
	}
	return string(t)
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = strconv.Quote(s)
	}
	return out
}

// TitleOf returns the title text of a value set: the value of the title
// Attribute formatted as text, or "" if absent.
func (k *Kind) TitleOf(values map[string]any) string {
	return formatText(values[k.Title])
}

// SearchText returns the text to index for full-text search: the title and
// the value of every search Attribute other than the title, space separated,
// skipping absent values.
func (k *Kind) SearchText(values map[string]any) string {
	var parts []string
	if t := k.TitleOf(values); t != "" {
		parts = append(parts, t)
	}
	for _, a := range k.Attributes {
		if !a.Search || a.Name == k.Title {
			continue
		}
		if t := formatText(values[a.Name]); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, " ")
}

// formatText formats a scalar value as text; other values give "".
func formatText(v any) string {
	switch x := v.(type) {
	case string:
		return x
	case json.Number:
		return string(x)
	case float64:
		return strconv.FormatFloat(x, 'g', -1, 64)
	case int:
		return strconv.Itoa(x)
	case int64:
		return strconv.FormatInt(x, 10)
	case bool:
		return strconv.FormatBool(x)
	}
	return ""
}
