package commit_test

import (
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/store"
)

// The foreign-key Links of the Records a commit puts or patches follow their
// ref values, whether the commit reads those Links (the schema has a required
// Relation) or takes them from the values it read (it has none), on main and
// on an overlay: a ref value kept writes no Link change, a ref value moved,
// set or dropped writes exactly its unlink and link, and a new ref value's
// target is checked.
func TestForeignKeyLinksFollowRefs(t *testing.T) {
	t.Parallel()
	noRequired := strings.Replace(supplySchema, `"cardinality": "one", "required": true}`, `"cardinality": "one"}`, 1)
	require.NotEqual(t, supplySchema, noRequired)
	start := []commit.Change{
		put("Supplier", "S-1", `{"name": "Acme"}`),
		put("Supplier", "S-2", `{"name": "Bolt"}`),
		put("Warehouse", "W-1", `{"name": "North"}`),
		put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1", "weight_kg": 1}`),
		put("Part", "P-2", `{"name": "Nut"}`),
	}
	startLinks := []string{"P-1 maker S-1 r"}
	cases := []struct {
		name    string
		changes []commit.Change
		links   []string // after the commit
		history []string // the commit's Link history rows
		problem string   // a problem code the commit is refused with
	}{
		{name: "put keeps the ref",
			changes: []commit.Change{put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1", "weight_kg": 2}`)},
			links:   startLinks},
		{name: "patch leaves the ref alone",
			changes: []commit.Change{patch("P-1", `{"weight_kg": 3}`)},
			links:   startLinks},
		{name: "patch sets the same ref",
			changes: []commit.Change{patch("P-1", `{"maker": "S-1"}`)},
			links:   startLinks},
		{name: "put moves the ref",
			changes: []commit.Change{put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-2"}`)},
			links:   []string{"P-1 maker S-2 r"},
			history: []string{"P-1 maker S-1 unlink", "P-1 maker S-2 link"}},
		{name: "put drops the ref",
			changes: []commit.Change{put("Part", "P-1", `{"name": "Hex bolt"}`)},
			history: []string{"P-1 maker S-1 unlink"}},
		{name: "patch sets a ref",
			changes: []commit.Change{patch("P-2", `{"maker": "S-2"}`)},
			links:   []string{"P-1 maker S-1 r", "P-2 maker S-2 r"},
			history: []string{"P-2 maker S-2 link"}},
		{name: "moved away and back in one commit",
			changes: []commit.Change{patch("P-1", `{"maker": "S-2"}`), patch("P-1", `{"maker": "S-1"}`)},
			links:   startLinks},
		{name: "a new ref to a missing Record",
			changes: []commit.Change{put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-404"}`)},
			problem: "unknown_ref"},
		{name: "a new ref to a Record of another Kind",
			changes: []commit.Change{patch("P-2", `{"maker": "W-1"}`)},
			problem: "ref_kind"},
		{name: "a kept ref to a Record the commit deletes",
			changes: []commit.Change{put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1", "weight_kg": 2}`), del("S-1")},
			problem: "still_linked"},
		{name: "a kept ref, its target put again",
			changes: []commit.Change{patch("P-1", `{"weight_kg": 4}`), put("Supplier", "S-1", `{"name": "Acme II"}`)},
			links:   startLinks},
		{name: "deleted and put again with the same ref",
			changes: []commit.Change{del("P-1"), put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1"}`)},
			links:   startLinks},
	}
	for _, sch := range []struct{ name, doc string }{{"required relation", supplySchema}, {"no required relation", noRequired}} {
		for _, branch := range []string{"main", "agent/1"} {
			for _, tc := range cases {
				t.Run(sch.name+"/"+branch+"/"+tc.name, func(t *testing.T) {
					t.Parallel()
					b := setup(t, commit.Config{})
					_, err := b.p.PutSchema(b.ctx, b.domain, "main", &commit.SchemaRequest{Document: json.RawMessage(sch.doc), Author: "test", Message: "schema"})
					require.NoError(t, err)
					b.commit(t, start...)
					if branch != "main" {
						noJobs := store.BranchJobs{Copy: func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil }}
						_, err := b.store.CreateBranch(b.ctx, b.domain, store.CreateBranchRequest{Name: branch, From: "main"}, noJobs)
						require.NoError(t, err)
					}
					res, err := b.p.Commit(b.ctx, b.domain, branch, req(tc.changes...), "")
					if tc.problem != "" {
						var ie *lberr.Error
						require.Truef(t, errors.As(err, &ie), "want *lberr.Error, got %v", err)
						var codes []string
						for _, p := range ie.Problems {
							codes = append(codes, p.Code)
						}
						require.Contains(t, codes, tc.problem)
						return
					}
					require.NoError(t, err)
					require.Equal(t, tc.links, branchLinks(t, b, branch))
					require.Equal(t, tc.history, linkHistory(t, b, res.Seq))
				})
			}
		}
	}
}

// branchLinks lists the present Links of a branch as lb_state_links reads
// them (an overlay's through its base).
func branchLinks(t *testing.T, b *bundle, branch string) []string {
	t.Helper()
	var out []string
	err := b.store.InDomain(b.ctx, b.domain, func(ctx context.Context, tx pgx.Tx) error {
		var id int32
		if err := tx.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = lb_domain() AND name = $1`, branch).Scan(&id); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, `SELECT from_key || ' ' || relation || ' ' || to_key || ' ' || origin::text
			FROM lb_state_links($1, ARRAY['P-1', 'P-2']) ORDER BY 1`, id)
		if err != nil {
			return err
		}
		out, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	})
	require.NoError(t, err)
	if len(out) == 0 {
		return nil
	}
	return out
}

// linkHistory lists the Link history rows a Revision wrote.
func linkHistory(t *testing.T, b *bundle, seq int64) []string {
	t.Helper()
	rows, err := b.store.Pool.Query(b.ctx, `SELECT from_key || ' ' || relation || ' ' || to_key || ' ' || op
		FROM mat_link_history WHERE domain_id = $1 AND seq = $2 ORDER BY 1`, b.domain, seq)
	require.NoError(t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	if len(out) == 0 {
		return nil
	}
	return out
}
