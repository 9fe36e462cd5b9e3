package merge_test

import (
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit/merge"
)

func TestMergeOverlayIntoMain(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.commit(t, "main", put("Supplier", "S-1", `{"name": "Acme", "country": "DE"}`),
		put("Part", "P-1", `{"name": "Bolt", "maker": "S-1"}`), lnk("supplied_by", "P-1", "S-1"))
	b.branch(t, "agent/a", "main", "overlay")
	b.commit(t, "agent/a", patch("S-1", `{"country": "FR"}`), put("Supplier", "S-2", `{"name": "Beta"}`),
		lnk("supplied_by", "P-1", "S-2"))
	b.commit(t, "main", patch("S-1", `{"vat": "DE1"}`))

	ins := b.inspect(t, "agent/a", "main")
	require.Empty(t, ins.Conflicts)
	require.True(t, ins.Mergeable)
	require.False(t, ins.FastForward)
	require.Equal(t, 1, ins.Summary.Records.Added)
	require.Equal(t, 1, ins.Summary.Records.Updated)
	require.Equal(t, 1, ins.Summary.Links.Added)

	res, err := b.merge(t, "agent/a", "main", nil, "")
	require.NoError(t, err)
	require.Len(t, res.Parents, 2)
	require.Equal(t, map[string]any{"name": "Acme", "country": "FR", "vat": "DE1"}, b.values(t, "main", "S-1"))
	require.Equal(t, "Beta", b.values(t, "main", "S-2")["name"])
	require.True(t, b.linked(t, "main", "P-1", "supplied_by", "S-2"))
	require.True(t, b.linked(t, "main", "P-1", "supplied_by", "S-1"))

	// Merged again: nothing new.
	res, err = b.merge(t, "agent/a", "main", nil, "")
	require.NoError(t, err)
	require.True(t, res.UpToDate)

	// The branch goes on; only its new changes merge, and main's vat
	// (merged into main after the fork) is not reverted.
	b.commit(t, "agent/a", patch("S-2", `{"country": "SE"}`))
	ins = b.inspect(t, "agent/a", "main")
	require.Equal(t, 1, ins.Summary.Records.Updated)
	require.Equal(t, 0, ins.Summary.Records.Added)
	res, err = b.merge(t, "agent/a", "main", nil, "")
	require.NoError(t, err)
	require.False(t, res.UpToDate)
	require.Equal(t, map[string]any{"name": "Acme", "country": "FR", "vat": "DE1"}, b.values(t, "main", "S-1"))
	require.Equal(t, "SE", b.values(t, "main", "S-2")["country"])

	// main's vat reaches the branch when the branch is brought up to date.
	require.Nil(t, b.values(t, "agent/a", "S-1")["vat"])
	_, err = b.merge(t, "main", "agent/a", nil, "")
	require.NoError(t, err)
	require.Equal(t, "DE1", b.values(t, "agent/a", "S-1")["vat"])
}

func TestAttributeConflictResolved(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.commit(t, "main", put("Supplier", "S-1", `{"name": "Acme", "country": "DE"}`))
	b.branch(t, "agent/a", "main", "overlay")
	b.commit(t, "agent/a", patch("S-1", `{"country": "FR"}`))
	b.commit(t, "main", patch("S-1", `{"country": "NL"}`))

	_, err := b.merge(t, "agent/a", "main", nil, "")
	var ce *merge.ConflictsError
	require.True(t, errors.As(err, &ce), "got %v", err)
	require.Len(t, ce.Conflicts, 1)
	c := ce.Conflicts[0]
	require.Equal(t, merge.CodeAttribute, c.Code)
	require.Equal(t, "country", c.Attribute)
	require.Equal(t, "DE", c.Base.Value)
	require.Equal(t, "NL", c.Target.Value)
	require.Equal(t, "FR", c.Source.Value)
	require.NotEmpty(t, c.Source.Revision)
	require.Equal(t, "agent:agent/a", c.Source.Author)

	_, err = b.merge(t, "agent/a", "main", map[string]merge.Resolution{c.ID: {Choice: "source", Fingerprint: c.Fingerprint}}, "")
	require.NoError(t, err)
	require.Equal(t, "FR", b.values(t, "main", "S-1")["country"])
}

// A branch of a branch merges into its grandparent with the middle
// branch's changes up to the fork, and into its parent with its own.
func TestBranchOfBranch(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.commit(t, "main", put("Supplier", "S-1", `{"name": "Acme", "country": "DE"}`))
	b.branch(t, "agent/a", "main", "copy")
	b.commit(t, "agent/a", put("Supplier", "S-2", `{"name": "Mid"}`))
	b.branch(t, "agent/a/sub", "agent/a", "overlay")
	b.commit(t, "agent/a/sub", patch("S-1", `{"country": "FR"}`))
	b.commit(t, "agent/a", put("Supplier", "S-3", `{"name": "After the fork"}`))
	b.commit(t, "main", patch("S-1", `{"name": "Acme AG"}`))

	d, err := b.e.DiffBranches(b.ctx, b.domain, "agent/a/sub", "main", "", 10)
	require.NoError(t, err)
	require.Equal(t, 1, d.Summary.Records.Added)   // S-2 from the middle branch
	require.Equal(t, 1, d.Summary.Records.Updated) // S-1
	_, err = b.merge(t, "agent/a/sub", "main", nil, "")
	require.NoError(t, err)
	require.Equal(t, map[string]any{"name": "Acme AG", "country": "FR"}, b.values(t, "main", "S-1"))
	require.NotNil(t, b.values(t, "main", "S-2"))
	require.Nil(t, b.values(t, "main", "S-3"), "the middle branch's changes after the fork stay there")

	d, err = b.e.DiffBranches(b.ctx, b.domain, "agent/a/sub", "agent/a", "", 10)
	require.NoError(t, err)
	require.Equal(t, 1, d.Summary.Records.Updated)
	require.Equal(t, 0, d.Summary.Records.Added)
}

func TestDiffOfTwoRevisions(t *testing.T) {
	t.Parallel()
	b := setup(t)
	r1 := b.commit(t, "main", put("Supplier", "S-1", `{"name": "Acme", "country": "DE"}`), put("Supplier", "S-2", `{"name": "B"}`))
	r2 := b.commit(t, "main", patch("S-1", `{"country": "FR"}`), del("S-2"), put("Supplier", "S-3", `{"name": "C"}`))
	b.commit(t, "main", patch("S-1", `{"country": "NL"}`))
	d, err := b.e.DiffRevisions(b.ctx, b.domain, "main", r1.Revision, r2.Revision, "", 10)
	require.NoError(t, err)
	require.Equal(t, 1, d.Summary.Records.Added)
	require.Equal(t, 1, d.Summary.Records.Updated)
	require.Equal(t, 1, d.Summary.Records.Removed)
	require.Equal(t, "S-1", d.Changes[0].Key)
	require.Equal(t, []merge.AttributeChange{{Name: "country", Before: "DE", After: "FR"}}, d.Changes[0].Attributes)
	_, err = b.e.DiffRevisions(b.ctx, b.domain, "main", r2.Revision, r1.Revision, "", 10)
	require.Error(t, err)
}
