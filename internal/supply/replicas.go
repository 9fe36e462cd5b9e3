package supply

import (
	"bytes"
	"encoding/json"
	"fmt"
	"iter"
	"strconv"
	"strings"
)

// MaxReplicas bounds Config.Replicas: a replica's Risk flag keys get a first
// character of their own, one of ReplicaChars.
const MaxReplicas = len(ReplicaChars) + 1

// ReplicaChars are the first characters of the Risk flag keys of replicas 1,
// 2, ... (replica 0 keeps the generated ULIDs, which start with 0 until the
// year 10889).
const ReplicaChars = "123456789ABCDEFGHJKMNPQRSTVWXYZ"

// VATMultiplier is the multiplier of the VAT number bijection: Supplier i
// has the number (i·VATMultiplier + seed mod 10⁹) mod 10⁹ after its country.
const VATMultiplier = vatMultiplier

// Base is the configuration of the dataset that one replica copies: the
// scale divided by the replicas (the Config itself when not replicated).
func (c Config) Base() Config {
	b := c
	if c.Replicas > 1 {
		b.Scale = c.Scale / c.Replicas
	}
	b.Replicas = 0
	return b
}

// newReplicated returns the generator of Replicas copies of the base
// dataset with keys renumbered.
func newReplicated(cfg Config) (*Generator, error) {
	if cfg.Replicas > MaxReplicas {
		return nil, fmt.Errorf("replicas %d: at most %d", cfg.Replicas, MaxReplicas)
	}
	if cfg.Scale%cfg.Replicas != 0 {
		return nil, fmt.Errorf("scale %d is not a multiple of replicas %d", cfg.Scale, cfg.Replicas)
	}
	base, err := New(cfg.Base())
	if err != nil {
		return nil, err
	}
	c := base.counts
	n := cfg.Replicas
	c.Suppliers, c.Warehouses, c.Parts, c.PurchaseOrders, c.RiskFlags = n*c.Suppliers, n*c.Warehouses, n*c.Parts, n*c.PurchaseOrders, n*c.RiskFlags
	return &Generator{cfg: cfg, counts: c, vocab: base.vocab, base: base}, nil
}

// replicatedChanges yields the stream of a replicated dataset: the base
// stream once per replica, renumbered, from the offset-th change on.
func (g *Generator) replicatedChanges(offset int) iter.Seq[Change] {
	return func(yield func(Change) bool) {
		per := g.base.counts.Changes()
		for r := offset / per; r < g.cfg.Replicas; r++ {
			from := 0
			if r == offset/per {
				from = offset % per
			}
			for c := range g.base.ChangesFrom(from) {
				if !yield(g.base.Renumber(c, r)) {
					return
				}
			}
		}
	}
}

// ReplicaKey is the key of a base dataset's Record in replica r: numbered
// keys move by r times the number of Records of their Kind in the base
// (S-1001 becomes S-163181 in replica 1 of the 1M dataset), Risk flag ULIDs
// get ReplicaChars[r-1] as first character.
func ReplicaKey(key string, r int, base Counts) string {
	if r == 0 {
		return key
	}
	for _, p := range []struct {
		prefix string
		n      int
	}{{"PO-", base.PurchaseOrders}, {"S-", base.Suppliers}, {"W-", base.Warehouses}, {"P-", base.Parts}} {
		if rest, ok := strings.CutPrefix(key, p.prefix); ok {
			if num, err := strconv.Atoi(rest); err == nil {
				return p.prefix + strconv.Itoa(num+r*p.n)
			}
		}
	}
	if key == "" || r > len(ReplicaChars) {
		return key
	}
	return ReplicaChars[r-1:r] + key[1:]
}

// Renumber returns a change of this (base) dataset as replica r has it:
// keys, foreign keys and Link ends renumbered (ReplicaKey), VAT numbers
// those of the Supplier's number in the whole dataset.
func (g *Generator) Renumber(c Change, r int) Change {
	if r == 0 {
		return c
	}
	k := func(s string) string { return ReplicaKey(s, r, g.counts) }
	out := c
	if c.Op != "put" {
		out.From, out.To = k(c.From), k(c.To)
		return out
	}
	out.Key = k(c.Key)
	v, err := decodeValues(c.Values)
	if err != nil {
		// The values were encoded by this package: unreachable.
		panic(fmt.Sprintf("supply: decode values of %s: %v", c.Key, err))
	}
	for _, attr := range refAttributes[c.Kind] {
		if s, ok := v[attr].(string); ok {
			v[attr] = k(s)
		}
	}
	if c.Kind == KindSupplier {
		if i, err := strconv.Atoi(strings.TrimPrefix(out.Key, "S-")); err == nil {
			country, _ := v["country"].(string)
			v["vat"] = vat(country, i-1001, g.cfg.Seed)
		}
	}
	return put(c.Kind, out.Key, v)
}

// refAttributes are the ref Attributes of each Kind.
// It is a lookup table, never written.
var refAttributes = map[string][]string{
	KindPart:          {"maker"},
	KindPurchaseOrder: {"supplier", "part"},
	KindRiskFlag:      {"supplier"},
}

// TitleAttribute is the title Attribute of each Kind of the schema.
// It is a lookup table, never written.
var TitleAttribute = map[string]string{
	KindSupplier: "name", KindWarehouse: "name", KindPart: "name", KindPurchaseOrder: "title", KindRiskFlag: "title",
}

// vat is the VAT number of Supplier i.
func vat(country string, i int, seed uint64) string {
	return fmt.Sprintf("%s%09d", country, (uint64(i)*vatMultiplier+seed%1_000_000_000)%1_000_000_000)
}

// mark prefixes the title Attribute of a put with the marker.
func mark(c Change, marker string) Change {
	attr, ok := TitleAttribute[c.Kind]
	if marker == "" || c.Op != "put" || !ok {
		return c
	}
	v, err := decodeValues(c.Values)
	if err != nil {
		panic(fmt.Sprintf("supply: decode values of %s: %v", c.Key, err))
	}
	if s, ok := v[attr].(string); ok {
		v[attr] = marker + " " + s
	}
	return put(c.Kind, c.Key, v)
}

func decodeValues(raw json.RawMessage) (map[string]any, error) {
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var v map[string]any
	if err := d.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}
