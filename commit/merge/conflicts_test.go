package merge_test

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/commit/merge"
)

// seed is the state of main before the branch forks.
var seed = []commit.Change{
	put("Supplier", "S-1", `{"name": "Acme", "country": "DE"}`),
	put("Supplier", "S-2", `{"name": "Beta", "country": "FR"}`),
	put("Part", "P-1", `{"name": "Bolt"}`),
	put("Part", "P-2", `{"name": "Nut"}`),
	put("Warehouse", "W-1", `{"name": "North"}`),
	put("Warehouse", "W-2", `{"name": "South"}`),
	put("Order", "O-1", `{"name": "Order one"}`),
	lnk("for_part", "O-1", "P-1"),
	lnk("sourced_from", "O-1", "S-1"),
	lnk("sourced_from", "O-1", "S-2"),
}

// Every conflict code: produced by changes on both sides, then resolved.
func TestEveryConflictCodeProducedAndResolved(t *testing.T) {
	t.Parallel()
	cases := []struct {
		name       string
		source     []commit.Change
		target     []commit.Change
		code       string
		attribute  string
		choice     string
		value      string
		check      func(t *testing.T, b *bundle)
		sourceMode string
	}{
		{name: "attribute", code: merge.CodeAttribute, attribute: "country",
			source: []commit.Change{patch("S-1", `{"country": "NL"}`)},
			target: []commit.Change{patch("S-1", `{"country": "SE"}`)},
			choice: "value", value: `"BE"`,
			check: func(t *testing.T, b *bundle) { require.Equal(t, "BE", b.values(t, "main", "S-1")["country"]) }},
		{name: "add_add", code: merge.CodeAddAdd,
			source: []commit.Change{put("Supplier", "S-9", `{"name": "Gamma"}`)},
			target: []commit.Change{put("Supplier", "S-9", `{"name": "Delta"}`)},
			choice: "target",
			check:  func(t *testing.T, b *bundle) { require.Equal(t, "Delta", b.values(t, "main", "S-9")["name"]) }},
		{name: "delete_update", code: merge.CodeDeleteUpdate,
			source: []commit.Change{del("P-2")},
			target: []commit.Change{patch("P-2", `{"weight_kg": 2}`)},
			choice: "source",
			check:  func(t *testing.T, b *bundle) { require.Nil(t, b.values(t, "main", "P-2")) }},
		{name: "update_delete", code: merge.CodeUpdateDelete,
			source: []commit.Change{patch("P-2", `{"weight_kg": 3}`)},
			target: []commit.Change{del("P-2")},
			choice: "source",
			check: func(t *testing.T, b *bundle) {
				require.Equal(t, map[string]any{"name": "Nut", "weight_kg": 3.0}, b.values(t, "main", "P-2"))
			}},
		{name: "link_cardinality", code: merge.CodeLinkCardinality,
			source: []commit.Change{lnk("stocked_at", "P-1", "W-1")},
			target: []commit.Change{lnk("stocked_at", "P-1", "W-2")},
			choice: "source",
			check: func(t *testing.T, b *bundle) {
				require.True(t, b.linked(t, "main", "P-1", "stocked_at", "W-1"))
				require.False(t, b.linked(t, "main", "P-1", "stocked_at", "W-2"))
			}},
		{name: "unique", code: merge.CodeUnique, attribute: "vat",
			source: []commit.Change{patch("S-1", `{"vat": "V-1"}`)},
			target: []commit.Change{patch("S-2", `{"vat": "V-1"}`)},
			choice: "value", value: `"V-2"`,
			check: func(t *testing.T, b *bundle) {
				require.Equal(t, "V-2", b.values(t, "main", "S-1")["vat"])
				require.Equal(t, "V-1", b.values(t, "main", "S-2")["vat"])
			}},
		{name: "required_link", code: merge.CodeRequiredLink,
			source: []commit.Change{unlnk("sourced_from", "O-1", "S-1")},
			target: []commit.Change{unlnk("sourced_from", "O-1", "S-2")},
			choice: "target",
			check: func(t *testing.T, b *bundle) {
				require.True(t, b.linked(t, "main", "O-1", "sourced_from", "S-1"))
				require.False(t, b.linked(t, "main", "O-1", "sourced_from", "S-2"))
			}},
		{name: "dangling_ref", code: merge.CodeDanglingRef, attribute: "maker",
			source: []commit.Change{put("Part", "P-5", `{"name": "Gear", "maker": "S-2"}`)},
			target: []commit.Change{unlnk("sourced_from", "O-1", "S-2"), del("S-2")},
			choice: "value", value: `"S-1"`,
			check: func(t *testing.T, b *bundle) { require.Equal(t, "S-1", b.values(t, "main", "P-5")["maker"]) }},
		{name: "linked_delete", code: merge.CodeLinkedDelete,
			source: []commit.Change{del("W-1")},
			target: []commit.Change{lnk("stocked_at", "P-2", "W-1")},
			choice: "target",
			check: func(t *testing.T, b *bundle) {
				require.NotNil(t, b.values(t, "main", "W-1"))
				require.True(t, b.linked(t, "main", "P-2", "stocked_at", "W-1"))
			}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			b.commit(t, "main", seed...)
			b.branch(t, "agent/a", "main", "overlay")
			b.commit(t, "agent/a", tc.source...)
			b.commit(t, "main", tc.target...)
			mainHead := b.head(t, "main")

			ins := b.inspect(t, "agent/a", "main")
			require.False(t, ins.Mergeable)
			_, err := b.merge(t, "agent/a", "main", nil, "")
			var ce *merge.ConflictsError
			require.Truef(t, errors.As(err, &ce), "want conflicts, got %v", err)
			require.Len(t, ce.Conflicts, 1, "%+v", ce.Conflicts)
			c := ce.Conflicts[0]
			require.Equal(t, tc.code, c.Code)
			require.Equal(t, tc.attribute, c.Attribute)
			require.NotEmpty(t, c.ID)
			require.NotEmpty(t, c.Fingerprint)
			require.Equal(t, mainHead, b.head(t, "main"), "a refused merge writes nothing")

			// The same conflict comes out of an inspection with the same id
			// and fingerprint.
			found := false
			for _, x := range ins.Conflicts {
				if x.ID == c.ID {
					found = true
					require.Equal(t, c.Fingerprint, x.Fingerprint)
				}
			}
			require.True(t, found, "inspection lists %s", c.ID)

			r := merge.Resolution{Choice: tc.choice, Fingerprint: c.Fingerprint}
			if tc.value != "" {
				r.Value = json.RawMessage(tc.value)
			}
			res, err := b.merge(t, "agent/a", "main", map[string]merge.Resolution{c.ID: r}, "")
			require.NoError(t, err)
			if tc.choice == "target" {
				// Keeping the target writes nothing: the merge only moves the base.
				require.True(t, res.UpToDate)
				require.Equal(t, b.head(t, "main"), res.Revision)
			} else {
				require.Len(t, res.Parents, 2)
			}
			tc.check(t, b)
			require.Empty(t, b.inspect(t, "agent/a", "main").Conflicts, "merged: nothing left to conflict")
		})
	}
}

func TestSameChangeAndLinkSets(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.commit(t, "main", seed...)
	b.branch(t, "agent/a", "main", "overlay")
	b.commit(t, "agent/a", patch("S-1", `{"country": "NL"}`), lnk("supplied_by", "P-1", "S-1"),
		put("Supplier", "S-7", `{"name": "Same"}`))
	b.commit(t, "main", patch("S-1", `{"country": "NL"}`), lnk("supplied_by", "P-1", "S-2"),
		put("Supplier", "S-7", `{"name": "Same"}`))
	ins := b.inspect(t, "agent/a", "main")
	require.Empty(t, ins.Conflicts)
	_, err := b.merge(t, "agent/a", "main", nil, "")
	require.NoError(t, err)
	require.True(t, b.linked(t, "main", "P-1", "supplied_by", "S-1"))
	require.True(t, b.linked(t, "main", "P-1", "supplied_by", "S-2"))
	// The converged Record is no conflict afterwards either.
	require.Empty(t, b.inspect(t, "agent/a", "main").Conflicts)
}

// The schema merges first: a schema conflict blocks the data until resolved.
func TestSchemaConflict(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.commit(t, "main", seed...)
	b.branch(t, "agent/c", "main", "copy")
	withAttr := func(attr string) string {
		return strings.Replace(supplySchema, `{"name": "country", "type": "text", "indexed": true}`,
			`{"name": "country", "type": "text", "indexed": true}, {"name": "`+attr+`", "type": "text"}`, 1)
	}
	_, err := b.p.PutSchema(b.ctx, b.domain, "agent/c", &commit.SchemaRequest{Document: json.RawMessage(withAttr("rating")), Author: "a", Message: "m"})
	require.NoError(t, err)
	b.commit(t, "agent/c", patch("S-1", `{"rating": "A"}`))
	_, err = b.p.PutSchema(b.ctx, b.domain, "main", &commit.SchemaRequest{Document: json.RawMessage(withAttr("email")), Author: "a", Message: "m"})
	require.NoError(t, err)

	_, err = b.merge(t, "agent/c", "main", nil, "")
	var ce *merge.ConflictsError
	require.Truef(t, errors.As(err, &ce), "want conflicts, got %v", err)
	require.Len(t, ce.Conflicts, 1)
	c := ce.Conflicts[0]
	require.Equal(t, merge.CodeSchema, c.Code)

	both := strings.Replace(supplySchema, `{"name": "country", "type": "text", "indexed": true}`,
		`{"name": "country", "type": "text", "indexed": true}, {"name": "email", "type": "text"}, {"name": "rating", "type": "text"}`, 1)
	_, err = b.merge(t, "agent/c", "main", map[string]merge.Resolution{c.ID: {Choice: "value", Value: json.RawMessage(both), Fingerprint: c.Fingerprint}}, "")
	require.NoError(t, err)
	require.Equal(t, "A", b.values(t, "main", "S-1")["rating"])
}
