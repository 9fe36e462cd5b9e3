package commit_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
)

// seed puts the Records and Links the validation cases start from.
func seed(t *testing.T, b *bundle) {
	t.Helper()
	b.commit(t,
		put("Supplier", "S-1", `{"name": "Acme", "vat": "V1", "country": "DE"}`),
		put("Supplier", "S-2", `{"name": "Bolt", "vat": "V2"}`),
		put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1", "sku": 1}`),
		put("Part", "P-9", `{"name": "Spare"}`),
		put("Warehouse", "W-1", `{"name": "North"}`),
		lnk("supplied_by", "P-1", "S-1"),
		lnk("stocked_at", "P-1", "W-1"),
		put("Order", "O-1", `{"name": "Order one"}`),
		lnk("for_part", "O-1", "P-1"),
	)
}

func TestValidation(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	seed(t, b)
	type want struct {
		idx   int
		code  string
		field string
	}
	tests := []struct {
		name    string
		req     *commit.Request
		kind    lberr.Kind
		want    []want
		noIndex bool
	}{
		{"missing op", req(commit.Change{Key: "x"}), lberr.Invalid, []want{{0, "required", "changes[0].op"}}, false},
		{"unknown op", req(commit.Change{Op: "upsert", Key: "x"}), lberr.Invalid, []want{{0, "unknown_op", "changes[0].op"}}, false},
		{"values not an object", req(put("Supplier", "S-3", `[1]`)), lberr.Invalid, []want{{0, "invalid_json", "changes[0].values"}}, false},
		{"key with NUL", req(put("Supplier", "S\x00", `{"name": "x"}`)), lberr.Invalid, []want{{0, "invalid_key", "changes[0].key"}}, false},
		{"key invalid UTF-8", req(put("Supplier", "S\xff", `{"name": "x"}`)), lberr.Invalid, []want{{0, "invalid_key", "changes[0].key"}}, false},
		{"key too long", req(put("Supplier", strings.Repeat("k", 257), `{"name": "x"}`)), lberr.Invalid, []want{{0, "invalid_key", "changes[0].key"}}, false},
		{"key with newline", req(del("a\nb")), lberr.Invalid, []want{{0, "invalid_key", "changes[0].key"}}, false},
		{"patch without values", req(commit.Change{Op: "patch", Key: "S-1"}), lberr.Invalid, []want{{0, "required", "changes[0].values"}}, false},
		{"link without relation", req(commit.Change{Op: "link", From: "P-1", To: "S-2"}), lberr.Invalid, []want{{0, "required", "changes[0].relation"}}, false},
		{"unknown kind", req(put("Gadget", "G-1", `{"name": "x"}`)), lberr.Unprocessable, []want{{0, "unknown_kind", "changes[0].kind"}}, false},
		{"missing required", req(put("Supplier", "S-3", `{"vat": "V3"}`)), lberr.Unprocessable, []want{{0, "required", "changes[0].values.name"}}, false},
		{"wrong type", req(put("Part", "P-2", `{"name": "x", "weight_kg": "heavy"}`)), lberr.Unprocessable, []want{{0, "type", "changes[0].values.weight_kg"}}, false},
		{"enum", req(put("Supplier", "S-3", `{"name": "x", "tier": "bronze"}`)), lberr.Unprocessable, []want{{0, "enum", "changes[0].values.tier"}}, false},
		{"unknown attribute", req(put("Supplier", "S-3", `{"name": "x", "colour": "red"}`)), lberr.Unprocessable, []want{{0, "unknown_attribute", "changes[0].values.colour"}}, false},
		{"kind changed", req(put("Warehouse", "S-2", `{"name": "x"}`)), lberr.Unprocessable, []want{{0, "kind_changed", "changes[0].kind"}}, false},
		{"patch missing record", req(patch("S-404", `{"name": "x"}`)), lberr.Unprocessable, []want{{0, "not_found", "changes[0].key"}}, false},
		{"patch removes required", req(patch("S-1", `{"name": null}`)), lberr.Unprocessable, []want{{0, "required", "changes[0].values.name"}}, false},
		{"patch wrong type", req(patch("S-1", `{"vat": 7}`)), lberr.Unprocessable, []want{{0, "type", "changes[0].values.vat"}}, false},
		{"delete missing", req(del("S-404")), lberr.Unprocessable, []want{{0, "not_found", "changes[0].key"}}, false},
		{"unknown relation", req(lnk("made_by", "P-1", "S-2")), lberr.Unprocessable, []want{{0, "unknown_relation", "changes[0].relation"}}, false},
		{"already linked", req(lnk("supplied_by", "P-1", "S-1")), lberr.Unprocessable, []want{{0, "already_linked", "changes[0].to"}}, false},
		{"link wrong from kind", req(lnk("supplied_by", "S-1", "S-2")), lberr.Unprocessable, []want{{0, "relation_kind", "changes[0].from"}}, false},
		{"link to missing record", req(lnk("supplied_by", "P-1", "S-404")), lberr.Unprocessable, []want{{0, "unknown_record", "changes[0].to"}}, false},
		{"link wrong to kind", req(lnk("supplied_by", "P-9", "W-1")), lberr.Unprocessable, []want{{0, "relation_kind", "changes[0].to"}}, false},
		{"link to record deleted in the commit", req(del("S-2"), lnk("supplied_by", "P-9", "S-2")), lberr.Unprocessable,
			[]want{{0, "still_linked", "changes[0].key"}, {1, "unknown_record", "changes[1].to"}}, false},
		{"link to record put again as another kind", req(del("W-1"), put("Supplier", "W-1", `{"name": "x"}`), lnk("stocked_at", "P-9", "W-1")), lberr.Unprocessable,
			[]want{{1, "relation_kind", "changes[1].kind"}, {2, "relation_kind", "changes[2].to"}}, false},
		{"unlink not linked", req(unlnk("supplied_by", "P-1", "S-2")), lberr.Unprocessable, []want{{0, "not_linked", "changes[0].to"}}, false},
		{"cardinality one", req(put("Warehouse", "W-2", `{"name": "South"}`), lnk("stocked_at", "P-1", "W-2")), lberr.Unprocessable,
			[]want{{1, "cardinality", "changes[1].to"}}, false},
		{"ref to missing record", req(put("Part", "P-2", `{"name": "x", "maker": "S-404"}`)), lberr.Unprocessable, []want{{0, "unknown_ref", "changes[0].values.maker"}}, false},
		{"ref to wrong kind", req(put("Part", "P-2", `{"name": "x", "maker": "W-1"}`)), lberr.Unprocessable, []want{{0, "ref_kind", "changes[0].values.maker"}}, false},
		{"ref to record deleted in the commit", req(del("S-2"), patch("P-9", `{"maker": "S-2"}`)), lberr.Unprocessable,
			[]want{{0, "still_linked", "changes[0].key"}, {1, "unknown_ref", "changes[1].values.maker"}}, false},
		{"unique within the commit", req(put("Supplier", "S-3", `{"name": "x", "vat": "V9"}`), put("Supplier", "S-4", `{"name": "y", "vat": "V9"}`)), lberr.Unprocessable,
			[]want{{1, "unique", "changes[1].values.vat"}}, false},
		{"unique against the branch", req(put("Supplier", "S-3", `{"name": "x", "vat": "V1"}`)), lberr.Unprocessable, []want{{0, "unique", "changes[0].values.vat"}}, false},
		{"unique integer", req(put("Part", "P-2", `{"name": "x", "sku": 1}`)), lberr.Unprocessable, []want{{0, "unique", "changes[0].values.sku"}}, false},
		{"required relation on put", req(put("Order", "O-2", `{"name": "x"}`)), lberr.Unprocessable, []want{{0, "required_link", "changes[0]"}}, false},
		{"required relation on unlink", req(unlnk("for_part", "O-1", "P-1")), lberr.Unprocessable, []want{{0, "required_link", "changes[0]"}}, false},
		{"delete still linked in", req(del("S-1")), lberr.Unprocessable, []want{{0, "still_linked", "changes[0].key"}}, false},
		{"delete still linked out", req(del("O-1")), lberr.Unprocessable, []want{{0, "still_linked", "changes[0].key"}}, false},
		{"delete after patch still linked", req(patch("P-1", `{"maker": null}`), unlnk("supplied_by", "P-1", "S-1"), del("S-1"), del("P-1")), lberr.Unprocessable,
			[]want{{3, "still_linked", "changes[3].key"}}, false},
		{"several violations", req(
			put("Supplier", "S-3", `{"vat": "V1"}`),
			put("Part", "P-2", `{"name": "x", "maker": "S-404", "weight_kg": true}`),
			lnk("supplied_by", "P-1", "S-1"),
			del("nothing"),
		), lberr.Unprocessable, []want{
			{0, "required", "changes[0].values.name"},
			{1, "type", "changes[1].values.weight_kg"},
			{2, "already_linked", "changes[2].to"},
			{3, "not_found", "changes[3].key"},
		}, false},
		{"malformed and invalid together", req(put("Supplier", "S-3", `{"name": 1}`), commit.Change{Op: "frob"}), lberr.Invalid,
			[]want{{1, "unknown_op", "changes[1].op"}}, false},
		{"no changes", req(), lberr.Invalid, []want{{-1, "required", "changes"}}, true},
		{"no message", &commit.Request{Author: "a", Changes: []commit.Change{del("S-1")}}, lberr.Invalid, []want{{-1, "required", "message"}}, true},
		{"message with NUL", &commit.Request{Message: "a\x00", Author: "a", Changes: []commit.Change{del("S-1")}}, lberr.Invalid, []want{{-1, "invalid_text", "message"}}, true},
		{"author too long", &commit.Request{Message: "m", Author: strings.Repeat("a", 10<<10+1), Changes: []commit.Change{del("S-1")}}, lberr.Invalid, []want{{-1, "too_long", "author"}}, true},
		{"provenance not an object", &commit.Request{Message: "m", Author: "a", Provenance: []byte(`"x"`), Changes: []commit.Change{del("S-1")}}, lberr.Invalid,
			[]want{{-1, "invalid_json", "provenance"}}, true},
	}
	before := b.counts(t)
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			inv := b.invalid(t, tc.req)
			require.Equal(t, tc.kind, inv.Kind, "%+v", inv.Problems)
			got := make([]want, 0, len(inv.Problems))
			for _, p := range inv.Problems {
				idx := -1
				if p.Index != nil {
					idx = *p.Index
				}
				require.NotEmpty(t, p.Message)
				got = append(got, want{idx, p.Code, p.Field})
			}
			require.Equal(t, tc.want, got, "%+v", inv.Problems)
			require.Equal(t, before, b.counts(t), "a refused commit writes nothing")
		})
	}
}

func TestMaxChanges(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{MaxChanges: 2})
	inv := b.invalid(t, req(del("a"), del("b"), del("c")))
	require.Equal(t, lberr.Invalid, inv.Kind)
	require.Equal(t, "too_many", inv.Problems[0].Code)
}

func TestHostileInput(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	hostile := []string{`'; DROP TABLE mat_records; --`, `\`, `\\'`, `%`, `%s%d`, `"quoted"`, `$1`, "ünïcødé ✓"}
	var changes []commit.Change
	for i, h := range hostile {
		changes = append(changes, put("Supplier", h, `{"name": `+jsonString(h)+`, "vat": `+jsonString(h+"v")+`, "country": `+jsonString(h)+`}`))
		_ = i
	}
	b.commit(t, changes...)
	for _, h := range hostile {
		r := b.record(t, h)
		require.NotNil(t, r, h)
		require.Equal(t, h, r.Title)
	}
	// Uniqueness of hostile values is checked like any other.
	inv := b.invalid(t, req(put("Supplier", "dup", `{"name": "x", "vat": `+jsonString(`\\'v`)+`}`)))
	require.Equal(t, "unique", inv.Problems[0].Code)

	cases := []*commit.Request{
		req(put("Supplier", "x", `{"name": "a\u0000b"}`)),
		req(put("Supplier", strings.Repeat("é", 200), `{"name": "x"}`)),
		req(put(strings.Repeat("K", 100000), "x", `{"name": "x"}`)),
		req(put("Supplier'--", "x", `{"name": "x"}`)),
		req(lnk("supplied_by\x00", "a", "b")),
		req(lnk("supplied_by", "a\xff\xfe", "b")),
		req(put("Supplier", "x", `{"name": "x", "vat": "`+strings.Repeat("v", 2<<20)+`"}`)),
		req(put("Part", "x", `{"name": "x", "maker": "a\u0000"}`)),
		req(put("Part", "x", `{"name": "x", "maker": "`+strings.Repeat("m", 300)+`"}`)),
		{Message: "m", Author: "a", Provenance: []byte(`{"q": "a\u0000"}`), Changes: []commit.Change{del("x")}},
		req(put("Supplier", "x", `{"name": "x", "vat": "v"} trailing`)),
	}
	before := b.counts(t)
	for i, r := range cases {
		inv := b.invalid(t, r)
		require.Contains(t, []lberr.Kind{lberr.Invalid, lberr.Unprocessable}, inv.Kind, "case %d", i)
		for _, p := range inv.Problems {
			require.LessOrEqual(t, len(p.Message), 2000, "case %d", i)
		}
	}
	require.Equal(t, before, b.counts(t))
}

func jsonString(s string) string {
	var sb strings.Builder
	sb.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			sb.WriteString(`\"`)
		case '\\':
			sb.WriteString(`\\`)
		default:
			sb.WriteRune(r)
		}
	}
	sb.WriteByte('"')
	return sb.String()
}
