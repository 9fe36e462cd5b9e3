package reads_test

import (
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// branchWorld builds main with Records, Links and history; the overlay
// "ov" with own changes (tombstones of base Records and Links, a Kind
// change); main moving on after the fork (changes, tombstones, a Kind
// change, new Records and Links); the overlay "ov2" of "ov"; and the copy
// "cp" still copying with some rows copied.
func branchWorld(t *testing.T) *fixture {
	t.Helper()
	s := newStore(t)
	f := newFixture(t, s, "branches")
	cs := []change{put("Supplier", "S-0", map[string]any{"name": "Hub depot"})}
	for i := 1; i <= 6; i++ {
		cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i),
			map[string]any{"name": fmt.Sprintf("Supplier %s", []string{"", "acme", "bolt", "cog", "dyna", "echo", "flux"}[i]),
				"country": fmt.Sprintf("C%d", i%3)}))
	}
	for i := 1; i <= 12; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("P-%02d", i), map[string]any{"name": fmt.Sprintf("Part %s", []string{"",
			"hex", "nut", "washer", "gear", "spring", "pin", "rivet", "shaft", "cam", "valve", "seal", "pump"}[i]),
			"note": []string{"steel", "brass", "copper"}[i%3], "maker": fmt.Sprintf("S-%d", i%6+1)}))
	}
	for i := 1; i <= 3; i++ {
		cs = append(cs, link("supplied_by", "S-0", fmt.Sprintf("S-%d", i)))
	}
	cs = append(cs, link("supplied_by", "P-01", "S-2"), link("supplied_by", "P-03", "S-3"))
	f.commit("alice", `{"source":"one"}`, cs...)
	f.commit("bob", "", patch("S-1", map[string]any{"country": "DE"}), del("S-2"), unlink("supplied_by", "S-0", "S-3"),
		put("Part", "P-13", map[string]any{"name": "Part bearing", "note": "steel", "maker": "S-3"}))

	ov := f.fork("ov", "overlay", revInfo{})
	ov.commit("agent", `{"agent":"ov"}`,
		patch("P-01", map[string]any{"name": "Overlay hex", "note": "titanium"}),
		put("Part", "O-1", map[string]any{"name": "Overlay widget", "note": "steel", "maker": "S-4"}),
		del("P-02"),
		unlink("supplied_by", "S-0", "S-1"),
		link("supplied_by", "O-1", "S-5"),
		patch("S-3", map[string]any{"country": "C9"}))
	ov.commit("agent", "", put("Supplier", "P-02", map[string]any{"name": "Revived as supplier", "country": "C1"}),
		del("P-03"), patch("P-04", map[string]any{"maker": "S-1"}))

	f.commit("carol", "", patch("S-1", map[string]any{"country": "XX"}), del("S-4"),
		patch("P-05", map[string]any{"note": "zebra"}), put("Part", "P-20", map[string]any{"name": "Part late", "maker": "S-1"}),
		link("supplied_by", "S-0", "S-6"), del("P-06"), patch("S-5", map[string]any{"country": "C1"}),
		unlink("supplied_by", "P-01", "S-2"))
	f.commit("dave", "", put("Supplier", "P-06", map[string]any{"name": "Kind changed", "country": "C2"}),
		patch("P-05", map[string]any{"name": "Part spring renamed"}), patch("P-07", map[string]any{"maker": "S-6"}))

	ov2 := ov.fork("ov2", "overlay", revInfo{})
	ov2.commit("agent2", "", patch("P-07", map[string]any{"note": "nylon"}), del("P-08"),
		put("Part", "O-2", map[string]any{"name": "Second widget", "maker": "S-5"}), link("supplied_by", "O-2", "O-1"))
	ov.commit("agent", "", patch("P-09", map[string]any{"note": "zinc"}), del("O-1"))

	cp := f.fork("cp", "copy", revInfo{})
	cp.materialize("P-01", "S-1", "P-05", "S-0", "P-06")
	cp.commit("agent3", "", patch("P-10", map[string]any{"note": "ceramic"}), del("S-1"))
	f.commit("erin", "", patch("P-11", map[string]any{"note": "glass"}), patch("P-10", map[string]any{"note": "wood"}))
	return f
}

func TestBranchReadsMatchModel(t *testing.T) {
	t.Parallel()
	f := branchWorld(t)
	seqRev := map[int64]string{}
	for id, r := range f.revs {
		seqRev[r.Seq] = id
	}
	for _, name := range []string{"main", "ov", "ov2", "cp"} {
		b := f.m[name]
		ls := levels(b, b.Head, false)
		checkState(t, f, name, "", ls, seqRev)
		checkHeadOnly(t, f, name, ls, seqRev)
		checkLog(t, f, name, b)
	}
	// at=: every Revision of each branch's log; a Revision of a base after
	// the fork (or of another branch) is not found.
	for _, name := range []string{"main", "ov", "ov2", "cp"} {
		b := f.m[name]
		log := modelLog(f, b)
		inLog := map[string]bool{}
		for _, r := range log {
			inLog[r.ID] = true
			checkState(t, f, name, r.ID, levels(b, r.Seq, true), seqRev)
		}
		for id := range f.revs {
			if inLog[id] {
				continue
			}
			_, err := f.r.Get(f.ctx, f.domain, name, "S-0", id)
			require.ErrorIs(t, err, store.ErrNotFound, "%s at %s (%s)", name, id, f.revs[id].Branch)
		}
	}
}

// modelLog is the Revision log of b: its own Revisions, then its base's up
// to the fork, and so on.
func modelLog(f *fixture, b *branchModel) []revInfo {
	var out []revInfo
	for _, l := range levels(b, b.Head, true) {
		for _, r := range f.revs {
			if r.Branch == l.B.Name && r.Seq <= l.Cut {
				out = append(out, r)
			}
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq > out[j].Seq })
	return out
}

func checkLog(t *testing.T, f *fixture, name string, b *branchModel) {
	want := modelLog(f, b)
	var got []string
	before := ""
	for {
		p, err := f.r.Revisions(f.ctx, f.domain, name, 2, before)
		require.NoError(t, err)
		for _, r := range p.Revisions {
			got = append(got, r.ID)
		}
		if p.Next == "" {
			break
		}
		before = p.Next
	}
	var ids []string
	for _, r := range want {
		ids = append(ids, r.ID)
	}
	require.Equal(t, ids, got, "log of %s", name)
}

func valuesJSON(t *testing.T, v map[string]any) string {
	b, err := json.Marshal(v)
	require.NoError(t, err)
	return string(b)
}

// checkState compares get, pages, attribute queries and Links of branch
// name (at Revision at, "" for the head) with the model's levels ls.
func checkState(t *testing.T, f *fixture, name, at string, ls []level, seqRev map[int64]string) {
	t.Helper()
	ctx := fmt.Sprintf("%s at %q", name, at)
	keys := append(allKeys(ls), "NOPE")
	for _, k := range keys {
		e := effective(ls, k)
		got, err := f.r.Get(f.ctx, f.domain, name, k, at)
		if !e.Present {
			require.ErrorIs(t, err, store.ErrNotFound, "%s get %s", ctx, k)
			continue
		}
		require.NoError(t, err, "%s get %s", ctx, k)
		require.Equal(t, e.Kind, got.Kind, "%s get %s", ctx, k)
		require.Equal(t, e.Title, got.Title, "%s get %s", ctx, k)
		require.JSONEq(t, valuesJSON(t, e.Values), string(got.Values), "%s get %s", ctx, k)
		require.Equal(t, seqRev[e.Seq], got.Revision, "%s get %s", ctx, k)
	}
	// Pages, every page of 3.
	for _, kind := range []string{"", "Supplier", "Part"} {
		var want []string
		for _, e := range present(ls) {
			if kind == "" || e.Kind == kind {
				want = append(want, e.Key)
			}
		}
		var got []string
		after := ""
		for {
			p, err := f.r.Page(f.ctx, f.domain, name, reads.PageQuery{Kind: kind, After: after, Limit: 3, At: at})
			require.NoError(t, err, ctx)
			for _, r := range p.Records {
				got = append(got, r.Key)
			}
			if p.Next == "" {
				break
			}
			after = p.Next
		}
		require.Equal(t, want, got, "%s page %q", ctx, kind)
	}
	// Attribute queries, at the head and as of every Revision.
	for _, c := range []string{"C0", "C1", "C2", "C9", "DE", "XX"} {
		var want []string
		for _, e := range present(ls) {
			if e.Kind == "Supplier" && e.Values["country"] == c {
				want = append(want, e.Key)
			}
		}
		p, err := f.r.Page(f.ctx, f.domain, name, reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: c, Limit: 100, At: at})
		require.NoError(t, err)
		require.Equal(t, want, keysOf(p.Records), "%s country %s", ctx, c)
	}
	// Links of every present Record.
	links := presentLinks(ls)
	for _, e := range present(ls) {
		for _, dir := range []string{"out", "in", "both"} {
			want := []reads.Link{}
			for k, o := range links {
				if (dir != "in" && k.From == e.Key) || (dir != "out" && k.To == e.Key) {
					want = append(want, reads.Link{Relation: k.Rel, From: k.From, To: k.To, Origin: map[byte]string{'l': "link", 'r': "ref"}[o]})
				}
			}
			sortLinks(want)
			got, err := f.r.Links(f.ctx, f.domain, name, e.Key, reads.LinksQuery{Direction: dir, At: at})
			require.NoError(t, err, "%s links %s", ctx, e.Key)
			require.Equal(t, want, got.Links, "%s links %s %s", ctx, e.Key, dir)
		}
	}
	if at != "" {
		// Search as of the Revision: every word of every Record version.
		checkSearch(t, f, name, at, ls)
	}
}

func keysOf(recs []reads.Record) []string {
	var out []string
	for _, r := range recs {
		out = append(out, r.Key)
	}
	return out
}

func sortLinks(ls []reads.Link) {
	sort.Slice(ls, func(i, j int) bool {
		a, b := ls[i], ls[j]
		if a.Relation != b.Relation {
			return a.Relation < b.Relation
		}
		if a.From != b.From {
			return a.From < b.From
		}
		return a.To < b.To
	})
}

// checkSearch searches every word the levels ever held and compares the
// full matches with the model (a corrected word also matches its
// corrections).
func checkSearch(t *testing.T, f *fixture, name, at string, ls []level) {
	t.Helper()
	vocab := map[string]bool{}
	for _, l := range ls {
		for _, hs := range l.B.Hist {
			for _, h := range hs {
				for w := range searchWords(effRec{Kind: h.Kind, Title: h.Title, Values: h.Values}) {
					vocab[w] = true
				}
			}
		}
	}
	recs := present(ls)
	for w := range vocab {
		res, err := f.r.Search(f.ctx, f.domain, name, reads.SearchQuery{Q: w, Limit: 100, At: at})
		require.NoError(t, err)
		terms := append([]string{w}, res.Corrections[w]...)
		var want []string
		for _, e := range recs {
			ws := searchWords(e)
			for _, x := range terms {
				if ws[x] {
					want = append(want, e.Key)
					break
				}
			}
		}
		sort.Strings(want)
		require.Equal(t, want, searchKeys(res.Results, "full"), "%s at %q search %q (corrections %v)", name, at, w, res.Corrections)
	}
}

// checkHeadOnly compares the head-only reads: search, history, lineage,
// neighborhood.
func checkHeadOnly(t *testing.T, f *fixture, name string, ls []level, seqRev map[int64]string) {
	t.Helper()
	checkSearch(t, f, name, "", ls)
	for _, k := range allKeys(ls) {
		want := chainHist(ls, k)
		h, err := f.r.History(f.ctx, f.domain, name, k, 100, "")
		if len(want) == 0 {
			require.ErrorIs(t, err, store.ErrNotFound, "%s history %s", name, k)
			continue
		}
		require.NoError(t, err)
		require.Len(t, h.Entries, len(want), "%s history %s", name, k)
		for i, e := range h.Entries {
			require.Equal(t, want[i].Seq, e.Seq, "%s history %s", name, k)
			require.Equal(t, want[i].Op, e.Op, "%s history %s", name, k)
			require.Equal(t, want[i].Rev, e.Revision, "%s history %s", name, k)
		}
		// Keyset pages of 2 read the same entries.
		var got []int64
		before := ""
		for {
			p, err := f.r.History(f.ctx, f.domain, name, k, 2, before)
			require.NoError(t, err)
			for _, e := range p.Entries {
				got = append(got, e.Seq)
			}
			if p.Next == "" {
				break
			}
			before = p.Next
		}
		require.Len(t, got, len(want), "%s history pages %s", name, k)

		e := effective(ls, k)
		l, err := f.r.Lineage(f.ctx, f.domain, name, k)
		if !e.Present {
			require.ErrorIs(t, err, store.ErrNotFound, "%s lineage %s", name, k)
			continue
		}
		require.NoError(t, err, "%s lineage %s", name, k)
		lin, created, versions := meta(ls, e)
		require.Equal(t, versions, l.Changes, "%s lineage %s", name, k)
		require.Equal(t, seqRev[created], l.Created.Revision, "%s lineage %s created", name, k)
		gotLin := map[string]int64{}
		for a, o := range l.Values {
			gotLin[a] = o.Seq
			require.Equal(t, seqRev[o.Seq], o.Revision)
		}
		require.Equal(t, lin, gotLin, "%s lineage %s", name, k)
	}
	// Neighborhoods against a breadth-first walk over the effective Links.
	links := presentLinks(ls)
	var edges []edge
	for k, o := range links {
		edges = append(edges, edge{k.Rel, k.From, k.To, map[byte]string{'l': "link", 'r': "ref"}[o]})
	}
	for _, start := range []string{"S-0", "S-1", "S-5", "P-01", "O-1", "P-07"} {
		if !effective(ls, start).Present {
			_, err := f.r.Neighborhood(f.ctx, f.domain, name, start, 2, 1000)
			require.ErrorIs(t, err, store.ErrNotFound)
			continue
		}
		for depth := 1; depth <= 3; depth++ {
			nb, err := f.r.Neighborhood(f.ctx, f.domain, name, start, depth, 1000)
			require.NoError(t, err)
			want := map[string]int{}
			for k, d := range bfs(edges, start, depth) {
				if effective(ls, k).Present {
					want[k] = d
				}
			}
			got := map[string]int{}
			for _, n := range nb.Records {
				got[n.Key] = n.Depth
			}
			require.Equal(t, want, got, "%s neighborhood %s %d", name, start, depth)
			// The Links the walk followed (an end nearer than depth)
			// between Records returned.
			nl := 0
			for _, e := range edges {
				df, okf := want[e.from]
				dt, okt := want[e.to]
				if okf && okt && min(df, dt) < depth {
					nl++
				}
			}
			require.Len(t, nb.Links, nl, "%s neighborhood links %s %d", name, start, depth)
		}
	}
}
