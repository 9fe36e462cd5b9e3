package commit

import (
	"bytes"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestDecodeObject: stored objects decode, null and empty input as an
// empty object, a non-object as an error.
func TestDecodeObject(t *testing.T) {
	for _, in := range []string{`{"name": "a", "n": 1}`, `null`, ``, `{"a": "\u00e9"}`} {
		m, err := decodeObject([]byte(in))
		require.NoError(t, err, in)
		require.NotNil(t, m, in)
		if in == `null` || in == `` {
			require.Empty(t, m)
		}
	}
	_, err := decodeObject([]byte(`[1]`))
	require.Error(t, err)
}

// TestPlainCanonical: a change list plainCanonical lets through is what
// decoding it and encoding it again (numbers as jsonb writes them) gives,
// so RevisionHash may take it as it is.
func TestPlainCanonical(t *testing.T) {
	odd := "q\"u\\o\nte \x01 \xff \u2028 \ufffd é"
	cases := []struct {
		v     any
		plain bool
	}{
		{[]any{map[string]any{"op": "put", "key": "P-1", "kind": "Part", "object": "ab"}}, true},
		{[]any{map[string]any{"op": "link", "from": odd, "relation": "r", "to": "x", "object": "ab"}}, false},
		{[]any{map[string]any{"op": "put", "key": "a\x01\u2028\"", "kind": "K", "object": "ab"}}, true},
		{[]any{map[string]any{"op": "put", "key": "a", "kind": "K", "object": "ab", "provenance": map[string]any{"n": json.Number("1.50"), "e": json.Number("1e2")}}}, false},
		{[]any{map[string]any{"op": "put", "key": "a", "kind": "K", "object": "ab", "provenance": map[string]any{"ok": true, "none": nil, "s": "x"}}}, true},
		{[]any{}, true},
	}
	for _, tc := range cases {
		b, err := CanonicalJSON(tc.v)
		require.NoError(t, err)
		require.Equal(t, tc.plain, plainCanonical(b), "%s", b)
		if plainCanonical(b) {
			d, err := decodeJSON(b)
			require.NoError(t, err)
			again, err := CanonicalJSON(jsonbNumbers(d))
			require.NoError(t, err)
			require.Equal(t, string(b), string(again))
		}
	}
	for _, in := range []string{`[1]`, `{"a":-1}`, `[ ]`, `["\ufffd"]`, `["\u0041"]`, `["unterminated`, `["x\`} {
		require.False(t, plainCanonical([]byte(in)), in)
	}
}

// TestChangeEncodingIsCanonical: the objects and change-list entries the
// pipeline writes directly are the canonical JSON of the maps they stand
// for, byte for byte (their hashes name the same content as before).
func TestChangeEncodingIsCanonical(t *testing.T) {
	odd := "q\"u\\o\nte \x01 \xff \u2028 \ufffd é"
	prov := json.RawMessage(`{"b": 1.50, "a": ["x", "` + "\\ufffd" + `"]}`)
	values := map[string]any{"name": odd, "weight_kg": json.Number("1.5"), "tags": []any{"a", odd}}
	vb, err := CanonicalJSON(values)
	require.NoError(t, err)
	for _, key := range []string{"P-1", odd} {
		var buf bytes.Buffer
		recordObject(&buf, key, odd, vb)
		want, err := CanonicalJSON(map[string]any{"kind": odd, "key": key, "values": values})
		require.NoError(t, err)
		require.Equal(t, string(want), buf.String())

		buf.Reset()
		recordObject(&buf, key, "Part", nil)
		want, err = CanonicalJSON(map[string]any{"kind": "Part", "key": key, "values": nil})
		require.NoError(t, err)
		require.Equal(t, string(want), buf.String())

		buf.Reset()
		linkObject(&buf, key, odd, "S-1")
		want, err = CanonicalJSON(map[string]any{"relation": odd, "from": key, "to": "S-1"})
		require.NoError(t, err)
		require.Equal(t, string(want), buf.String())
	}
	for _, c := range []*change{
		{op: opPut, key: odd}, {op: opPatch, key: "k", prov: prov}, {op: opDelete, key: "k"},
		{op: opLink, from: odd, relation: "supplied_by", to: "S-1", prov: prov}, {op: opUnlink, from: "a", relation: odd, to: odd},
	} {
		entry := map[string]any{"op": c.op, "object": "00ff"}
		if c.op == opLink || c.op == opUnlink {
			entry["relation"], entry["from"], entry["to"] = c.relation, c.from, c.to
		} else {
			entry["kind"], entry["key"] = "Part", c.key
		}
		if c.prov != nil {
			entry["provenance"] = c.prov
		}
		want, err := CanonicalJSON(entry)
		require.NoError(t, err)
		var buf bytes.Buffer
		require.NoError(t, appendChange(&buf, c, "Part", "00ff"))
		require.Equal(t, string(want), buf.String())
	}
}

// partValues and partLineage are a Part's stored values and lineage as
// jsonb writes them (the 1M seed).
const (
	partValues  = `{"name": "Copper batch valve", "maker": "S-1074", "category": "fasteners", "weight_kg": 2.243}`
	partLineage = `{"name": 21, "maker": 21, "category": 21, "weight_kg": 21}`
)

// flatCases are inputs decodeFlatObject must decode as encoding/json does,
// or leave to it.
var flatCases = []string{
	partValues, partLineage, `{}`, ` { } `, `{"a":1}`, "{\"a\" :\t-0.5e+10 ,\r\n\"b\": true}",
	`{"a": false, "b": null, "c": "", "a": "again"}`, `{"é": "ü ✓ 😀"}`, `{"n": -0, "m": 0.0, "e": 1E5, "f": 12e-3}`,
	// left to encoding/json (nested, escapes, control characters, bad
	// UTF-8, malformed numbers or literals, other shapes, trailing data)
	`{"a": {"b": 1}}`, `{"a": [1, 2]}`, `{"a": "x\"y"}`, `{"a\u00e9": 1}`, "{\"a\": \"tab\there\"}", "{\"a\": \"\xff\"}",
	`{"a": 01}`, `{"a": 1.}`, `{"a": .5}`, `{"a": -}`, `{"a": 1e}`, `{"a": +1}`, `{"a": tru}`, `{"a": truex}`, `{"a": nul}`,
	`{"a" 1}`, `{"a": 1,}`, `{"a": 1`, `{"a"`, `{`, `{,}`, `[1]`, `"s"`, `1`, `null`, ``, `   `, `{"a": 1} {"b": 2}`, `{"a": 1}x`,
}

// TestDecodeFlatObject: what decodeFlatObject decodes is what
// encoding/json decodes; what it refuses encoding/json decodes through
// decodeObject as before.
func TestDecodeFlatObject(t *testing.T) {
	accepted := 0
	for _, in := range flatCases {
		want, wantErr := decodeObjectJSON([]byte(in))
		got, ok := decodeFlatObject([]byte(in))
		if ok {
			accepted++
			require.NoError(t, wantErr, in)
			require.Equal(t, want, got, in)
		}
		all, err := decodeObject([]byte(in))
		require.Equal(t, wantErr != nil, err != nil, in)
		require.Equal(t, want, all, in)
	}
	require.Equal(t, 9, accepted, "the flat inputs take the fast path")
}

// FuzzDecodeFlatObject: for any input, decodeFlatObject either refuses it
// or gives what encoding/json gives.
func FuzzDecodeFlatObject(f *testing.F) {
	for _, in := range flatCases {
		f.Add([]byte(in))
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		got, ok := decodeFlatObject(in)
		if !ok {
			return
		}
		want, err := decodeObjectJSON(in)
		require.NoError(t, err)
		require.Equal(t, want, got)
	})
}

// BenchmarkDecodeStoredRecord: a Part's values and lineage decoded as the
// Records read decodes them, through encoding/json (before) and the flat
// path (after).
func BenchmarkDecodeStoredRecord(b *testing.B) {
	vals, lin := []byte(partValues), []byte(partLineage)
	for _, bc := range []struct {
		name   string
		decode func([]byte) (map[string]any, error)
	}{
		{"encoding-json", decodeObjectJSON},
		{"flat", decodeObject},
	} {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.decode(vals); err != nil {
					b.Fatal(err)
				}
				if _, err := bc.decode(lin); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
