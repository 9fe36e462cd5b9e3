package commit_test

import (
	"bytes"
	"cmp"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/store"
)

// TestCommitWritesRowsInKeyOrder: a commit whose changes come in no order
// writes each set's rows in the order of the set's primary key: the
// Records and their history by key, the Links and the Link history by
// their from end, Relation and to end, the objects by hash.
func TestCommitWritesRowsInKeyOrder(t *testing.T) {
	t.Parallel()
	trace := &batchStatements{}
	// Sets passed as arrays (below the COPY threshold), whose order the
	// statement's arguments show.
	b := setupStore(t, commit.Config{CopyThresholdRows: 10000}, store.Config{Tracer: trace})
	rng := rand.New(rand.NewPCG(7, 9))
	var cs []commit.Change
	for i := range 6 {
		cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i), fmt.Sprintf(`{"name": "Supplier %d"}`, i)))
	}
	for i := range 40 {
		cs = append(cs, put("Part", fmt.Sprintf("P-%d", i), fmt.Sprintf(`{"name": "Part %d", "maker": "S-%d"}`, i, i%6)))
	}
	for i := range 40 {
		for _, s := range rng.Perm(6)[:3] {
			cs = append(cs, lnk("supplied_by", fmt.Sprintf("P-%d", i), fmt.Sprintf("S-%d", s)))
		}
	}
	rng.Shuffle(len(cs), func(i, j int) { cs[i], cs[j] = cs[j], cs[i] })
	// The shuffled changes put the Records after Links that name them: the
	// puts go first, in their shuffled order.
	rank := func(c commit.Change) int {
		if c.Op == "put" {
			return 0
		}
		return 1
	}
	slices.SortStableFunc(cs, func(a, b commit.Change) int { return cmp.Compare(rank(a), rank(b)) })
	trace.record(true)
	b.commit(t, cs...)
	trace.record(false)

	sortedText := func(what string, col any) {
		t.Helper()
		keys, ok := col.([]string)
		require.True(t, ok, "%s: %T", what, col)
		require.Len(t, keys, 46, what)
		require.True(t, slices.IsSorted(keys), "%s in key order: %v", what, keys)
	}
	// The Records and the history take the seq (and the Revision id) first.
	sortedText("Records", trace.args(t, "INSERT INTO mat_records")[1])
	sortedText("history", trace.args(t, "INSERT INTO mat_history")[2])
	for _, stmt := range []string{"INSERT INTO mat_links", "INSERT INTO mat_link_history"} {
		a := trace.args(t, stmt)
		from, rel, to := a[1].([]string), a[2].([]string), a[3].([]string)
		require.Len(t, from, 40*4, stmt) // three Links and a maker ref a Part
		tuples := make([]string, len(from))
		for i := range from {
			tuples[i] = from[i] + "\x00" + rel[i] + "\x00" + to[i]
		}
		require.True(t, slices.IsSorted(tuples), "%s in key order", stmt)
	}
	hashes := trace.args(t, "INSERT INTO objects")[0].([][]byte)
	require.Len(t, hashes, len(cs))
	require.True(t, slices.IsSortedFunc(hashes, bytes.Compare), "objects in hash order")

	// The rows written are the commit's.
	require.Len(t, b.links(t), 40*4)
	for i := range 40 {
		r := b.record(t, fmt.Sprintf("P-%d", i))
		require.NotNil(t, r)
		require.Equal(t, fmt.Sprintf("Part %d", i), r.Values["name"])
	}
}
