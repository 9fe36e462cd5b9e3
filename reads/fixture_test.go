package reads_test

import (
	"context"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// testSchema is the compiled schema the fixture writes: Supplier and Part,
// title "name", Part.note searchable, Part.maker a ref to a Supplier.
const testSchema = `{"kinds":{
 "Supplier":{"name":"Supplier","title":"name","attributes":[
   {"name":"name","type":"text","required":true,"search":true},
   {"name":"country","type":"text","indexed":true},
   {"name":"vat","type":"text","unique":true}]},
 "Part":{"name":"Part","title":"name","attributes":[
   {"name":"name","type":"text","required":true,"search":true},
   {"name":"note","type":"text","search":true},
   {"name":"maker","type":"ref","kind":"Supplier","indexed":true}]}},
 "relations":{"supplied_by":{"name":"supplied_by","from":"Part","to":"Supplier","cardinality":"many"}}}`

// change is one change the fixture materializes, following the data model
// of the commit pipeline (objects are not written: the reads do not read
// them).
type change struct {
	Op         string
	Kind       string
	Key        string
	Values     map[string]any
	Relation   string
	From, To   string
	Provenance string
}

func put(kind, key string, values map[string]any) change {
	return change{Op: "put", Kind: kind, Key: key, Values: values}
}
func patch(key string, values map[string]any) change {
	return change{Op: "patch", Key: key, Values: values}
}
func del(key string) change            { return change{Op: "delete", Key: key} }
func link(rel, from, to string) change { return change{Op: "link", Relation: rel, From: from, To: to} }
func unlink(rel, from, to string) change {
	return change{Op: "unlink", Relation: rel, From: from, To: to}
}

// fixture writes Revisions and the materialized head of one branch directly
// as the owner.
type fixture struct {
	t      testing.TB
	ctx    context.Context
	s      *store.Store
	r      *reads.Reader
	domain int32
	branch int32
	name   string
}

func newStore(t testing.TB) *store.Store {
	t.Helper()
	s, err := store.Open(context.Background(), pgtest.NewDatabase(t), store.Config{})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	return s
}

func newFixture(t testing.TB, s *store.Store, domain string) *fixture {
	t.Helper()
	ctx := context.Background()
	d, err := s.CreateDomain(ctx, domain)
	require.NoError(t, err)
	f := &fixture{t: t, ctx: ctx, s: s, r: reads.New(s, reads.Config{}), domain: d.ID, name: "main"}
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&f.branch))
	_, err = s.Pool.Exec(ctx, `UPDATE schemas SET compiled = $3 WHERE domain_id = $1 AND branch_id = $2`, d.ID, f.branch, testSchema)
	require.NoError(t, err)
	return f
}

type revInfo struct {
	ID     string
	Seq    int64
	Author string
}

// commit lands one Revision with the changes.
func (f *fixture) commit(author, provenance string, changes ...change) revInfo {
	f.t.Helper()
	var out revInfo
	err := pgx.BeginFunc(f.ctx, f.s.Pool, func(tx pgx.Tx) error {
		var head *string
		if err := tx.QueryRow(f.ctx, `SELECT head FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, f.domain, f.branch).Scan(&head); err != nil {
			return err
		}
		var seq int64
		if err := tx.QueryRow(f.ctx, `SELECT nextval('revision_seq')`).Scan(&seq); err != nil {
			return err
		}
		id := ulid.Make().String()
		parents := []string{}
		if head != nil {
			parents = append(parents, *head)
		}
		var js []map[string]any
		for _, c := range changes {
			m := map[string]any{"op": c.Op}
			for k, v := range map[string]string{"kind": c.Kind, "key": c.Key, "relation": c.Relation, "from": c.From, "to": c.To} {
				if v != "" {
					m[k] = v
				}
			}
			js = append(js, m)
		}
		hash := make([]byte, 32)
		_, _ = rand.Read(hash)
		var prov any
		if provenance != "" {
			prov = json.RawMessage(provenance)
		}
		if _, err := tx.Exec(f.ctx, `INSERT INTO revisions (domain_id, id, seq, branch_id, parents, author, message, hash, provenance, changes)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, f.domain, id, seq, f.branch, parents, author,
			"commit by "+author, hash, prov, js); err != nil {
			return err
		}
		for _, c := range changes {
			if err := f.apply(tx, seq, id, prov, c); err != nil {
				return fmt.Errorf("%s %s: %w", c.Op, c.Key, err)
			}
		}
		_, err := tx.Exec(f.ctx, `UPDATE refs SET head = $3, head_seq = $4 WHERE domain_id = $1 AND id = $2`, f.domain, f.branch, id, seq)
		out = revInfo{ID: id, Seq: seq, Author: author}
		return err
	})
	require.NoError(f.t, err)
	return out
}

func (f *fixture) apply(tx pgx.Tx, seq int64, rev string, commitProv any, c change) error {
	prov := commitProv
	if c.Provenance != "" {
		prov = json.RawMessage(c.Provenance)
	}
	switch c.Op {
	case "put", "patch":
		var old map[string]any
		var lineage map[string]int64
		var created int64
		var versions int
		var kind string
		err := tx.QueryRow(f.ctx, `SELECT kind, "values", lineage, created_seq, versions FROM mat_records
			WHERE domain_id = $1 AND branch_id = $2 AND key = $3`, f.domain, f.branch, c.Key).Scan(&kind, &old, &lineage, &created, &versions)
		exists := err == nil
		if err != nil && err != pgx.ErrNoRows {
			return err
		}
		if !exists {
			old, lineage, created, versions = map[string]any{}, map[string]int64{}, seq, 0
		}
		values := map[string]any{}
		if c.Op == "patch" {
			maps.Copy(values, old)
		} else {
			kind = c.Kind
		}
		for k, v := range c.Values {
			if v == nil {
				delete(values, k)
			} else {
				values[k] = v
			}
		}
		for k, v := range values {
			if ov, ok := old[k]; !ok || fmt.Sprint(ov) != fmt.Sprint(v) {
				lineage[k] = seq
			}
		}
		for k := range old {
			if _, ok := values[k]; !ok {
				lineage[k] = seq
			}
		}
		title, _ := values["name"].(string)
		note, _ := values["note"].(string)
		if _, err := tx.Exec(f.ctx, `INSERT INTO mat_records AS m (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq, versions)
			VALUES ($1, $2, $3, $4, $5, $6, setweight(to_tsvector('simple', $5), 'A') || setweight(to_tsvector('simple', $7::text), 'B'), $8, $9, $10, $11)
			ON CONFLICT (domain_id, branch_id, key) DO UPDATE SET kind = EXCLUDED.kind, title = EXCLUDED.title, "values" = EXCLUDED.values,
			  search = EXCLUDED.search, lineage = EXCLUDED.lineage, seq = EXCLUDED.seq, versions = EXCLUDED.versions`,
			f.domain, f.branch, c.Key, kind, title, values, note, lineage, created, seq, versions+1); err != nil {
			return err
		}
		if _, err := tx.Exec(f.ctx, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, "values", provenance)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, f.domain, f.branch, c.Key, seq, rev, c.Op, kind, title, values, prov); err != nil {
			return err
		}
		oldMaker, _ := old["maker"].(string)
		newMaker, _ := values["maker"].(string)
		if oldMaker != newMaker {
			if oldMaker != "" {
				if err := f.setLink(tx, seq, "maker", c.Key, oldMaker, 'r', false); err != nil {
					return err
				}
			}
			if newMaker != "" {
				if err := f.setLink(tx, seq, "maker", c.Key, newMaker, 'r', true); err != nil {
					return err
				}
			}
		}
	case "delete":
		var kind, title string
		var values map[string]any
		if err := tx.QueryRow(f.ctx, `DELETE FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = $3
			RETURNING kind, title, "values"`, f.domain, f.branch, c.Key).Scan(&kind, &title, &values); err != nil {
			return err
		}
		if _, err := tx.Exec(f.ctx, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, "values", provenance)
			VALUES ($1, $2, $3, $4, $5, 'delete', $6, $7, NULL, $8)`, f.domain, f.branch, c.Key, seq, rev, kind, title, prov); err != nil {
			return err
		}
		if m, _ := values["maker"].(string); m != "" {
			return f.setLink(tx, seq, "maker", c.Key, m, 'r', false)
		}
	case "link":
		return f.setLink(tx, seq, c.Relation, c.From, c.To, 'l', true)
	case "unlink":
		return f.setLink(tx, seq, c.Relation, c.From, c.To, 'l', false)
	}
	return nil
}

func (f *fixture) setLink(tx pgx.Tx, seq int64, rel, from, to string, origin byte, on bool) error {
	var err error
	op := "link"
	if on {
		_, err = tx.Exec(f.ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq)
			VALUES ($1, $2, $3, $4, $5, $6, $7)`, f.domain, f.branch, from, rel, to, string(origin), seq)
	} else {
		op = "unlink"
		_, err = tx.Exec(f.ctx, `DELETE FROM mat_links WHERE domain_id = $1 AND branch_id = $2 AND from_key = $3 AND relation = $4 AND to_key = $5`,
			f.domain, f.branch, from, rel, to)
	}
	if err != nil {
		return err
	}
	_, err = tx.Exec(f.ctx, `INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op, origin)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)`, f.domain, f.branch, from, rel, to, seq, op, string(origin))
	return err
}

// rows reads every row of a query as the owner (for independent checks).
func (f *fixture) strings(sql string, args ...any) []string {
	f.t.Helper()
	rows, err := f.s.Pool.Query(f.ctx, sql, args...)
	require.NoError(f.t, err)
	out, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(f.t, err)
	sort.Strings(out)
	return out
}

func joinKeys(recs []reads.Record) string {
	var ks []string
	for _, r := range recs {
		ks = append(ks, r.Key)
	}
	return strings.Join(ks, ",")
}
