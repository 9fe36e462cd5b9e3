package schema

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

const allTypesJSON = `{"kinds": [{"name": "Thing", "title": "name", "attributes": [
	{"name": "name", "type": "text", "required": true, "search": true},
	{"name": "note", "type": "text", "search": true},
	{"name": "n", "type": "number"},
	{"name": "i", "type": "integer"},
	{"name": "b", "type": "boolean"},
	{"name": "d", "type": "date"},
	{"name": "ts", "type": "timestamp"},
	{"name": "e", "type": "enum", "values": ["gold", "silver"], "search": true},
	{"name": "u", "type": "ulid"},
	{"name": "j", "type": "json"},
	{"name": "r", "type": "ref", "kind": "Thing"}]}]}`

// decode decodes JSON with UseNumber, as the callers do.
func decode(t *testing.T, s string) map[string]any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var m map[string]any
	require.NoError(t, dec.Decode(&m))
	return m
}

func thingKind(t *testing.T) *Kind {
	t.Helper()
	k, ok := mustCompile(t, allTypesJSON).Kind("Thing")
	require.True(t, ok)
	return k
}

func nest(depth int) string {
	return strings.Repeat("[", depth) + strings.Repeat("]", depth)
}

func TestValidateValuesTypes(t *testing.T) {
	k := thingKind(t)
	tests := []struct {
		attr string
		in   string // JSON value
		want any    // normalized value, when code is ""
		code string
	}{
		{"note", `"hello"`, "hello", ""},
		{"note", `""`, "", ""},
		{"note", `"a\u0000b"`, nil, CodeInvalidText},
		{"note", `1`, nil, CodeType},
		{"note", `"` + strings.Repeat("x", MaxTextBytes+1) + `"`, nil, CodeTooLong},
		{"n", `1.50`, json.Number("1.5"), ""},
		{"n", `1e3`, json.Number("1000"), ""},
		{"n", `-0.000001`, json.Number("-1e-06"), ""},
		{"n", `1e400`, nil, CodeType},
		{"n", `"1"`, nil, CodeType},
		{"i", `42`, json.Number("42"), ""},
		{"i", `-9223372036854775808`, json.Number("-9223372036854775808"), ""},
		{"i", `9223372036854775808`, nil, CodeType},
		{"i", `1.5`, nil, CodeType},
		{"i", `1.0`, nil, CodeType},
		{"i", `1e3`, nil, CodeType},
		{"i", `true`, nil, CodeType},
		{"b", `true`, true, ""},
		{"b", `false`, false, ""},
		{"b", `"true"`, nil, CodeType},
		{"d", `"2024-02-29"`, "2024-02-29", ""},
		{"d", `"2023-02-29"`, nil, CodeType},
		{"d", `"2024-2-1"`, nil, CodeType},
		{"d", `"2024-02-01T00:00:00Z"`, nil, CodeType},
		{"ts", `"2024-05-01T12:30:00Z"`, "2024-05-01T12:30:00Z", ""},
		{"ts", `"2024-05-01T14:30:00.120000+02:00"`, "2024-05-01T12:30:00.12Z", ""},
		{"ts", `"2024-05-01T12:30:00.000Z"`, "2024-05-01T12:30:00Z", ""},
		{"ts", `"2024-05-01 12:30:00Z"`, nil, CodeType},
		{"ts", `"2024-05-01"`, nil, CodeType},
		{"ts", `"0000-01-01T00:00:00+01:00"`, nil, CodeType},
		{"e", `"gold"`, "gold", ""},
		{"e", `"bronze"`, nil, CodeEnum},
		{"e", `"Gold"`, nil, CodeEnum},
		{"e", `1`, nil, CodeType},
		{"u", `"01arz3ndektsv4rrffq69g5fav"`, "01ARZ3NDEKTSV4RRFFQ69G5FAV", ""},
		{"u", `"01ARZ3NDEKTSV4RRFFQ69G5FA"`, nil, CodeType},
		{"u", `"01ARZ3NDEKTSV4RRFFQ69G5FAU"`, nil, CodeType},
		{"u", `"81ARZ3NDEKTSV4RRFFQ69G5FAV"`, nil, CodeType},
		{"j", `{"a": [1, "x", null, true]}`, map[string]any{"a": []any{json.Number("1"), "x", nil, true}}, ""},
		{"j", `"just a string"`, "just a string", ""},
		{"j", nest(MaxJSONDepth), nil, ""},
		{"j", nest(MaxJSONDepth + 1), nil, CodeTooDeep},
		{"j", `{"a\u0000": 1}`, nil, CodeInvalidText},
		{"j", `["\u0000"]`, nil, CodeInvalidText},
		{"r", `"supplier-1"`, "supplier-1", ""},
		{"r", `""`, nil, CodeInvalidKey},
		{"r", `"` + strings.Repeat("k", MaxRefBytes+1) + `"`, nil, CodeInvalidKey},
		{"r", `"` + strings.Repeat("k", MaxRefBytes) + `"`, strings.Repeat("k", MaxRefBytes), ""},
		{"r", `"a\u0000"`, nil, CodeInvalidKey},
		{"r", `7`, nil, CodeType},
	}
	for _, tt := range tests {
		name := tt.attr + "=" + tt.in
		if len(name) > 60 {
			name = name[:60]
		}
		t.Run(name, func(t *testing.T) {
			values := decode(t, `{"name": "x", "`+tt.attr+`": `+tt.in+`}`)
			got, ps := k.ValidateValues(values)
			if tt.code != "" {
				require.Nil(t, got)
				require.Equal(t, []string{"values." + tt.attr + ":" + tt.code}, codes(ps))
				return
			}
			require.Empty(t, ps)
			if tt.want != nil {
				require.Equal(t, tt.want, got[tt.attr])
			}
			// Normalized values re-encode to the same JSON when re-normalized.
			b, err := json.Marshal(got)
			require.NoError(t, err)
			again, ps := k.ValidateValues(decode(t, string(b)))
			require.Empty(t, ps)
			require.Equal(t, got, again)
		})
	}
}

func TestValidateValuesGoTypes(t *testing.T) {
	k := thingKind(t)
	got, ps := k.ValidateValues(map[string]any{"name": "x", "n": 2.5, "i": 7, "j": []any{1.5}})
	require.Empty(t, ps)
	require.Equal(t, json.Number("2.5"), got["n"])
	require.Equal(t, json.Number("7"), got["i"])

	got, ps = k.ValidateValues(map[string]any{"name": "x", "i": 3.0})
	require.Empty(t, ps)
	require.Equal(t, json.Number("3"), got["i"])

	_, ps = k.ValidateValues(map[string]any{"name": "x", "i": 3.5, "n": json.Number("Inf"), "j": struct{}{}})
	require.Equal(t, []string{"values.i:type", "values.j:type", "values.n:type"}, codes(ps))
}

func TestValidateValuesSet(t *testing.T) {
	k := thingKind(t)
	tests := []struct {
		name string
		in   string
		want map[string]any
		errs []string
	}{
		{"minimal", `{"name": "x"}`, map[string]any{"name": "x"}, nil},
		{"nulls dropped", `{"name": "x", "note": null}`, map[string]any{"name": "x"}, nil},
		{"empty", `{}`, nil, []string{"values.name:required"}},
		{"required null", `{"name": null}`, nil, []string{"values.name:required"}},
		{"several problems", `{"zz": 1, "i": "x", "e": "bronze", "aa": true}`, nil,
			[]string{"values.aa:unknown_attribute", "values.e:enum", "values.i:type", "values.name:required", "values.zz:unknown_attribute"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ps := k.ValidateValues(decode(t, tt.in))
			require.Equal(t, tt.errs, nilIfEmpty(codes(ps)))
			require.Equal(t, tt.want, got)
		})
	}
	got, ps := k.ValidateValues(nil)
	require.Nil(t, got)
	require.Equal(t, []string{"values.name:required"}, codes(ps))
}

func nilIfEmpty(s []string) []string {
	if len(s) == 0 {
		return nil
	}
	return s
}

func TestValidatePatch(t *testing.T) {
	k := thingKind(t)
	tests := []struct {
		name string
		in   string
		want map[string]any
		errs []string
	}{
		{"empty", `{}`, map[string]any{}, nil},
		{"required not checked", `{"note": "n"}`, map[string]any{"note": "n"}, nil},
		{"null kept for removal", `{"note": null, "name": null}`, map[string]any{"note": nil, "name": nil}, nil},
		{"normalized", `{"ts": "2024-05-01T12:30:00+00:00", "i": -0}`, map[string]any{"ts": "2024-05-01T12:30:00Z", "i": json.Number("0")}, nil},
		{"bad", `{"x": null, "b": 1}`, nil, []string{"values.b:type", "values.x:unknown_attribute"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ps := k.ValidatePatch(decode(t, tt.in))
			require.Equal(t, tt.errs, nilIfEmpty(codes(ps)))
			require.Equal(t, tt.want, got)
		})
	}
}

func TestMissingRequired(t *testing.T) {
	s := mustCompile(t, `{"kinds": [{"name": "A", "title": "a", "attributes": [
		{"name": "a", "type": "text", "required": true},
		{"name": "b", "type": "integer", "required": true},
		{"name": "c", "type": "text"}]}]}`)
	k := s.Kinds["A"]
	tests := []struct {
		name string
		in   map[string]any
		want []string
	}{
		{"all present", map[string]any{"a": "x", "b": json.Number("1")}, nil},
		{"one missing", map[string]any{"a": "x", "c": "y"}, []string{"values.b:required"}},
		{"null counts as missing", map[string]any{"a": nil, "b": json.Number("1")}, []string{"values.a:required"}},
		{"all missing", nil, []string{"values.a:required", "values.b:required"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, nilIfEmpty(codes(k.MissingRequired(tt.in))))
		})
	}
}

func TestTitleAndSearchText(t *testing.T) {
	s := mustCompile(t, sampleJSON+``)
	sup := s.Kinds["Supplier"]
	num := mustCompile(t, `{"kinds": [{"name": "N", "title": "n", "attributes": [
		{"name": "n", "type": "integer"}, {"name": "s", "type": "text", "search": true}]}]}`).Kinds["N"]
	tests := []struct {
		name          string
		k             *Kind
		values        map[string]any
		title, search string
	}{
		{"text title", sup, map[string]any{"name": "Acme", "tier": "gold", "vat": "X1"}, "Acme", "Acme"},
		{"absent", sup, map[string]any{}, "", ""},
		{"number title", num, map[string]any{"n": json.Number("12"), "s": "hello"}, "12", "12 hello"},
		{"float title", num, map[string]any{"n": 1.5}, "1.5", "1.5"},
		{"search without title", num, map[string]any{"s": "only"}, "", "only"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.title, tt.k.TitleOf(tt.values))
			require.Equal(t, tt.search, tt.k.SearchText(tt.values))
		})
	}

	k := thingKind(t)
	require.Equal(t, "Widget blue gold", k.SearchText(map[string]any{"name": "Widget", "note": "blue", "e": "gold", "r": "ignored"}))
}
