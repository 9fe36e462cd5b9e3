package commit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

const supplySchema = `{"kinds": [
 {"name": "Supplier", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true, "search": true},
   {"name": "vat", "type": "text", "unique": true},
   {"name": "country", "type": "text", "indexed": true},
   {"name": "tier", "type": "enum", "values": ["gold", "silver"]}]},
 {"name": "Part", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true, "search": true},
   {"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true},
   {"name": "weight_kg", "type": "number"},
   {"name": "sku", "type": "integer", "unique": true}]},
 {"name": "Warehouse", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true}]},
 {"name": "Order", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true}]}],
 "relations": [
 {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many", "inverse": "supplies"},
 {"name": "stocked_at", "from": "Part", "to": "Warehouse", "cardinality": "one"},
 {"name": "for_part", "from": "Order", "to": "Part", "cardinality": "one", "required": true}]}`

type bundle struct {
	ctx    context.Context
	store  *store.Store
	p      *commit.Pipeline
	domain int32
}

func setup(t testing.TB, cfg commit.Config) *bundle {
	t.Helper()
	return setupConns(t, cfg, 16)
}

// setupConns is setup with a pool of at most conns connections.
func setupConns(t testing.TB, cfg commit.Config, conns int32) *bundle {
	t.Helper()
	return setupStore(t, cfg, store.Config{MaxConns: conns})
}

// setupStore is setup with the store opened with sc.
func setupStore(t testing.TB, cfg commit.Config, sc store.Config) *bundle {
	t.Helper()
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	s, err := store.Open(ctx, url, sc)
	require.NoError(t, err)
	t.Cleanup(s.Close)
	d, err := s.CreateDomain(ctx, "supply")
	require.NoError(t, err)
	b := &bundle{ctx: ctx, store: s, p: commit.New(s, cfg), domain: d.ID}
	_, err = b.p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
	require.NoError(t, err)
	return b
}

func put(kind, key string, values string) commit.Change {
	return commit.Change{Op: "put", Kind: kind, Key: key, Values: json.RawMessage(values)}
}

func patch(key string, values string) commit.Change {
	return commit.Change{Op: "patch", Key: key, Values: json.RawMessage(values)}
}

func del(key string) commit.Change { return commit.Change{Op: "delete", Key: key} }

func lnk(rel, from, to string) commit.Change {
	return commit.Change{Op: "link", Relation: rel, From: from, To: to}
}

func unlnk(rel, from, to string) commit.Change {
	return commit.Change{Op: "unlink", Relation: rel, From: from, To: to}
}

func req(changes ...commit.Change) *commit.Request {
	return &commit.Request{Message: "m", Author: "a", Changes: changes}
}

func (b *bundle) commit(t testing.TB, changes ...commit.Change) *commit.Result {
	t.Helper()
	res, err := b.p.Commit(b.ctx, b.domain, "main", req(changes...), "")
	require.NoError(t, err)
	return res
}

// invalid commits and returns the *lberr.Error it must fail with.
func (b *bundle) invalid(t testing.TB, r *commit.Request) *lberr.Error {
	t.Helper()
	_, err := b.p.Commit(b.ctx, b.domain, "main", r, "")
	var inv *lberr.Error
	require.Truef(t, errors.As(err, &inv), "want *lberr.Error, got %v", err)
	return inv
}

// counts returns the Domain's row counts per table and the head of main.
func (b *bundle) counts(t testing.TB) map[string]string {
	t.Helper()
	out := map[string]string{}
	for _, tbl := range []string{"revisions", "objects", "mat_records", "mat_links", "mat_history", "mat_link_history", "idempotency_keys"} {
		var n int
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT count(*) FROM `+tbl+` WHERE domain_id = $1`, b.domain).Scan(&n))
		out[tbl] = fmt.Sprint(n)
	}
	var head *string
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT head FROM refs WHERE domain_id = $1 AND name = 'main'`, b.domain).Scan(&head))
	if head != nil {
		out["head"] = *head
	}
	return out
}

type recRow struct {
	Kind       string
	Title      string
	Values     map[string]any
	Lineage    map[string]int64
	CreatedSeq int64
	Seq        int64
	Versions   int
	Search     string
}

func (b *bundle) record(t testing.TB, key string) *recRow {
	t.Helper()
	var r recRow
	var vals, lin []byte
	err := b.store.Pool.QueryRow(b.ctx, `SELECT kind, title, values, lineage, created_seq, seq, versions, search::text
		FROM mat_records WHERE domain_id = $1 AND key = $2 AND NOT deleted`, b.domain, key).
		Scan(&r.Kind, &r.Title, &vals, &lin, &r.CreatedSeq, &r.Seq, &r.Versions, &r.Search)
	if err != nil {
		return nil
	}
	require.NoError(t, json.Unmarshal(vals, &r.Values))
	require.NoError(t, json.Unmarshal(lin, &r.Lineage))
	return &r
}

func (b *bundle) links(t testing.TB) []string {
	t.Helper()
	rows, err := b.store.Pool.Query(b.ctx, `SELECT from_key || ' ' || relation || ' ' || to_key || ' ' || origin::text
		FROM mat_links WHERE domain_id = $1 AND NOT deleted ORDER BY 1`, b.domain)
	require.NoError(t, err)
	var out []string
	for rows.Next() {
		var s string
		require.NoError(t, rows.Scan(&s))
		out = append(out, s)
	}
	require.NoError(t, rows.Err())
	return out
}

// autoExplain is pgtest.AutoExplain on b's pool (the owner's).
func autoExplain(t testing.TB, b *bundle, analyze bool) (conn *pgx.Conn, plans func() []string) {
	t.Helper()
	return pgtest.AutoExplain(t, b.store.Pool, analyze)
}
