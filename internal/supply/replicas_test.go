package supply_test

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/supply"
)

func TestReplicatedDataset(t *testing.T) {
	t.Parallel()
	cfg := supply.Config{Seed: 9, Scale: 3, ExtraLinks: 1, Replicas: 3}
	g := newGen(t, cfg)
	base := newGen(t, cfg.Base())
	require.Equal(t, 1, cfg.Base().Scale)
	require.Equal(t, 3*base.Counts().Records(), g.Counts().Records())
	require.Equal(t, 3*base.Counts().Links(), g.Counts().Links())

	all := collect(g)
	require.Len(t, all, g.Counts().Changes())
	baseChanges := collect(base)
	require.Equal(t, baseChanges, all[:len(baseChanges)], "replica 0 is the base")

	keys := map[string]bool{}
	vats := map[string]bool{}
	index := map[string]int{}
	for _, c := range all {
		switch c.Op {
		case "put":
			require.False(t, keys[c.Key], "key %s twice", c.Key)
			keys[c.Key] = true
			v := decode(t, c.Values)
			for _, ref := range []string{"maker", "supplier", "part"} {
				if s, ok := v[ref].(string); ok {
					require.True(t, keys[s], "%s of %s refers to %s, not put before", ref, c.Key, s)
				}
			}
			if c.Kind == supply.KindSupplier {
				vat := v["vat"].(string)
				require.False(t, vats[vat], "VAT %s twice", vat)
				vats[vat] = true
			}
			i := index[c.Kind]
			index[c.Kind]++
			require.Equal(t, c.Key, g.Key(c.Kind, i))
			rec, err := g.Record(c.Kind, i)
			require.NoError(t, err)
			require.Equal(t, c, rec)
		case "link":
			require.True(t, keys[c.From] && keys[c.To], "link %s -> %s before its ends", c.From, c.To)
		}
	}
	require.Equal(t, "S-1031", g.Key(supply.KindSupplier, 30), "replica 1 starts after the 30 Suppliers of the base")
	rf := g.Key(supply.KindRiskFlag, 2*supply.RiskFlagsPerUnit)
	require.Equal(t, "2", rf[:1])
	require.Equal(t, base.Key(supply.KindRiskFlag, 0)[1:], rf[1:])

	var tail []supply.Change
	for c := range g.ChangesFrom(len(all) - 5) {
		tail = append(tail, c)
	}
	require.Equal(t, all[len(all)-5:], tail, "the stream starts anywhere")

	_, err := supply.New(supply.Config{Scale: 5, Replicas: 2})
	require.ErrorContains(t, err, "multiple")
	_, err = supply.New(supply.Config{Scale: 100, Replicas: supply.MaxReplicas + 1})
	require.Error(t, err)
}

func TestMarker(t *testing.T) {
	t.Parallel()
	plain := collect(newGen(t, supply.Config{Seed: 4, Scale: 1}))
	marked := collect(newGen(t, supply.Config{Seed: 4, Scale: 1, Marker: "zzmark"}))
	require.Len(t, marked, len(plain))
	for i, c := range marked {
		p := plain[i]
		require.Equal(t, p.Key, c.Key)
		if c.Op != "put" {
			require.Equal(t, p, c)
			continue
		}
		attr := supply.TitleAttribute[c.Kind]
		got, want := decode(t, c.Values), decode(t, p.Values)
		require.True(t, strings.HasPrefix(got[attr].(string), "zzmark "), c.Key)
		want[attr] = "zzmark " + want[attr].(string)
		require.Equal(t, want, got)
	}
}
