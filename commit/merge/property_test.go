package merge_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"sort"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/store"
)

// model tracks what a branch holds, so random changes stay valid.
type model struct {
	rng       *rand.Rand
	suppliers map[string]bool
	links     map[string]bool // "P-i S-j"
	next      int
}

func (m *model) clone(seed uint64) *model {
	c := &model{rng: rand.New(rand.NewPCG(seed, 7)), suppliers: map[string]bool{}, links: map[string]bool{}, next: m.next}
	for k := range m.suppliers {
		c.suppliers[k] = true
	}
	for k := range m.links {
		c.links[k] = true
	}
	return c
}

func (m *model) pick() string {
	keys := make([]string, 0, len(m.suppliers))
	for k := range m.suppliers {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys[m.rng.IntN(len(keys))]
}

var countryList = []string{"DE", "FR", "NL", "SE", "PL"}

// changes draws n valid changes and applies them to the model.
func (m *model) changes(prefix string, n int) []commit.Change {
	var out []commit.Change
	touched := map[string]bool{}
	for len(out) < n {
		switch op := m.rng.IntN(5); {
		case op == 0 || len(m.suppliers) < 3:
			m.next++
			k := fmt.Sprintf("S-%s%d", prefix, m.next)
			m.suppliers[k] = true
			touched[k] = true
			out = append(out, put("Supplier", k, fmt.Sprintf(`{"name": "n%d", "country": %q}`, m.next, countryList[m.rng.IntN(5)])))
		case op == 1 || op == 2:
			k := m.pick()
			if touched[k] {
				continue
			}
			touched[k] = true
			out = append(out, patch(k, fmt.Sprintf(`{"country": %q}`, countryList[m.rng.IntN(5)])))
		case op == 3:
			p := fmt.Sprintf("P-%d", m.rng.IntN(3))
			s := m.pick()
			l := p + " " + s
			if touched[s] || touched[l] {
				continue
			}
			touched[l] = true
			if m.links[l] {
				delete(m.links, l)
				out = append(out, unlnk("supplied_by", p, s))
			} else {
				m.links[l] = true
				out = append(out, lnk("supplied_by", p, s))
			}
		default:
			s := m.pick()
			linked := false
			for l := range m.links {
				if l[len(l)-len(s)-1:] == " "+s {
					linked = true
				}
			}
			if linked || touched[s] {
				continue
			}
			touched[s] = true
			delete(m.suppliers, s)
			out = append(out, del(s))
		}
	}
	return out
}

// mainState reads every present Record and Link of main in the Domain.
func mainState(t *testing.T, s *store.Store, domain int32) (map[string]string, []string) {
	t.Helper()
	ctx := context.Background()
	recs := map[string]string{}
	rows, err := s.Pool.Query(ctx, `SELECT m.key, m.kind, m.values::text FROM mat_records m JOIN refs r ON r.domain_id = m.domain_id AND r.id = m.branch_id
		WHERE m.domain_id = $1 AND r.name = 'main' AND NOT m.deleted`, domain)
	require.NoError(t, err)
	var k, kind, v string
	_, err = pgx.ForEachRow(rows, []any{&k, &kind, &v}, func() error {
		recs[k] = kind + " " + v
		return nil
	})
	require.NoError(t, err)
	rows, err = s.Pool.Query(ctx, `SELECT m.from_key || ' ' || m.relation || ' ' || m.to_key FROM mat_links m JOIN refs r ON r.domain_id = m.domain_id AND r.id = m.branch_id
		WHERE m.domain_id = $1 AND r.name = 'main' AND NOT m.deleted ORDER BY 1`, domain)
	require.NoError(t, err)
	links, err := pgx.AppendRows([]string(nil), rows, pgx.RowTo[string])
	require.NoError(t, err)
	return recs, links
}

// Merging a random overlay and a random copy holding the same changes
// into the same main gives the same main, conflicts and all.
func TestOverlayAndCopyMergeAlike(t *testing.T) {
	t.Parallel()
	for seed := uint64(1); seed <= 3; seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			b := setup(t)
			d2, err := b.store.CreateDomain(b.ctx, "supply2")
			require.NoError(t, err)
			_, err = b.p.PutSchema(b.ctx, d2.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "t", Message: "s"})
			require.NoError(t, err)
			other := &bundle{ctx: b.ctx, store: b.store, p: b.p, e: b.e, domain: d2.ID}
			worlds := []struct {
				b    *bundle
				mode string
			}{{b, store.ModeOverlay}, {other, store.ModeCopy}}

			base := &model{rng: rand.New(rand.NewPCG(seed, 1)), suppliers: map[string]bool{}, links: map[string]bool{}}
			seedChanges := append([]commit.Change{put("Part", "P-0", `{"name": "a"}`), put("Part", "P-1", `{"name": "b"}`),
				put("Part", "P-2", `{"name": "c"}`)}, base.changes("m", 12)...)
			src := base.clone(seed * 11)
			tgt := base.clone(seed * 13)
			var srcCommits, tgtCommits [][]commit.Change
			for i := 0; i < 4; i++ {
				srcCommits = append(srcCommits, src.changes("s", 5))
				tgtCommits = append(tgtCommits, tgt.changes("t", 3))
			}
			var results []*merge.Result
			var conflictIDs [][]string
			for _, w := range worlds {
				w.b.commit(t, "main", seedChanges...)
				w.b.branch(t, "agent/x", "main", w.mode)
				for i := range srcCommits {
					w.b.commit(t, "agent/x", srcCommits[i]...)
					w.b.commit(t, "main", tgtCommits[i]...)
				}
				d := w.b.inspect(t, "agent/x", "main")
				require.Empty(t, d.Problems)
				// Conflicts the source cannot win keep the target.
				res, ids := mergeKeepingTarget(t, w.b)
				results = append(results, res)
				conflictIDs = append(conflictIDs, ids)
			}
			r1, l1 := mainState(t, b.store, b.domain)
			r2, l2 := mainState(t, b.store, d2.ID)
			require.Equal(t, r1, r2)
			require.Equal(t, l1, l2)
			require.Equal(t, results[0].Changes, results[1].Changes)
			require.Equal(t, conflictIDs[0], conflictIDs[1])
			t.Logf("changes merged: %d, conflicts kept for the target: %v", results[0].Changes, conflictIDs[0])
		})
	}
}

// mergeKeepingTarget merges agent/x into main with default source, giving
// every conflict the default cannot resolve to the target.
func mergeKeepingTarget(t *testing.T, b *bundle) (*merge.Result, []string) {
	t.Helper()
	res := map[string]merge.Resolution{}
	var ids []string
	for range 8 {
		out, err := b.merge(t, "agent/x", "main", res, "source")
		var ce *merge.ConflictsError
		if errors.As(err, &ce) {
			for _, c := range ce.Conflicts {
				res[c.ID] = merge.Resolution{Choice: "target", Fingerprint: c.Fingerprint}
				ids = append(ids, c.Code+" "+c.Key)
			}
			continue
		}
		require.NoError(t, err)
		return out, ids
	}
	t.Fatal("the merge did not settle")
	return nil, nil
}
