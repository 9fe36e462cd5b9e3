package merge_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const supplySchema = `{"kinds": [
 {"name": "Supplier", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true, "search": true},
   {"name": "vat", "type": "text", "unique": true},
   {"name": "country", "type": "text", "indexed": true}]},
 {"name": "Part", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true, "search": true},
   {"name": "maker", "type": "ref", "kind": "Supplier"},
   {"name": "weight_kg", "type": "number"}]},
 {"name": "Warehouse", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true}]},
 {"name": "Order", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true}]}],
 "relations": [
 {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many", "inverse": "supplies"},
 {"name": "stocked_at", "from": "Part", "to": "Warehouse", "cardinality": "one"},
 {"name": "for_part", "from": "Order", "to": "Part", "cardinality": "one", "required": true},
 {"name": "sourced_from", "from": "Order", "to": "Supplier", "cardinality": "many", "required": true}]}`

type bundle struct {
	ctx    context.Context
	store  *store.Store
	p      *commit.Pipeline
	e      *merge.Engine
	domain int32
}

func setup(t testing.TB) *bundle {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s, err := store.Open(ctx, url, store.Config{MaxConns: 16})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	d, err := s.CreateDomain(ctx, "supply")
	require.NoError(t, err)
	p := commit.New(s, commit.Config{})
	b := &bundle{ctx: ctx, store: s, p: p, e: merge.New(s, p), domain: d.ID}
	_, err = p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
	require.NoError(t, err)
	return b
}

// branch forks name from `from`; a copy is copied at once.
func (b *bundle) branch(t testing.TB, name, from, mode string) {
	t.Helper()
	noJobs := store.BranchJobs{Copy: func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil }}
	info, err := b.store.CreateBranch(b.ctx, b.domain, store.CreateBranchRequest{Name: name, From: from, Mode: mode}, noJobs)
	require.NoError(t, err)
	if mode == store.ModeCopy {
		c := &jobs.Copier{Store: b.store, BatchRows: 50}
		require.NoError(t, c.Run(b.ctx, jobs.MaterializeArgs{DomainID: b.domain, BranchID: info.ID}))
	}
}

func put(kind, key, values string) commit.Change {
	return commit.Change{Op: "put", Kind: kind, Key: key, Values: json.RawMessage(values)}
}

func patch(key, values string) commit.Change {
	return commit.Change{Op: "patch", Key: key, Values: json.RawMessage(values)}
}

func del(key string) commit.Change { return commit.Change{Op: "delete", Key: key} }

func lnk(rel, from, to string) commit.Change {
	return commit.Change{Op: "link", Relation: rel, From: from, To: to}
}

func unlnk(rel, from, to string) commit.Change {
	return commit.Change{Op: "unlink", Relation: rel, From: from, To: to}
}

func (b *bundle) commit(t testing.TB, branch string, changes ...commit.Change) *commit.Result {
	t.Helper()
	res, err := b.p.Commit(b.ctx, b.domain, branch, &commit.Request{Message: "m", Author: "agent:" + branch, Changes: changes}, "")
	require.NoError(t, err)
	return res
}

// values reads a Record's values at a branch head (nil: absent).
func (b *bundle) values(t testing.TB, branch, key string) map[string]any {
	t.Helper()
	var out map[string]any
	err := b.store.InDomain(b.ctx, b.domain, func(ctx context.Context, tx pgx.Tx) error {
		br, err := store.ReadBranch(ctx, tx, branch)
		if err != nil {
			return err
		}
		var raw []byte
		err = tx.QueryRow(ctx, `SELECT values FROM lb_merge_records($1, NULL, ARRAY[$2])`, br.ID, key).Scan(&raw)
		if err == pgx.ErrNoRows {
			return nil
		}
		if err != nil {
			return err
		}
		return json.Unmarshal(raw, &out)
	})
	require.NoError(t, err)
	return out
}

// linked reports whether a stored Link is present at a branch head.
func (b *bundle) linked(t testing.TB, branch, from, rel, to string) bool {
	t.Helper()
	var n int
	err := b.store.InDomain(b.ctx, b.domain, func(ctx context.Context, tx pgx.Tx) error {
		br, err := store.ReadBranch(ctx, tx, branch)
		if err != nil {
			return err
		}
		return tx.QueryRow(ctx, `SELECT count(*) FROM lb_merge_links($1, NULL, ARRAY[$2], ARRAY[$3], ARRAY[$4])`, br.ID, from, rel, to).Scan(&n)
	})
	require.NoError(t, err)
	return n == 1
}

func (b *bundle) merge(t testing.TB, source, target string, res map[string]merge.Resolution, def string) (*merge.Result, error) {
	t.Helper()
	return b.e.Merge(b.ctx, b.domain, &merge.Request{Source: source, Target: target, Author: "reviewer", Resolutions: res, Default: def})
}

func (b *bundle) inspect(t testing.TB, source, target string) *merge.Inspection {
	t.Helper()
	ins, err := b.e.Inspect(b.ctx, b.domain, &merge.Request{Source: source, Target: target, Author: "reviewer"})
	require.NoError(t, err)
	return ins
}

// head is a branch's head ("" for none).
func (b *bundle) head(t testing.TB, branch string) string {
	t.Helper()
	var h *string
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT head FROM refs WHERE domain_id = $1 AND name = $2`, b.domain, branch).Scan(&h))
	if h == nil {
		return ""
	}
	return *h
}
