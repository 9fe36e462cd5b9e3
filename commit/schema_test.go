package commit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/store/schema"
)

// edit returns the supply schema with one textual replacement.
func edit(t *testing.T, old, new string) string {
	t.Helper()
	require.Contains(t, supplySchema, old)
	return strings.Replace(supplySchema, old, new, 1)
}

func TestSchemaCompatibility(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	b.commit(t,
		put("Supplier", "S-1", `{"name": "Acme", "vat": "V1", "country": "DE", "tier": "gold"}`),
		put("Supplier", "S-2", `{"name": "Bolt", "vat": "V2", "country": "DE"}`),
		put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1", "weight_kg": 2, "sku": 7}`),
		put("Part", "P-2", `{"name": "Nut"}`),
		put("Warehouse", "W-1", `{"name": "North"}`),
		lnk("supplied_by", "P-1", "S-1"),
		lnk("supplied_by", "P-1", "S-2"),
		put("Order", "O-1", `{"name": "o"}`),
		lnk("for_part", "O-1", "P-1"),
	)
	refused := []struct {
		name string
		doc  string
		code string
	}{
		{"kind dropped", strings.Replace(edit(t, `{"name": "Warehouse", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true}]},`, ``), `{"name": "stocked_at", "from": "Part", "to": "Warehouse", "cardinality": "one"},`, ``, 1), schema.ReasonKindDropped},
		{"attribute dropped", edit(t, `{"name": "country", "type": "text", "indexed": true},`, ``), schema.ReasonAttributeDropped},
		{"attribute required", edit(t, `{"name": "weight_kg", "type": "number"}`, `{"name": "weight_kg", "type": "number", "required": true}`), schema.ReasonAttributeRequired},
		{"type changed", edit(t, `{"name": "country", "type": "text", "indexed": true}`, `{"name": "country", "type": "integer"}`), schema.ReasonTypeChanged},
		{"type changed from ref", edit(t, `{"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true}`, `{"name": "maker", "type": "text"}`), schema.ReasonTypeChanged},
		{"enum narrowed", edit(t, `"values": ["gold", "silver"]`, `"values": ["silver"]`), schema.ReasonEnumNarrowed},
		{"unique added", edit(t, `{"name": "country", "type": "text", "indexed": true}`, `{"name": "country", "type": "text", "unique": true}`), schema.ReasonUniqueAdded},
		{"ref kind changed", edit(t, `{"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true}`, `{"name": "maker", "type": "ref", "kind": "Warehouse"}`), schema.ReasonRefKindChanged},
		{"relation dropped", edit(t, `{"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many", "inverse": "supplies"},`, ``), schema.ReasonRelationDropped},
		{"relation required", edit(t, `"cardinality": "many", "inverse": "supplies"}`, `"cardinality": "many", "inverse": "supplies", "required": true}`), schema.ReasonRelationRequired},
		{"cardinality one", edit(t, `"cardinality": "many", "inverse": "supplies"}`, `"cardinality": "one", "inverse": "supplies"}`), schema.ReasonCardinalityOne},
	}
	before := b.counts(t)
	for _, tc := range refused {
		t.Run(tc.name, func(t *testing.T) {
			_, err := b.p.PutSchema(b.ctx, b.domain, "main", &commit.SchemaRequest{Document: json.RawMessage(tc.doc), Author: "a", Message: "m"})
			var inv *lberr.Error
			require.ErrorAs(t, err, &inv)
			require.Equal(t, lberr.Unprocessable, inv.Kind)
			require.Len(t, inv.Problems, 1, "%+v", inv.Problems)
			require.Equal(t, tc.code, inv.Problems[0].Code)
			require.NotEmpty(t, inv.Problems[0].Message)
			require.Equal(t, before, b.counts(t))
		})
	}

	// Invalid documents.
	_, err := b.p.PutSchema(b.ctx, b.domain, "main", &commit.SchemaRequest{Document: json.RawMessage(`{"kinds": [{"name": "1x"}]}`)})
	var inv *lberr.Error
	require.ErrorAs(t, err, &inv)
	require.Equal(t, lberr.Unprocessable, inv.Kind)
	require.NotEmpty(t, inv.Problems[0].Field)
	_, err = b.p.PutSchema(b.ctx, b.domain, "main", &commit.SchemaRequest{Document: json.RawMessage(`{"kinds": `)})
	require.ErrorAs(t, err, &inv)
	require.Equal(t, lberr.Invalid, inv.Kind)

	// Compatible changes pass, and a changed title refreshes titles and search.
	// Each edit applies on top of the previous ones.
	compatible := [][2]string{
		{`"values": ["gold", "silver"]`, `"values": ["gold", "silver", "bronze"]`},
		{`{"name": "weight_kg", "type": "number"}`, `{"name": "weight_kg", "type": "integer"}`}, // 2 is an integer
		{`{"name": "country", "type": "text", "indexed": true}`, `{"name": "country", "type": "text", "search": true}`},
		{`{"name": "name", "type": "text", "required": true}]}],`, `{"name": "name", "type": "text", "required": true}, {"name": "code", "type": "text"}]}],`},
		{`{"name": "Supplier", "title": "name"`, `{"name": "Supplier", "title": "vat"`},
	}
	var hook []string
	b.p = commit.New(b.store, commit.Config{OnSchemaChange: func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, old, new *schema.Schema) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM schemas WHERE domain_id = lb_domain() AND compiled ? 'kinds'`).Scan(&n); err != nil {
			return err
		}
		hook = append(hook, new.Kinds["Supplier"].Title)
		return nil
	}})
	doc := supplySchema
	for i, e := range compatible {
		require.Contains(t, doc, e[0])
		doc = strings.Replace(doc, e[0], e[1], 1)
		res, err := b.p.PutSchema(b.ctx, b.domain, "main", &commit.SchemaRequest{Document: json.RawMessage(doc), Author: "a", Message: "m"})
		require.NoError(t, err, "compatible change %d", i)
		require.Equal(t, 1, res.Changes)
	}
	require.Len(t, hook, len(compatible))
	s1 := b.record(t, "S-1")
	require.Equal(t, "V1", s1.Title)
	require.Contains(t, s1.Search, "'v1':1A")
	require.Contains(t, s1.Search, "'acme'")
	require.Contains(t, s1.Search, "'de'")

	// The schema is stored and used by the next commit.
	inv = b.invalid(t, req(put("Supplier", "S-3", `{"name": "x", "tier": "platinum"}`)))
	require.Equal(t, "enum", inv.Problems[0].Code)
	b.commit(t, put("Supplier", "S-3", `{"name": "x", "tier": "bronze"}`))

	// A failing hook rolls the schema change back.
	b.p = commit.New(b.store, commit.Config{OnSchemaChange: func(context.Context, pgx.Tx, int32, int32, *schema.Schema, *schema.Schema) error {
		return errors.New("queue is down")
	}})
	before = b.counts(t)
	_, err = b.p.PutSchema(b.ctx, b.domain, "main", &commit.SchemaRequest{Document: json.RawMessage(doc + " ")})
	require.Error(t, err)
	require.Equal(t, before, b.counts(t))

	// Removing values first lets an attribute go.
	b.p = commit.New(b.store, commit.Config{})
	b.commit(t, patch("S-1", `{"country": null}`), patch("S-2", `{"country": null}`))
	_, err = b.p.PutSchema(b.ctx, b.domain, "main", &commit.SchemaRequest{Document: json.RawMessage(
		strings.Replace(doc, `{"name": "country", "type": "text", "search": true},`, ``, 1))})
	require.NoError(t, err)
}
