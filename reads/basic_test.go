package reads_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

func TestGetPageRevisions(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "acme")
	r1 := f.commit("alice", `{"source":"a"}`,
		put("Supplier", "S-1", map[string]any{"name": "Acme", "country": "DE"}),
		put("Supplier", "S-2", map[string]any{"name": "Bolt Co", "country": "FR"}),
		put("Part", "P-1", map[string]any{"name": "Hex bolt", "maker": "S-1"}))
	r2 := f.commit("bob", "", patch("S-1", map[string]any{"country": "AT"}), del("S-2"))
	r3 := f.commit("carol", "", put("Supplier", "S-3", map[string]any{"name": "Cog"}))

	// Head.
	got, err := f.r.Get(f.ctx, f.domain, "main", "S-1", "")
	require.NoError(t, err)
	require.Equal(t, "Supplier", got.Kind)
	require.Equal(t, "Acme", got.Title)
	require.Equal(t, r2.ID, got.Revision)
	require.JSONEq(t, `{"name":"Acme","country":"AT"}`, string(got.Values))
	_, err = f.r.Get(f.ctx, f.domain, "main", "S-2", "")
	require.ErrorIs(t, err, store.ErrNotFound)

	// At an earlier Revision: the old state, the deleted Record present,
	// the later Record absent.
	got, err = f.r.Get(f.ctx, f.domain, "main", "S-1", r1.ID)
	require.NoError(t, err)
	require.Equal(t, r1.ID, got.Revision)
	require.JSONEq(t, `{"name":"Acme","country":"DE"}`, string(got.Values))
	_, err = f.r.Get(f.ctx, f.domain, "main", "S-2", r1.ID)
	require.NoError(t, err)
	_, err = f.r.Get(f.ctx, f.domain, "main", "S-3", r2.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = f.r.Get(f.ctx, f.domain, "main", "S-1", "01NOSUCHREVISION0000000000")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = f.r.Get(f.ctx, f.domain, "nope", "S-1", "")
	require.ErrorIs(t, err, store.ErrNotFound)

	// Pages.
	p, err := f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Supplier", Limit: 1})
	require.NoError(t, err)
	require.Equal(t, "S-1", joinKeys(p.Records))
	require.Equal(t, "S-1", p.Next)
	p, err = f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Supplier", Limit: 1, After: p.Next})
	require.NoError(t, err)
	require.Equal(t, "S-3", joinKeys(p.Records))
	require.Empty(t, p.Next)
	p, err = f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{})
	require.NoError(t, err)
	require.Equal(t, "P-1,S-1,S-3", joinKeys(p.Records))
	require.Nil(t, p.Count, "no count unless asked")

	// Counts: of the listing (a Kind, all, as of a Revision), whatever the
	// page; beyond the cap, the cap and not exact.
	capped := reads.New(f.s, reads.Config{CountCap: 2})
	for _, c := range []struct {
		r    *reads.Reader
		q    reads.PageQuery
		want reads.RecordCount
	}{
		{f.r, reads.PageQuery{Kind: "Supplier", Limit: 1, Count: true}, reads.RecordCount{Records: 2, Exact: true}},
		{f.r, reads.PageQuery{Kind: "Supplier", Limit: 1, After: "S-1", Count: true}, reads.RecordCount{Records: 2, Exact: true}},
		{f.r, reads.PageQuery{Count: true}, reads.RecordCount{Records: 3, Exact: true}},
		{f.r, reads.PageQuery{Kind: "Supplier", At: r1.ID, Count: true}, reads.RecordCount{Records: 2, Exact: true}},
		{f.r, reads.PageQuery{Kind: "Part", At: r3.ID, Count: true}, reads.RecordCount{Records: 1, Exact: true}},
		{f.r, reads.PageQuery{Kind: "Nothing", Count: true}, reads.RecordCount{Records: 0, Exact: true}},
		{capped, reads.PageQuery{Count: true}, reads.RecordCount{Records: 2, Exact: false}},
		{capped, reads.PageQuery{Kind: "Supplier", Count: true}, reads.RecordCount{Records: 2, Exact: true}},
	} {
		p, err := c.r.Page(f.ctx, f.domain, "main", c.q)
		require.NoError(t, err)
		require.Equal(t, &c.want, p.Count, "%+v", c.q)
	}
	p, err = f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Supplier", At: r1.ID})
	require.NoError(t, err)
	require.Equal(t, "S-1,S-2", joinKeys(p.Records))
	require.Equal(t, r1.ID, p.Records[0].Revision)
	p, err = f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Supplier", At: r2.ID, Limit: 1})
	require.NoError(t, err)
	require.Equal(t, "S-1", joinKeys(p.Records))
	require.Empty(t, p.Next, "S-2 was deleted at r2 and S-3 did not exist yet")
	p, err = f.r.Page(f.ctx, f.domain, "main", reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: "AT"})
	require.NoError(t, err)
	require.Equal(t, "S-1", joinKeys(p.Records))

	// Log.
	log, err := f.r.Revisions(f.ctx, f.domain, "main", 2, "")
	require.NoError(t, err)
	require.Len(t, log.Revisions, 2)
	require.Equal(t, r3.ID, log.Revisions[0].ID)
	require.Equal(t, []string{r2.ID}, log.Revisions[0].Parents)
	require.Equal(t, r2.ID, log.Next)
	log, err = f.r.Revisions(f.ctx, f.domain, "main", 2, log.Next)
	require.NoError(t, err)
	require.Len(t, log.Revisions, 1)
	require.Equal(t, r1.ID, log.Revisions[0].ID)
	require.Equal(t, []string{}, log.Revisions[0].Parents)
	require.Empty(t, log.Next)
	_, err = f.r.Revisions(f.ctx, f.domain, "nope", 2, "")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = f.r.Revisions(f.ctx, f.domain, "main", 2, "01NOSUCHREVISION0000000000")
	require.ErrorIs(t, err, store.ErrNotFound)

	rev, err := f.r.Revision(f.ctx, f.domain, r1.ID, 0, "")
	require.NoError(t, err)
	require.Equal(t, "main", rev.Branch)
	require.Equal(t, "alice", rev.Author)
	require.Len(t, rev.Hash, 64)
	var changes []map[string]any
	require.NoError(t, json.Unmarshal(rev.Changes, &changes))
	require.Len(t, changes, 3)
	require.JSONEq(t, `{"source":"a"}`, string(rev.Provenance))
	_, err = f.r.Revision(f.ctx, f.domain, "01NOSUCHREVISION0000000000", 0, "")
	require.ErrorIs(t, err, store.ErrNotFound)

	// Another Domain sees none of it.
	g := newFixture(t, s, "other")
	_, err = g.r.Get(g.ctx, g.domain, "main", "S-1", "")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = g.r.Revision(g.ctx, g.domain, r1.ID, 0, "")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = g.r.Get(g.ctx, g.domain, "main", "S-1", r1.ID)
	require.ErrorIs(t, err, store.ErrNotFound)
}
