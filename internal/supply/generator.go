package supply

import (
	"encoding/json"
	"errors"
	"fmt"
	"iter"
	"math"
	"math/rand/v2"
	"strconv"
	"strings"
	"time"

	"github.com/oklog/ulid/v2"
)

// Records per scale unit, by Kind. Their sum is RecordsPerUnit.
const (
	SuppliersPerUnit      = 30
	WarehousesPerUnit     = 5
	PartsPerUnit          = 40
	PurchaseOrdersPerUnit = 85
	RiskFlagsPerUnit      = 25
	RecordsPerUnit        = SuppliersPerUnit + WarehousesPerUnit + PartsPerUnit + PurchaseOrdersPerUnit + RiskFlagsPerUnit
)

// MaxScale bounds Config.Scale: keys and VAT numbers stay unique far past it.
const MaxScale = 1_000_000

// Config selects a dataset. The same Config always yields the same stream.
type Config struct {
	Seed  uint64
	Scale int
	// ExtraLinks is the number of supplied_by and of stocked_at Links per
	// Part beyond the first of each.
	ExtraLinks int
	// Marker, when set, starts the title Attribute of every Record (its
	// name or title) with Marker and a space, so that the Records of two
	// datasets with the same keys can be told apart.
	Marker string `json:",omitempty"`
	// Replicas, when above 1, makes the dataset Replicas copies of the
	// dataset of Scale/Replicas with keys renumbered (ReplicaKey): what
	// the harness builds by copying the materialized rows of a loaded base.
	Replicas int `json:",omitempty"`
}

// Counts is the size of a dataset.
type Counts struct {
	Suppliers, Warehouses, Parts, PurchaseOrders, RiskFlags int
	// SuppliedBy and StockedAt are the stored Links per Part.
	SuppliedBy, StockedAt int
}

// Records is the number of Records.
func (c Counts) Records() int {
	return c.Suppliers + c.Warehouses + c.Parts + c.PurchaseOrders + c.RiskFlags
}

// Links is the number of stored Links (supplied_by and stocked_at).
func (c Counts) Links() int { return c.Parts * (c.SuppliedBy + c.StockedAt) }

// RefLinks is the number of foreign-key Links: the ref Attributes of Parts
// (maker), purchase orders (supplier, part) and Risk flags (supplier).
func (c Counts) RefLinks() int { return c.Parts + 2*c.PurchaseOrders + c.RiskFlags }

// Changes is the length of the change stream: a put per Record and a link
// per stored Link.
func (c Counts) Changes() int { return c.Records() + c.Links() }

// Of returns the number of Records of a Kind (0 for an unknown Kind).
func (c Counts) Of(kind string) int {
	switch kind {
	case KindSupplier:
		return c.Suppliers
	case KindWarehouse:
		return c.Warehouses
	case KindPart:
		return c.Parts
	case KindPurchaseOrder:
		return c.PurchaseOrders
	case KindRiskFlag:
		return c.RiskFlags
	}
	return 0
}

// Change is one change of the stream, shaped like a commit change.
type Change struct {
	Op       string          `json:"op"`
	Kind     string          `json:"kind,omitempty"`
	Key      string          `json:"key,omitempty"`
	Values   json.RawMessage `json:"values,omitempty"`
	Relation string          `json:"relation,omitempty"`
	From     string          `json:"from,omitempty"`
	To       string          `json:"to,omitempty"`
}

// The phases of the stream, in order. Links follow the Parts (their
// sources) and come before the purchase orders so that a Part's Links land
// close to it.
const (
	phaseSupplier = iota
	phaseWarehouse
	phasePart
	phaseLinks
	phasePurchaseOrder
	phaseRiskFlag
	phaseCount
)

// Seed streams: each Record draws from a PCG source seeded with the dataset
// seed and (stream, index), so it can be generated on its own.
const (
	streamSupplier uint64 = iota + 1
	streamWarehouse
	streamPart
	streamLinks
	streamPurchaseOrder
	streamRiskFlag
)

// Generator yields a dataset. It is immutable and safe for concurrent use;
// every iteration keeps its own state.
type Generator struct {
	cfg    Config
	counts Counts
	vocab  []string
	sizes  [phaseCount]int
	// base is the dataset a replicated Generator copies (nil otherwise).
	base *Generator
}

// New returns the generator of a dataset.
func New(cfg Config) (*Generator, error) {
	if cfg.Scale < 1 || cfg.Scale > MaxScale {
		return nil, fmt.Errorf("scale %d: must be between 1 and %d", cfg.Scale, MaxScale)
	}
	if cfg.ExtraLinks < 0 || cfg.ExtraLinks > 1000 {
		return nil, fmt.Errorf("extra links %d: must be between 0 and 1000", cfg.ExtraLinks)
	}
	if cfg.Replicas < 0 {
		return nil, fmt.Errorf("replicas %d: must not be negative", cfg.Replicas)
	}
	if cfg.Replicas > 1 {
		return newReplicated(cfg)
	}
	c := Counts{
		Suppliers:      SuppliersPerUnit * cfg.Scale,
		Warehouses:     WarehousesPerUnit * cfg.Scale,
		Parts:          PartsPerUnit * cfg.Scale,
		PurchaseOrders: PurchaseOrdersPerUnit * cfg.Scale,
		RiskFlags:      RiskFlagsPerUnit * cfg.Scale,
	}
	c.SuppliedBy = min(1+cfg.ExtraLinks, c.Suppliers)
	c.StockedAt = min(1+cfg.ExtraLinks, c.Warehouses)
	g := &Generator{cfg: cfg, counts: c, vocab: Vocabulary()}
	g.sizes = [phaseCount]int{c.Suppliers, c.Warehouses, c.Parts, c.Links(), c.PurchaseOrders, c.RiskFlags}
	return g, nil
}

// Config is the generator's configuration.
func (g *Generator) Config() Config { return g.cfg }

// Counts is the size of the dataset.
func (g *Generator) Counts() Counts { return g.counts }

// Vocabulary returns the title words, most frequent first.
func Vocabulary() []string { return strings.Fields(vocabulary) }

// Changes yields the whole stream.
func (g *Generator) Changes() iter.Seq[Change] { return g.ChangesFrom(0) }

// ChangesFrom yields the stream from its offset-th change on, without
// generating the changes before it.
func (g *Generator) ChangesFrom(offset int) iter.Seq[Change] {
	if g.base != nil {
		return g.replicatedChanges(offset)
	}
	return func(yield func(Change) bool) {
		st := g.newState()
		pos := 0
		for ph := range phaseCount {
			n := g.sizes[ph]
			if offset >= pos+n {
				pos += n
				continue
			}
			for i := max(0, offset-pos); i < n; i++ {
				if !yield(g.change(st, ph, i)) {
					return
				}
			}
			pos += n
		}
	}
}

// Batches yields the stream in batches of at most size changes, skipping
// the first skip batches. Each batch is a new slice.
func (g *Generator) Batches(size, skip int) iter.Seq[[]Change] {
	return func(yield func([]Change) bool) {
		if size < 1 {
			return
		}
		batch := make([]Change, 0, min(size, g.counts.Changes()))
		for c := range g.ChangesFrom(skip * size) {
			batch = append(batch, c)
			if len(batch) == size {
				if !yield(batch) {
					return
				}
				batch = make([]Change, 0, size)
			}
		}
		if len(batch) > 0 {
			yield(batch)
		}
	}
}

// BatchCount is the number of batches of at most size changes.
func (g *Generator) BatchCount(size int) int {
	if size < 1 {
		return 0
	}
	return (g.counts.Changes() + size - 1) / size
}

// Key returns the key of the i-th Record of a Kind (0 ≤ i < Counts().Of(kind)).
func (g *Generator) Key(kind string, i int) string {
	if g.base != nil {
		n := g.base.counts.Of(kind)
		if n == 0 {
			return ""
		}
		return ReplicaKey(g.base.Key(kind, i%n), i/n, g.base.counts)
	}
	switch kind {
	case KindSupplier:
		return supplierKey(i)
	case KindWarehouse:
		return warehouseKey(i)
	case KindPart:
		return partKey(i)
	case KindPurchaseOrder:
		return purchaseOrderKey(i)
	case KindRiskFlag:
		st := g.newState()
		st.reset(g.cfg.Seed, streamRiskFlag, i)
		id, _ := st.riskFlagID(i)
		return id.String()
	}
	return ""
}

// Record returns the put of the i-th Record of a Kind, as the stream has it.
func (g *Generator) Record(kind string, i int) (Change, error) {
	if g.base != nil {
		n := g.base.counts.Of(kind)
		if n == 0 || i < 0 || i >= g.counts.Of(kind) {
			return Change{}, fmt.Errorf("%s %d: out of range [0, %d)", kind, i, g.counts.Of(kind))
		}
		c, err := g.base.Record(kind, i%n)
		if err != nil {
			return Change{}, err
		}
		return g.base.Renumber(c, i/n), nil
	}
	phases := map[string]int{KindSupplier: phaseSupplier, KindWarehouse: phaseWarehouse, KindPart: phasePart,
		KindPurchaseOrder: phasePurchaseOrder, KindRiskFlag: phaseRiskFlag}
	ph, ok := phases[kind]
	if !ok {
		return Change{}, fmt.Errorf("unknown kind %q", kind)
	}
	if i < 0 || i >= g.counts.Of(kind) {
		return Change{}, fmt.Errorf("%s %d: out of range [0, %d)", kind, i, g.counts.Of(kind))
	}
	return g.change(g.newState(), ph, i), nil
}

func supplierKey(i int) string      { return "S-" + strconv.Itoa(1001+i) }
func warehouseKey(i int) string     { return "W-" + strconv.Itoa(1001+i) }
func partKey(i int) string          { return "P-" + strconv.Itoa(1001+i) }
func purchaseOrderKey(i int) string { return "PO-" + strconv.Itoa(100001+i) }

// state is one iteration's random source, reseeded per Record.
type state struct {
	pcg        *rand.PCG
	r          *rand.Rand
	words      *rand.Zipf
	makers     *rand.Zipf
	countries  *rand.Zipf
	categories *rand.Zipf
	vocab      []string

	linkPart  int
	partLinks []Change
}

func (g *Generator) newState() *state {
	pcg := rand.NewPCG(0, 0)
	r := rand.New(pcg)
	return &state{
		pcg:        pcg,
		r:          r,
		words:      rand.NewZipf(r, 1.1, 2, uint64(len(g.vocab)-1)),
		makers:     rand.NewZipf(r, 1.1, 5, uint64(g.counts.Suppliers-1)),
		countries:  rand.NewZipf(r, 1.2, 1, uint64(len(countries)-1)),
		categories: rand.NewZipf(r, 1.3, 2, uint64(len(categories)-1)),
		vocab:      g.vocab,
		linkPart:   -1,
	}
}

// reset seeds the source for Record i of a stream.
func (st *state) reset(seed, stream uint64, i int) {
	st.pcg.Seed(seed, splitmix(stream<<40^uint64(i)))
}

func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9
	x = (x ^ (x >> 27)) * 0x94d049bb133111eb
	return x ^ (x >> 31)
}

func (g *Generator) change(st *state, ph, i int) Change {
	if g.cfg.Marker != "" && ph != phaseLinks {
		return mark(g.generate(st, ph, i), g.cfg.Marker)
	}
	return g.generate(st, ph, i)
}

func (g *Generator) generate(st *state, ph, i int) Change {
	seed := g.cfg.Seed
	switch ph {
	case phaseSupplier:
		st.reset(seed, streamSupplier, i)
		return st.supplier(i, seed)
	case phaseWarehouse:
		st.reset(seed, streamWarehouse, i)
		return st.warehouse(i)
	case phasePart:
		st.reset(seed, streamPart, i)
		return st.part(i)
	case phaseLinks:
		per := g.counts.SuppliedBy + g.counts.StockedAt
		p := i / per
		if st.linkPart != p {
			st.partLinks = g.links(st, p)
			st.linkPart = p
		}
		return st.partLinks[i%per]
	case phasePurchaseOrder:
		st.reset(seed, streamPurchaseOrder, i)
		return st.purchaseOrder(i, g.counts.Parts)
	case phaseRiskFlag:
		st.reset(seed, streamRiskFlag, i)
		return st.riskFlag(i)
	}
	panic("supply: unknown phase")
}

func put(kind, key string, values map[string]any) Change {
	b, err := json.Marshal(values)
	if err != nil {
		// The values are strings and numbers built here: unreachable.
		panic(fmt.Sprintf("supply: encode values of %s: %v", key, err))
	}
	return Change{Op: "put", Kind: kind, Key: key, Values: b}
}

// vatMultiplier is coprime to 10^9, so i → i·m + a (mod 10^9) is a bijection
// and VAT numbers never repeat.
const vatMultiplier = 387_420_489

func (st *state) supplier(i int, seed uint64) Change {
	country := countries[st.countries.Uint64()]
	name := capitalize(st.word())
	if st.r.IntN(2) == 0 {
		name += " " + capitalize(st.word())
	}
	name += " " + supplierSuffixes[st.r.IntN(len(supplierSuffixes))]
	return put(KindSupplier, supplierKey(i), map[string]any{
		"name":    name,
		"vat":     vat(country, i, seed),
		"country": country,
		"tier":    weighted(st.r, tiers),
	})
}

func (st *state) warehouse(i int) Change {
	city := cities[st.r.IntN(len(cities))]
	name := city + " " + capitalize(st.word()) + " " + warehouseSuffixes[st.r.IntN(len(warehouseSuffixes))]
	return put(KindWarehouse, warehouseKey(i), map[string]any{"name": name, "city": city})
}

// maker is the first draw of a Part, so links can find it cheaply.
func (st *state) maker() int { return int(st.makers.Uint64()) }

func (st *state) part(i int) Change {
	maker := st.maker()
	n := 2 + st.r.IntN(3)
	words := make([]string, 0, n)
	for len(words) < n {
		w := st.word()
		if len(words) > 0 && words[len(words)-1] == w {
			continue
		}
		words = append(words, w)
	}
	words[0] = capitalize(words[0])
	weight := math.Max(0.001, math.Round(math.Exp(st.r.NormFloat64()*1.5)*1000)/1000)
	return put(KindPart, partKey(i), map[string]any{
		"name":      strings.Join(words, " "),
		"maker":     supplierKey(maker),
		"weight_kg": weight,
		"category":  categories[st.categories.Uint64()],
	})
}

// links returns the stored Links of Part p: supplied_by its maker and
// ExtraLinks other Suppliers, stocked_at 1+ExtraLinks Warehouses (all
// distinct, fewer when the dataset has fewer).
func (g *Generator) links(st *state, p int) []Change {
	st.reset(g.cfg.Seed, streamPart, p)
	maker := st.maker()
	st.reset(g.cfg.Seed, streamLinks, p)
	from := partKey(p)
	out := make([]Change, 0, g.counts.SuppliedBy+g.counts.StockedAt)
	seen := map[int]bool{maker: true}
	out = append(out, Change{Op: "link", Relation: RelationSuppliedBy, From: from, To: supplierKey(maker)})
	for len(seen) < g.counts.SuppliedBy {
		s := st.r.IntN(g.counts.Suppliers)
		if !seen[s] {
			seen[s] = true
			out = append(out, Change{Op: "link", Relation: RelationSuppliedBy, From: from, To: supplierKey(s)})
		}
	}
	clear(seen)
	for len(seen) < g.counts.StockedAt {
		w := st.r.IntN(g.counts.Warehouses)
		if !seen[w] {
			seen[w] = true
			out = append(out, Change{Op: "link", Relation: RelationStockedAt, From: from, To: warehouseKey(w)})
		}
	}
	return out
}

var orderDay0 = time.Date(2023, 1, 1, 0, 0, 0, 0, time.UTC)

func (st *state) purchaseOrder(i, parts int) Change {
	supplier := int(st.makers.Uint64())
	part := st.r.IntN(parts)
	qty := int(math.Pow(10, st.r.Float64()*3.5)) + 1
	title := st.sentence(orderVerbs[st.r.IntN(len(orderVerbs))] + " " + strconv.Itoa(qty))
	return put(KindPurchaseOrder, purchaseOrderKey(i), map[string]any{
		"title":      title,
		"supplier":   supplierKey(supplier),
		"part":       partKey(part),
		"quantity":   qty,
		"ordered_on": orderDay0.AddDate(0, 0, st.r.IntN(1000)).Format(time.DateOnly),
	})
}

// riskEpoch is the time of the first Risk flag; flag i is i milliseconds later.
var riskEpoch = time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)

// riskFlagID is the first draw of a Risk flag: its key.
func (st *state) riskFlagID(i int) (ulid.ULID, time.Time) {
	at := riskEpoch.Add(time.Duration(i) * time.Millisecond)
	id, err := ulid.New(ulid.Timestamp(at), randReader{st.r})
	if err != nil {
		// Only a failing entropy source or a time past 10889 AD fail: unreachable.
		panic(fmt.Sprintf("supply: ulid: %v", err))
	}
	return id, at
}

func (st *state) riskFlag(i int) Change {
	id, at := st.riskFlagID(i)
	supplier := int(st.makers.Uint64())
	title := st.sentence(riskPrefixes[st.r.IntN(len(riskPrefixes))])
	return put(KindRiskFlag, id.String(), map[string]any{
		"title":     title,
		"supplier":  supplierKey(supplier),
		"severity":  weighted(st.r, severities),
		"raised_at": at.Format(time.RFC3339Nano),
	})
}

func (st *state) word() string { return st.vocab[st.words.Uint64()] }

// sentence builds a title of 33 to 64 characters starting with lead.
func (st *state) sentence(lead string) string {
	var b strings.Builder
	b.WriteString(lead)
	n := 4 + st.r.IntN(5)
	for k := 0; k < n; k++ {
		w := st.word()
		if k == 2 && st.r.IntN(2) == 0 {
			w = connectors[st.r.IntN(len(connectors))] + " " + w
		}
		if b.Len()+1+len(w) > 64 {
			if b.Len() >= 33 {
				break
			}
			continue
		}
		b.WriteByte(' ')
		b.WriteString(w)
	}
	for b.Len() < 33 {
		w := st.word()
		if b.Len()+1+len(w) <= 64 {
			b.WriteByte(' ')
			b.WriteString(w)
		}
	}
	return b.String()
}

func capitalize(w string) string {
	if w == "" {
		return w
	}
	return strings.ToUpper(w[:1]) + w[1:]
}

type choice struct {
	value  string
	weight int
}

func weighted(r *rand.Rand, cs []choice) string {
	total := 0
	for _, c := range cs {
		total += c.weight
	}
	n := r.IntN(total)
	for _, c := range cs {
		if n < c.weight {
			return c.value
		}
		n -= c.weight
	}
	return cs[len(cs)-1].value
}

// randReader is a deterministic entropy source for ULIDs.
type randReader struct{ r *rand.Rand }

func (rr randReader) Read(p []byte) (int, error) {
	if rr.r == nil {
		return 0, errors.New("no source")
	}
	for i := 0; i < len(p); i += 8 {
		v := rr.r.Uint64()
		for j := 0; j < 8 && i+j < len(p); j++ {
			p[i+j] = byte(v >> (8 * j))
		}
	}
	return len(p), nil
}

// Lookup tables of the generator; never written.
var (
	countries = []string{"DE", "CN", "US", "JP", "IT", "FR", "GB", "KR", "IN", "TW", "NL", "PL",
		"CZ", "ES", "SE", "CH", "AT", "MX", "BR", "VN", "TR", "BE", "DK", "FI"}
	cities = []string{"Hamburg", "Rotterdam", "Antwerp", "Shanghai", "Shenzhen", "Singapore", "Busan",
		"Yokohama", "Los Angeles", "Houston", "Chicago", "Memphis", "Duisburg", "Leipzig", "Lyon",
		"Milan", "Barcelona", "Gdansk", "Prague", "Vienna", "Zurich", "Stockholm", "Gothenburg",
		"Felixstowe", "Manchester", "Dublin", "Mumbai", "Chennai", "Kaohsiung", "Monterrey",
		"Santos", "Izmir", "Ho Chi Minh City", "Copenhagen", "Helsinki", "Liege"}
	categories = []string{"fasteners", "valves", "bearings", "seals", "electrical", "sensors", "hydraulics",
		"pneumatics", "motors", "filters", "cables", "fittings", "structural", "tooling", "packaging",
		"consumables"}
	supplierSuffixes  = []string{"Industries", "GmbH", "Ltd", "Works", "Supply", "AG", "Inc", "Group", "Trading", "SA", "Co", "Manufacturing"}
	warehouseSuffixes = []string{"Depot", "Warehouse", "Hub", "Store", "Yard", "Distribution Center"}
	orderVerbs        = []string{"Order", "Reorder", "Restock", "Expedite", "Replace", "Buy"}
	riskPrefixes      = []string{"Late", "Missed", "Disputed", "Suspected", "Reported", "Possible", "Repeated"}
	connectors        = []string{"for", "from", "with", "at", "and", "to", "of the", "near"}
	tiers             = []choice{{"gold", 10}, {"silver", 30}, {"bronze", 60}}
	severities        = []choice{{"low", 50}, {"medium", 30}, {"high", 15}, {"critical", 5}}
)
