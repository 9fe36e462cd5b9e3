package reads_test

import (
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/store"
)

// TestGetReadsTheHead: a get by key under store.WithHead answers exactly
// what it answers without (Record or error) on every kind of branch (main,
// overlays, a copy still copying), for Records present, deleted, revived
// and missing, and reports the branch's id and head as the owner sees them
// in refs, in the same statement (no statement of its own). Another
// Domain's branch of the same name is not found, and its head is not
// reported.
func TestGetReadsTheHead(t *testing.T) {
	t.Parallel()
	f := branchWorld(t)
	other := newFixture(t, f.s, "other")
	other.commit("zed", "", put("Supplier", "S-1", map[string]any{"name": "Other supplier"}))
	keys := []string{"S-0", "S-1", "S-2", "S-4", "P-01", "P-02", "P-03", "P-06", "P-13", "P-20", "O-1", "O-2", "missing"}
	type head struct {
		found bool
		id    int32
		seq   int64
	}
	for _, tc := range []struct {
		name   string
		domain int32
		branch string
		want   func() head
	}{
		{"main", f.domain, "main", nil},
		{"overlay", f.domain, "ov", nil},
		{"overlay of an overlay", f.domain, "ov2", nil},
		{"copy still copying", f.domain, "cp", nil},
		{"no such branch", f.domain, "nobranch", func() head { return head{} }},
		{"the other Domain's main", other.domain, "main", nil},
		{"an overlay of the first Domain, from the other", other.domain, "ov", func() head { return head{} }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			want := head{}
			if tc.want == nil {
				want.found = true
				require.NoError(t, f.s.Pool.QueryRow(f.ctx, `SELECT id, head_seq FROM refs WHERE domain_id = $1 AND name = $2`,
					tc.domain, tc.branch).Scan(&want.id, &want.seq))
			}
			for _, key := range keys {
				plain, plainErr := f.r.Get(f.ctx, tc.domain, tc.branch, key, "")
				ctx, h := store.WithHead(f.ctx, tc.branch)
				got, err := f.r.Get(ctx, tc.domain, tc.branch, key, "")
				require.Equal(t, plain, got, key)
				if plainErr != nil {
					require.EqualError(t, err, plainErr.Error(), key)
				} else {
					require.NoError(t, err, key)
				}
				read, found, id, seq := h.Result()
				if err == nil || found {
					require.True(t, read, key)
				}
				require.Equal(t, want, head{found, id, seq}, key)
			}
		})
	}
}
