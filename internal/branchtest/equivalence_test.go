package branchtest_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const schemaDoc = `{"kinds": [
 {"name": "Supplier", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true, "search": true},
   {"name": "vat", "type": "text", "unique": true},
   {"name": "country", "type": "text", "indexed": true}]},
 {"name": "Part", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true, "search": true},
   {"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true},
   {"name": "weight_kg", "type": "number"}]}],
 "relations": [
 {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many", "inverse": "supplies"}]}`

var words = []string{"hex", "bolt", "nut", "washer", "steel", "brass", "anchor", "gear", "valve", "spring", "acme", "north"}
var countries = []string{"DE", "FR", "NL", "SE"}

// TestOverlayAndCopyAreEquivalent applies one random sequence of commits
// (puts, patches, deletes, links, unlinks) to an overlay and to a copy of
// main, with commits on main in between, and compares every read. Seeds:
// 1 and 2 by default; LOREBASE_EQUIVALENCE_SEEDS=N runs seeds 1..N.
func TestOverlayAndCopyAreEquivalent(t *testing.T) {
	t.Parallel()
	seeds := 2
	if v := os.Getenv("LOREBASE_EQUIVALENCE_SEEDS"); v != "" {
		n, err := strconv.Atoi(v)
		require.NoError(t, err, "LOREBASE_EQUIVALENCE_SEEDS")
		seeds = n
	}
	for seed := uint64(1); seed <= uint64(seeds); seed++ {
		t.Run(fmt.Sprintf("seed %d", seed), func(t *testing.T) {
			t.Parallel()
			runEquivalence(t, seed)
		})
	}
}

type world struct {
	t      *testing.T
	ctx    context.Context
	s      *store.Store
	p      *commit.Pipeline
	r      *reads.Reader
	domain int32
	rng    *rand.Rand
	// keys ever used, for reads and for random changes.
	suppliers, parts []string
	// revs maps every Revision id to a label shared by both branches:
	// Revisions of main keep their id, the n-th commit of the overlay and
	// of the copy is "branch#n".
	revs map[string]string
	seqs map[float64]string
}

func runEquivalence(t *testing.T, seed uint64) {
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{MaxConns: 8})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	d, err := s.CreateDomain(ctx, "eq")
	require.NoError(t, err)
	w := &world{t: t, ctx: ctx, s: s, p: commit.New(s, commit.Config{}), r: reads.New(s, reads.Config{}),
		domain: d.ID, rng: rand.New(rand.NewPCG(seed, 7)), revs: map[string]string{}, seqs: map[float64]string{}}
	_, err = w.p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(schemaDoc), Author: "t", Message: "schema"})
	require.NoError(t, err)

	// main: a base of Suppliers, Parts and Links.
	var seedChanges []commit.Change
	for i := 0; i < 12; i++ {
		k := fmt.Sprintf("S-%d", i)
		w.suppliers = append(w.suppliers, k)
		c := w.putSupplier(k)
		c.Values = json.RawMessage(fmt.Sprintf(`{"name": %q, "vat": "B%d"}`, w.name(), i))
		seedChanges = append(seedChanges, c)
	}
	for i := 0; i < 20; i++ {
		k := fmt.Sprintf("P-%d", i)
		w.parts = append(w.parts, k)
		seedChanges = append(seedChanges, w.putPart(k))
	}
	for i := 0; i < 15; i++ {
		seedChanges = append(seedChanges, commit.Change{Op: "link", Relation: "supplied_by", From: w.parts[i], To: w.suppliers[i%12]})
	}
	_, err = w.p.Commit(ctx, d.ID, "main", &commit.Request{Message: "seed", Author: "t", Changes: seedChanges}, "")
	require.NoError(t, err)

	noJobs := store.BranchJobs{Copy: func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil }}
	_, err = s.CreateBranch(ctx, d.ID, store.CreateBranchRequest{Name: "agent/ov", From: "main", Mode: "overlay"}, noJobs)
	require.NoError(t, err)
	cp, err := s.CreateBranch(ctx, d.ID, store.CreateBranchRequest{Name: "agent/cp", From: "main", Mode: "copy"}, noJobs)
	require.NoError(t, err)
	require.Equal(t, "copying", cp.State)

	// Phase 1: the copy has not copied anything yet and reads through main.
	w.rounds(12)
	w.compare()

	// Phase 2: the copy job runs to the end; the answers do not change.
	var b struct{ ID int32 }
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'agent/cp'`, d.ID).Scan(&b.ID))
	c := &jobs.Copier{Store: s, BatchRows: 7}
	require.NoError(t, c.Run(ctx, jobs.MaterializeArgs{DomainID: d.ID, BranchID: b.ID}))
	var state string
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT state FROM refs WHERE domain_id = $1 AND id = $2`, d.ID, b.ID).Scan(&state))
	require.Equal(t, "ready", state)
	w.compare()

	// Phase 3: more commits on the ready copy, the overlay and main.
	w.rounds(12)
	w.compare()
	require.GreaterOrEqual(t, len(w.revs), 2*5, "random commits land (both branches count)")
}

func (w *world) name() string {
	return words[w.rng.IntN(len(words))] + " " + words[w.rng.IntN(len(words))]
}

func (w *world) putSupplier(k string) commit.Change {
	v := map[string]any{"name": w.name(), "country": countries[w.rng.IntN(len(countries))]}
	if w.rng.IntN(2) == 0 {
		v["vat"] = fmt.Sprintf("V%d", w.rng.IntN(40))
	}
	b, _ := json.Marshal(v)
	return commit.Change{Op: "put", Kind: "Supplier", Key: k, Values: b}
}

func (w *world) putPart(k string) commit.Change {
	v := map[string]any{"name": w.name(), "weight_kg": w.rng.IntN(50)}
	if w.rng.IntN(3) > 0 {
		v["maker"] = w.suppliers[w.rng.IntN(len(w.suppliers))]
	}
	b, _ := json.Marshal(v)
	return commit.Change{Op: "put", Kind: "Part", Key: k, Values: b}
}

// change draws one change over the known keys; some are refused (unknown
// keys, duplicate vat, deleting a linked Record), which both branches
// must refuse alike.
func (w *world) change() commit.Change {
	switch w.rng.IntN(9) {
	case 0:
		k := fmt.Sprintf("S-%d", len(w.suppliers))
		w.suppliers = append(w.suppliers, k)
		return w.putSupplier(k)
	case 1:
		k := fmt.Sprintf("P-%d", len(w.parts))
		w.parts = append(w.parts, k)
		return w.putPart(k)
	case 2:
		return w.putSupplier(w.suppliers[w.rng.IntN(len(w.suppliers))])
	case 3:
		b, _ := json.Marshal(map[string]any{"weight_kg": w.rng.IntN(50), "name": w.name()})
		return commit.Change{Op: "patch", Key: w.parts[w.rng.IntN(len(w.parts))], Values: b}
	case 4:
		b, _ := json.Marshal(map[string]any{"country": countries[w.rng.IntN(len(countries))]})
		return commit.Change{Op: "patch", Key: w.suppliers[w.rng.IntN(len(w.suppliers))], Values: b}
	case 5:
		return commit.Change{Op: "delete", Key: w.parts[w.rng.IntN(len(w.parts))]}
	case 6:
		return commit.Change{Op: "delete", Key: w.suppliers[w.rng.IntN(len(w.suppliers))]}
	case 7:
		return commit.Change{Op: "unlink", Relation: "supplied_by", From: w.parts[w.rng.IntN(len(w.parts))], To: w.suppliers[w.rng.IntN(len(w.suppliers))]}
	default:
		return commit.Change{Op: "link", Relation: "supplied_by", From: w.parts[w.rng.IntN(len(w.parts))], To: w.suppliers[w.rng.IntN(len(w.suppliers))]}
	}
}

// rounds runs n rounds: a commit of 1-3 changes applied to the overlay and
// to the copy (both accept it or both refuse it), and every other round a
// commit on main.
func (w *world) rounds(n int) {
	for i := 0; i < n; i++ {
		var changes []commit.Change
		for j := 1 + w.rng.IntN(3); j > 0; j-- {
			changes = append(changes, w.change())
		}
		req := &commit.Request{Message: fmt.Sprintf("round %d", i), Author: "agent", Changes: changes}
		ov, errOv := w.p.Commit(w.ctx, w.domain, "agent/ov", req, "")
		cp, errCp := w.p.Commit(w.ctx, w.domain, "agent/cp", req, "")
		require.Equal(w.t, errOv == nil, errCp == nil, "overlay: %v; copy: %v", errOv, errCp)
		if errOv != nil {
			var a, b *lberr.Error
			require.True(w.t, errors.As(errOv, &a), "%v", errOv)
			require.True(w.t, errors.As(errCp, &b), "%v", errCp)
			require.Equal(w.t, a.Problems, b.Problems)
		} else {
			label := fmt.Sprintf("branch#%d", len(w.revs))
			w.revs[ov.Revision], w.revs[cp.Revision] = label, label
			w.seqs[float64(ov.Seq)], w.seqs[float64(cp.Seq)] = label, label
		}
		if i%2 == 0 {
			var mc []commit.Change
			for j := 1 + w.rng.IntN(3); j > 0; j-- {
				mc = append(mc, w.change())
			}
			_, _ = w.p.Commit(w.ctx, w.domain, "main", &commit.Request{Message: "main moves", Author: "other", Changes: mc}, "")
		}
	}
}

// compare reads everything on both branches and requires the same answers
// (Revision ids mapped to their shared labels, commit times left out).
func (w *world) compare() {
	w.t.Helper()
	keys := append(append([]string{}, w.suppliers...), w.parts...)
	sort.Strings(keys)
	read := func(branch string, f func(branch string) (any, error)) string {
		v, err := f(branch)
		if err != nil {
			if errors.Is(err, store.ErrNotFound) {
				return "not found"
			}
			require.NoError(w.t, err, branch)
		}
		return w.normalize(v)
	}
	same := func(what string, f func(branch string) (any, error)) {
		w.t.Helper()
		require.Equal(w.t, read("agent/ov", f), read("agent/cp", f), what)
	}
	ctx, d := w.ctx, w.domain
	for _, kind := range []string{"Supplier", "Part", ""} {
		same("page "+kind, func(b string) (any, error) {
			var all []reads.Record
			after := ""
			for {
				p, err := w.r.Page(ctx, d, b, reads.PageQuery{Kind: kind, After: after, Limit: 5})
				if err != nil {
					return nil, err
				}
				all = append(all, p.Records...)
				if p.Next == "" {
					return all, nil
				}
				after = p.Next
			}
		})
	}
	for _, c := range countries {
		same("country "+c, func(b string) (any, error) {
			return w.r.Page(ctx, d, b, reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: c, Limit: 100})
		})
	}
	for _, k := range keys {
		same("get "+k, func(b string) (any, error) { return w.r.Get(ctx, d, b, k, "") })
		same("links "+k, func(b string) (any, error) { return w.r.Links(ctx, d, b, k, reads.LinksQuery{Direction: "both"}) })
		same("history "+k, func(b string) (any, error) { return w.r.History(ctx, d, b, k, 100, "") })
		same("lineage "+k, func(b string) (any, error) { return w.r.Lineage(ctx, d, b, k) })
	}
	for _, k := range keys[:6] {
		same("neighborhood "+k, func(b string) (any, error) { return w.r.Neighborhood(ctx, d, b, k, 2, 100) })
	}
	for _, q := range []string{"bolt", "steel gear", "acme north"} {
		same("search "+q, func(b string) (any, error) {
			res, err := w.r.Search(ctx, d, b, reads.SearchQuery{Q: q, Limit: 50})
			if res != nil {
				res.Corrections = nil
				// ranked counts the Records the search scored: an overlay
				// counts its base's candidates and its own, a copy its own;
				// the results and truncated must agree.
				res.Ranked = 0
			}
			return res, err
		})
	}
}

// normalize encodes v with Revision ids replaced by their labels and
// times dropped.
func (w *world) normalize(v any) string {
	b, err := json.Marshal(v)
	require.NoError(w.t, err)
	var x any
	require.NoError(w.t, json.Unmarshal(b, &x))
	var walk func(any) any
	walk = func(x any) any {
		switch t := x.(type) {
		case map[string]any:
			delete(t, "at")
			for k, v := range t {
				if n, ok := v.(float64); ok && (k == "seq" || strings.HasSuffix(k, "_seq")) {
					if l, ok := w.seqs[n]; ok {
						t[k] = l
						continue
					}
				}
				t[k] = walk(v)
			}
			return t
		case []any:
			for i := range t {
				t[i] = walk(t[i])
			}
			return t
		case string:
			if l, ok := w.revs[t]; ok {
				return l
			}
			return t
		}
		return x
	}
	out, err := json.Marshal(walk(x))
	require.NoError(w.t, err)
	return strings.TrimSpace(string(out))
}
