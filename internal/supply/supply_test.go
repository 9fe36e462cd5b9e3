package supply_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"sort"
	"strings"
	"testing"

	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/schema"
)

func newGen(t *testing.T, cfg supply.Config) *supply.Generator {
	t.Helper()
	g, err := supply.New(cfg)
	require.NoError(t, err)
	return g
}

func collect(g *supply.Generator) []supply.Change {
	var out []supply.Change
	for c := range g.Changes() {
		out = append(out, c)
	}
	return out
}

func hashOf(t *testing.T, cs []supply.Change) string {
	t.Helper()
	h := sha256.New()
	for _, c := range cs {
		b, err := json.Marshal(c)
		require.NoError(t, err)
		h.Write(b)
		h.Write([]byte{'\n'})
	}
	return hex.EncodeToString(h.Sum(nil))
}

func decode(t *testing.T, raw json.RawMessage) map[string]any {
	t.Helper()
	d := json.NewDecoder(bytes.NewReader(raw))
	d.UseNumber()
	var m map[string]any
	require.NoError(t, d.Decode(&m))
	return m
}

func TestNewRejectsBadConfig(t *testing.T) {
	t.Parallel()
	for _, cfg := range []supply.Config{{Scale: 0}, {Scale: -1}, {Scale: supply.MaxScale + 1}, {Scale: 1, ExtraLinks: -1}} {
		_, err := supply.New(cfg)
		require.Error(t, err, "%+v", cfg)
	}
}

func TestDeterministic(t *testing.T) {
	t.Parallel()
	first := func(g *supply.Generator, n int) []supply.Change {
		var out []supply.Change
		for c := range g.Changes() {
			if len(out) == n {
				break
			}
			out = append(out, c)
		}
		return out
	}
	cfg := supply.Config{Seed: 42, Scale: 2, ExtraLinks: 2}
	a := hashOf(t, first(newGen(t, cfg), 5000))
	require.Equal(t, a, hashOf(t, first(newGen(t, cfg), 5000)), "same seed, same stream")
	require.Equal(t, hashOf(t, collect(newGen(t, cfg))), hashOf(t, collect(newGen(t, cfg))))
	other := cfg
	other.Seed = 43
	require.NotEqual(t, a, hashOf(t, first(newGen(t, other), 5000)), "another seed, another stream")
}

func TestCountsMatchScale(t *testing.T) {
	t.Parallel()
	tests := []struct {
		scale, extra          int
		suppliedBy, stockedAt int
	}{
		{scale: 1, extra: 0, suppliedBy: 1, stockedAt: 1},
		{scale: 3, extra: 4, suppliedBy: 5, stockedAt: 5},
		{scale: 1, extra: 9, suppliedBy: 10, stockedAt: 5}, // only 5 Warehouses
	}
	for _, tc := range tests {
		g := newGen(t, supply.Config{Seed: 7, Scale: tc.scale, ExtraLinks: tc.extra})
		c := g.Counts()
		require.Equal(t, supply.RecordsPerUnit*tc.scale, c.Records())
		require.Equal(t, 185, supply.RecordsPerUnit)
		require.Equal(t, tc.suppliedBy, c.SuppliedBy)
		require.Equal(t, tc.stockedAt, c.StockedAt)

		kinds := map[string]int{}
		links := map[string]int{}
		n := 0
		for ch := range g.Changes() {
			n++
			switch ch.Op {
			case "put":
				kinds[ch.Kind]++
			case "link":
				links[ch.Relation]++
			default:
				t.Fatalf("unexpected op %q", ch.Op)
			}
		}
		require.Equal(t, c.Changes(), n)
		require.Equal(t, map[string]int{
			supply.KindSupplier:      supply.SuppliersPerUnit * tc.scale,
			supply.KindWarehouse:     supply.WarehousesPerUnit * tc.scale,
			supply.KindPart:          supply.PartsPerUnit * tc.scale,
			supply.KindPurchaseOrder: supply.PurchaseOrdersPerUnit * tc.scale,
			supply.KindRiskFlag:      supply.RiskFlagsPerUnit * tc.scale,
		}, kinds)
		for k, v := range kinds {
			require.Equal(t, v, c.Of(k))
		}
		require.Equal(t, map[string]int{
			supply.RelationSuppliedBy: c.Parts * tc.suppliedBy,
			supply.RelationStockedAt:  c.Parts * tc.stockedAt,
		}, links)
		require.Equal(t, c.Links(), links[supply.RelationSuppliedBy]+links[supply.RelationStockedAt])
	}
}

// TestStreamIsValid checks every Record against the compiled schema, that
// every ref and Link target comes earlier in the stream, and that keys, VAT
// numbers and Links are unique.
func TestStreamIsValid(t *testing.T) {
	t.Parallel()
	doc, problems := schema.Parse([]byte(supply.Schema))
	require.Empty(t, problems)
	sc, problems := schema.Compile(doc)
	require.Empty(t, problems)

	g := newGen(t, supply.Config{Seed: 1, Scale: 3, ExtraLinks: 4})
	kindOf := map[string]string{}
	vats := map[string]bool{}
	links := map[string]bool{}
	for ch := range g.Changes() {
		switch ch.Op {
		case "put":
			require.NotContains(t, kindOf, ch.Key, "key %s put twice", ch.Key)
			k, ok := sc.Kind(ch.Kind)
			require.True(t, ok, ch.Kind)
			vals, problems := k.ValidateValues(decode(t, ch.Values))
			require.Empty(t, problems, "%s %s", ch.Key, ch.Values)
			require.Empty(t, k.MissingRequired(vals), ch.Key)
			for _, a := range k.RefAttributes() {
				target, ok := vals[a.Name].(string)
				if !ok {
					continue
				}
				require.Equal(t, a.Kind, kindOf[target], "%s.%s = %s must name an earlier %s", ch.Key, a.Name, target, a.Kind)
			}
			title := k.TitleOf(vals)
			require.NotEmpty(t, title)
			switch ch.Kind {
			case supply.KindSupplier:
				vat := vals["vat"].(string)
				require.False(t, vats[vat], "VAT %s repeated", vat)
				vats[vat] = true
				require.True(t, strings.HasPrefix(vat, vals["country"].(string)), vat)
			case supply.KindRiskFlag:
				id, err := ulid.ParseStrict(ch.Key)
				require.NoError(t, err, ch.Key)
				require.Equal(t, id.String(), ch.Key)
				fallthrough
			case supply.KindPurchaseOrder:
				require.GreaterOrEqual(t, len(title), 33, title)
				require.LessOrEqual(t, len(title), 64, title)
			}
			kindOf[ch.Key] = ch.Kind
		case "link":
			r, ok := sc.Relation(ch.Relation)
			require.True(t, ok, ch.Relation)
			require.Equal(t, r.From, kindOf[ch.From], "link from %s", ch.From)
			require.Equal(t, r.To, kindOf[ch.To], "link to %s", ch.To)
			id := ch.Relation + " " + ch.From + " " + ch.To
			require.False(t, links[id], "link %s repeated", id)
			links[id] = true
		}
	}
	require.Len(t, vats, g.Counts().Suppliers)
	require.Len(t, links, g.Counts().Links())
}

func TestRandomAccessMatchesStream(t *testing.T) {
	t.Parallel()
	g := newGen(t, supply.Config{Seed: 9, Scale: 2, ExtraLinks: 3})
	all := collect(g)

	for _, off := range []int{0, 1, 59, 60, 70, 165, 409, len(all) - 1, len(all)} {
		var got []supply.Change
		for c := range g.ChangesFrom(off) {
			got = append(got, c)
		}
		require.Equal(t, hashOf(t, all[off:]), hashOf(t, got), "offset %d", off)
	}

	for _, size := range []int{1, 7, 100, 10_000} {
		for _, skip := range []int{0, 1, 3} {
			var got []supply.Change
			n := 0
			for b := range g.Batches(size, skip) {
				require.NotEmpty(t, b)
				require.LessOrEqual(t, len(b), size)
				got = append(got, b...)
				n++
			}
			from := min(skip*size, len(all))
			require.Equal(t, hashOf(t, all[from:]), hashOf(t, got), "size %d skip %d", size, skip)
			require.Equal(t, max(0, g.BatchCount(size)-skip), n)
		}
	}

	byKind := map[string][]supply.Change{}
	for _, ch := range all {
		if ch.Op == "put" {
			byKind[ch.Kind] = append(byKind[ch.Kind], ch)
		}
	}
	for kind, puts := range byKind {
		for i, want := range puts {
			require.Equal(t, want.Key, g.Key(kind, i))
			got, err := g.Record(kind, i)
			require.NoError(t, err)
			require.Equal(t, want, got)
		}
	}
	_, err := g.Record("Nope", 0)
	require.Error(t, err)
	_, err = g.Record(supply.KindPart, g.Counts().Parts)
	require.Error(t, err)
}

func TestMakersAreSkewed(t *testing.T) {
	t.Parallel()
	g := newGen(t, supply.Config{Seed: 3, Scale: 10})
	makers := map[string]int{}
	for ch := range g.Changes() {
		if ch.Op == "put" && ch.Kind == supply.KindPart {
			var v struct{ Maker string }
			require.NoError(t, json.Unmarshal(ch.Values, &v))
			makers[v.Maker]++
		}
	}
	counts := make([]int, 0, len(makers))
	for _, n := range makers {
		counts = append(counts, n)
	}
	sort.Sort(sort.Reverse(sort.IntSlice(counts)))
	mean := float64(g.Counts().Parts) / float64(g.Counts().Suppliers)
	require.Greater(t, float64(counts[0]), 10*mean, "the most common maker makes far more Parts than the mean")
	require.Less(t, len(makers), g.Counts().Suppliers, "some Suppliers make nothing")
}

func TestVocabulary(t *testing.T) {
	t.Parallel()
	v := supply.Vocabulary()
	require.Len(t, v, 700)
	seen := map[string]bool{}
	for _, w := range v {
		require.False(t, seen[w], "%s repeated", w)
		seen[w] = true
		require.Equal(t, strings.ToLower(w), w)
		for _, r := range w {
			require.True(t, r >= 'a' && r <= 'z', w)
		}
	}
}

func TestMisspell(t *testing.T) {
	t.Parallel()
	tests := []struct {
		word, want string
		ok         bool
	}{
		{"supplier", "suplpier", true},
		{"valve", "vavle", true},
		{"steel", "setel", true}, // the middle pair "ee" is equal: the next pair out
		{"bolt", "blot", true},
		{"pump", "pmup", true},
		{"tin", "tin", false},
		{"", "", false},
		{"baaab", "baaab", false},
	}
	for _, tc := range tests {
		got, ok := supply.Misspell(tc.word)
		require.Equal(t, tc.ok, ok, tc.word)
		require.Equal(t, tc.want, got, tc.word)
	}
}

func TestWorkload(t *testing.T) {
	t.Parallel()
	vocab := map[string]bool{}
	for _, w := range supply.Vocabulary() {
		vocab[w] = true
	}
	qs := supply.Queries(5, 200)
	require.Len(t, qs, 200)
	require.Equal(t, qs, supply.Queries(5, 200))
	for _, q := range qs {
		ws := strings.Fields(q)
		require.Len(t, ws, 3, q)
		require.NotEqual(t, ws[0], ws[1])
		require.NotEqual(t, ws[1], ws[2])
		require.NotEqual(t, ws[0], ws[2])
		for _, w := range ws {
			require.True(t, vocab[w], w)
		}
	}
	for _, w := range supply.Words(5, 100) {
		require.True(t, vocab[w], w)
	}
	for _, ty := range supply.Typos(5, 100) {
		require.True(t, vocab[ty.Word])
		require.NotEqual(t, ty.Word, ty.Misspelled)
		require.Len(t, ty.Misspelled, len(ty.Word))
	}
}
