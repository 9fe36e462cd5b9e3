package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/oklog/ulid/v2"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/embed"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

// demoDomain is the Domain keeper demo creates.
const demoDomain = "supply"

// demoSchema: Suppliers, Parts made by a Supplier (a ref), Warehouses, and
// the Relations supplied_by and stocked_at. Parts embed their names with
// the built-in hash embedder (search?mode=semantic).
const demoSchema = `{"kinds": [
  {"name": "Supplier", "title": "name", "attributes": [
    {"name": "name", "type": "text", "required": true, "search": true},
    {"name": "vat", "type": "text", "unique": true},
    {"name": "country", "type": "text", "indexed": true},
    {"name": "tier", "type": "enum", "values": ["gold", "silver", "bronze"]}]},
  {"name": "Warehouse", "title": "name", "attributes": [
    {"name": "name", "type": "text", "required": true, "search": true},
    {"name": "city", "type": "text", "indexed": true}]},
  {"name": "Part", "title": "name", "attributes": [
    {"name": "name", "type": "text", "required": true, "search": true},
    {"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true},
    {"name": "weight_kg", "type": "number"}],
   "embedding": {"attributes": ["name"], "dims": 64, "model": "hash"}}],
 "relations": [
  {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many", "inverse": "supplies"},
  {"name": "stocked_at", "from": "Part", "to": "Warehouse", "cardinality": "many", "inverse": "stocks"}]}`

// loadDemo creates the demo Domain with its schema and Records when it does
// not exist yet, and mints a new admin token for it.
func loadDemo(ctx context.Context, s *store.Store, p *commit.Pipeline) (string, error) {
	d, err := s.DomainByName(ctx, demoDomain)
	if errors.Is(err, store.ErrNotFound) {
		if d, err = s.CreateDomain(ctx, demoDomain); err != nil {
			return "", err
		}
		if err := loadDemoData(ctx, s, p, d.ID); err != nil {
			return "", fmt.Errorf("load the demo data: %w", err)
		}
	} else if err != nil {
		return "", err
	}
	secret, _, err := s.CreateToken(ctx, d.ID, "demo-admin-"+strings.ToLower(ulid.Make().String()[16:]), keeper.RoleAdmin, []string{"*"}, nil)
	if err != nil {
		return "", err
	}
	return secret, nil
}

func loadDemoData(ctx context.Context, s *store.Store, p *commit.Pipeline, domainID int32) error {
	if _, err := p.PutSchema(ctx, domainID, "main", &commit.SchemaRequest{
		Document: json.RawMessage(demoSchema), Author: "keeper demo", Message: "Supply schema",
	}); err != nil {
		return err
	}
	suppliers := []struct{ name, country, tier string }{
		{"Acme Fasteners", "DE", "gold"}, {"Borealis Metals", "SE", "silver"}, {"Cobalt Works", "PL", "bronze"},
		{"Delta Bolts", "FR", "gold"}, {"Eastern Alloys", "CZ", "silver"}, {"Fjord Steel", "NO", "gold"},
		{"Granite Tools", "IT", "bronze"}, {"Harbor Hardware", "NL", "silver"}, {"Iberia Castings", "ES", "gold"},
		{"Jura Precision", "CH", "silver"},
	}
	warehouses := []struct{ name, city string }{
		{"North Hub", "Hamburg"}, {"South Hub", "Milan"}, {"West Hub", "Lyon"}, {"East Hub", "Warsaw"}, {"Central Hub", "Prague"},
	}
	parts := []string{"Hex bolt", "Lock nut", "Washer", "Spring pin", "Rivet", "Bearing", "Bushing", "Gasket",
		"Hinge", "Bracket", "Clamp", "Spacer", "Shaft", "Gear", "Pulley", "Sprocket", "Coupling", "Flange",
		"Valve", "Nozzle", "Seal", "O-ring", "Dowel", "Anchor", "Threaded rod", "Set screw", "Cotter pin",
		"Circlip", "Grommet", "Standoff", "Thumb screw", "Wing nut", "Eye bolt", "Cable tie", "Spring"}
	var changes []commit.Change
	values := func(v map[string]any) json.RawMessage {
		b, _ := json.Marshal(v)
		return b
	}
	for i, sp := range suppliers {
		changes = append(changes, commit.Change{Op: "put", Kind: "Supplier", Key: fmt.Sprintf("S-%d", 1001+i),
			Values: values(map[string]any{"name": sp.name, "country": sp.country, "tier": sp.tier, "vat": fmt.Sprintf("%s%09d", sp.country, 100000+i*7919)})})
	}
	for i, w := range warehouses {
		changes = append(changes, commit.Change{Op: "put", Kind: "Warehouse", Key: fmt.Sprintf("W-%d", 1+i),
			Values: values(map[string]any{"name": w.name, "city": w.city})})
	}
	for i, name := range parts {
		key := fmt.Sprintf("P-%d", 1+i)
		maker := fmt.Sprintf("S-%d", 1001+i%len(suppliers))
		changes = append(changes,
			commit.Change{Op: "put", Kind: "Part", Key: key,
				Values: values(map[string]any{"name": name, "maker": maker, "weight_kg": float64(5+i*3) / 100})},
			commit.Change{Op: "link", Relation: "supplied_by", From: key, To: maker},
			commit.Change{Op: "link", Relation: "stocked_at", From: key, To: fmt.Sprintf("W-%d", 1+i%len(warehouses))})
		if i%3 == 0 {
			changes = append(changes, commit.Change{Op: "link", Relation: "supplied_by", From: key,
				To: fmt.Sprintf("S-%d", 1001+(i+3)%len(suppliers))})
		}
	}
	res, err := p.Commit(ctx, domainID, "main", &commit.Request{
		Message: "Demo suppliers, warehouses and parts", Author: "keeper demo",
		Provenance: json.RawMessage(`{"tool": "keeper demo"}`), Changes: changes,
	}, "")
	if err != nil {
		return err
	}
	// The Parts' vectors, now: the demo may be loaded by a process that
	// runs no jobs (keeper demo). A queued embedding job finds them done.
	var branchID int32
	if err := s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, domainID).Scan(&branchID); err != nil {
		return fmt.Errorf("find main: %w", err)
	}
	e := &jobs.Embedder{Store: s, Embedders: embed.NewSet(nil)}
	if _, err := e.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: domainID, BranchID: branchID, Seq: res.Seq}); err != nil {
		return fmt.Errorf("embed the demo parts: %w", err)
	}
	return nil
}
