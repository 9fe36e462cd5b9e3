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
