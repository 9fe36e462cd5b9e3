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

// wordParts returns n Part puts whose name and note hold the words
// words(i) gives the i-th: the name ending in "part", the note in tail
// when tail is set. The i-th is keyed P-<(i*37) mod n>, zero-padded to
// n-1's digits, so that key order is not the order of i.
func wordParts(n int, tail string, words func(i int) (name, note []string)) []change {
	width := len(fmt.Sprint(n - 1))
	out := make([]change, 0, n)
	for i := range n {
		name, note := words(i)
		if tail != "" {
			note = append(note, tail)
		}
		out = append(out, put("Part", fmt.Sprintf("P-%0*d", width, (i*37)%n), map[string]any{
			"name": strings.Join(append(name, "part"), " "), "note": strings.Join(note, " ")}))
	}
	return out
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

// fixture writes Revisions and the materialized state of branches directly
// as the owner, following the data model and the branch design
// (tombstones on every branch, overlays reading through their base), and
// keeps the same rows in a Go model (model_test.go).
type fixture struct {
	t      testing.TB
	ctx    context.Context
	s      *store.Store
	r      *reads.Reader
	domain int32
	branch int32
	name   string
	m      map[string]*branchModel
	revs   map[string]revInfo
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
	f := &fixture{t: t, ctx: ctx, s: s, r: reads.New(s, reads.Config{}), domain: d.ID, name: "main",
		m: map[string]*branchModel{}, revs: map[string]revInfo{}}
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&f.branch))
	_, err = s.Pool.Exec(ctx, `UPDATE schemas SET compiled = $3 WHERE domain_id = $1 AND branch_id = $2`, d.ID, f.branch, testSchema)
	require.NoError(t, err)
	// The fixture writes rows in SQL, not through the commit pipeline that
	// keeps the Record counters: its branches keep none, and their counts
	// are the reads' walk (internal/keeper tests the counters).
	_, err = s.Pool.Exec(ctx, `UPDATE refs SET counts_from = NULL WHERE domain_id = $1`, d.ID)
	require.NoError(t, err)
	f.m["main"] = newBranchModel(f.branch, "main")
	return f
}

// keepCounters gives the fixture's branch the Record counters the commit
// pipeline keeps (its own commits keep none), counted from its rows now:
// the search's choice of path reads them.
func (f *fixture) keepCounters() {
	f.t.Helper()
	_, err := f.s.Pool.Exec(f.ctx, `WITH c AS (
		INSERT INTO mat_counts (domain_id, branch_id, kind, records)
		SELECT domain_id, branch_id, kind, count(*) FROM mat_records
		 WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted GROUP BY 1, 2, 3)
		UPDATE refs SET counts_from = head_seq WHERE domain_id = $1 AND id = $2`, f.domain, f.branch)
	require.NoError(f.t, err)
}

// on is the fixture writing to another branch of the Domain.
func (f *fixture) on(name string) *fixture {
	g := *f
	b, ok := f.m[name]
	require.True(f.t, ok, name)
	g.name, g.branch = name, b.ID
	return &g
}

func (f *fixture) model() *branchModel { return f.m[f.name] }

// fork creates a branch based on f's branch as of at (its head when at is
// the zero revInfo), as the branch design does: mode overlay, or mode copy
// in state copying; the base's schema row is copied.
func (f *fixture) fork(name, mode string, at revInfo) *fixture {
	f.t.Helper()
	base := f.model()
	forkSeq := base.Head
	var forkRev *string
	if at.ID != "" {
		forkSeq = at.Seq
	}
	if forkSeq > 0 {
		var id string
		require.NoError(f.t, f.s.Pool.QueryRow(f.ctx, `SELECT id FROM revisions WHERE domain_id = $1 AND seq = $2`, f.domain, forkSeq).Scan(&id))
		forkRev = &id
	}
	state := "ready"
	if mode == "copy" {
		state = "copying"
	}
	var id int32
	require.NoError(f.t, f.s.Pool.QueryRow(f.ctx, `INSERT INTO refs (domain_id, name, mode, state, base_id, fork_seq, fork_revision, head, head_seq)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $7, $6) RETURNING id`, f.domain, name, mode, state, f.branch, forkSeq, forkRev).Scan(&id))
	_, err := f.s.Pool.Exec(f.ctx, `INSERT INTO schemas (domain_id, branch_id, seq, document, compiled)
		SELECT domain_id, $3, seq, document, compiled FROM schemas WHERE domain_id = $1 AND branch_id = $2`, f.domain, f.branch, id)
	require.NoError(f.t, err)
	b := newBranchModel(id, name)
	b.Mode, b.State, b.Base, b.ForkSeq, b.Head = mode, state, base, forkSeq, forkSeq
	f.m[name] = b
	return f.on(name)
}

// materialize copies the effective Records among keys (and their outgoing
// Links) of a copy's base as of the fork into the copy, as the
// store.materialize job does batch by batch (ON CONFLICT DO NOTHING).
func (f *fixture) materialize(keys ...string) {
	if len(keys) == 0 {
		keys = allKeys(levels(f.model().Base, f.model().ForkSeq, false))
	}
	f.t.Helper()
	b := f.model()
	ls := levels(b.Base, b.ForkSeq, false)
	for _, k := range keys {
		e := effective(ls, k)
		if !e.Present {
			continue
		}
		if _, own := b.Recs[k]; own {
			continue
		}
		lin, created, versions := meta(ls, e)
		row := &recRow{Kind: e.Kind, Title: e.Title, Values: cloneValues(e.Values), Lineage: maps.Clone(lin), Created: created,
			Seq: e.Seq, Versions: versions}
		_, err := f.s.Pool.Exec(f.ctx, `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq, versions)
			VALUES ($1, $2, $3, $4, $5, $6, `+searchExpr+`, $8, $9, $10, $11) ON CONFLICT DO NOTHING`,
			f.domain, f.branch, k, row.Kind, row.Title, row.Values, noteOf(row.Kind, row.Values), row.Lineage, row.Created, row.Seq, row.Versions)
		require.NoError(f.t, err)
		b.Recs[k] = row
		for lk, origin := range presentLinks(ls) {
			if lk.From != k {
				continue
			}
			if _, own := b.Links[lk]; own {
				continue
			}
			seq := effectiveLinkSeq(ls, lk)
			_, err := f.s.Pool.Exec(f.ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq)
				VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`, f.domain, f.branch, lk.From, lk.Rel, lk.To, string(origin), seq)
			require.NoError(f.t, err)
			b.Links[lk] = &linkRow{Origin: origin, Seq: seq}
		}
	}
}

// effectiveLinkSeq is the seq of the version of a Link in effect.
func effectiveLinkSeq(ls []level, k lkey) int64 {
	for _, l := range ls {
		r, ok := l.B.Links[k]
		if !ok {
			continue
		}
		if r.Seq <= l.Cut {
			return r.Seq
		}
		hs := l.B.LHist[k]
		for i := len(hs) - 1; i >= 0; i-- {
			if hs[i].Seq <= l.Cut {
				return hs[i].Seq
			}
		}
	}
	return 0
}

// searchExpr computes the search vector from $5 (title) and $7 (other
// search text), as the commit does.
const searchExpr = `setweight(to_tsvector('simple', $5), 'A') || setweight(to_tsvector('simple', $7::text), 'B')`

// noteOf is the search text besides the title: a Part's note.
func noteOf(kind string, values map[string]any) string {
	if kind != "Part" {
		return ""
	}
	n, _ := values["note"].(string)
	return n
}

type revInfo struct {
	ID     string
	Seq    int64
	Author string
	Branch string
}

// commit lands one Revision with the changes on f's branch.
func (f *fixture) commit(author, provenance string, changes ...change) revInfo {
	f.t.Helper()
	var out revInfo
	b := f.model()
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
		if _, err := tx.Exec(f.ctx, `INSERT INTO revisions (domain_id, id, seq, number, branch_id, parents, author, message, hash, provenance, changes)
			VALUES ($1, $2, $3, $3, $4, $5, $6, $7, $8, $9, $10)`, f.domain, id, seq, f.branch, parents, author,
			"commit by "+author, hash, prov, js); err != nil {
			return err
		}
		for _, c := range changes {
			if err := f.apply(tx, seq, id, prov, c); err != nil {
				return fmt.Errorf("%s %s: %w", c.Op, c.Key, err)
			}
		}
		_, err := tx.Exec(f.ctx, `UPDATE refs SET head = $3, head_seq = $4 WHERE domain_id = $1 AND id = $2`, f.domain, f.branch, id, seq)
		out = revInfo{ID: id, Seq: seq, Author: author, Branch: f.name}
		return err
	})
	require.NoError(f.t, err)
	b.Head = out.Seq
	f.revs[out.ID] = out
	return out
}

// writeRecord upserts b's own row of key (model and database).
func (f *fixture) writeRecord(tx pgx.Tx, key string, row *recRow) error {
	f.model().Recs[key] = row
	// ivals as the commit writes them: the values of the Attributes whose
	// index the branch records.
	_, err := tx.Exec(f.ctx, `INSERT INTO mat_records AS m (domain_id, branch_id, key, kind, title, "values", search, lineage, created_seq, seq, versions, deleted, ivals)
		VALUES ($1, $2, $3, $4, $5, $6, `+searchExpr+`, $8, $9, $10, $11, $12, lb_ivals_of($1, ARRAY[$2]::integer[], $4, $6::jsonb))
		ON CONFLICT (domain_id, branch_id, key) DO UPDATE SET kind = EXCLUDED.kind, title = EXCLUDED.title, "values" = EXCLUDED.values,
		  search = EXCLUDED.search, lineage = EXCLUDED.lineage, created_seq = EXCLUDED.created_seq, seq = EXCLUDED.seq,
		  versions = EXCLUDED.versions, deleted = EXCLUDED.deleted, ivals = EXCLUDED.ivals`,
		f.domain, f.branch, key, row.Kind, row.Title, row.Values, noteOf(row.Kind, row.Values), row.Lineage, row.Created, row.Seq,
		row.Versions, row.Deleted)
	return err
}

func (f *fixture) apply(tx pgx.Tx, seq int64, rev string, commitProv any, c change) error {
	prov := commitProv
	if c.Provenance != "" {
		prov = json.RawMessage(c.Provenance)
	}
	b := f.model()
	ls := levels(b, seq, false)
	switch c.Op {
	case "put", "patch":
		old := effective(ls, c.Key)
		versions := len(chainHist(ls, c.Key)) + 1
		var lineage map[string]int64
		created := seq
		oldValues := map[string]any{}
		kind := c.Kind
		if old.Present {
			lin, cr, _ := meta(ls, old)
			lineage, created, oldValues = maps.Clone(lin), cr, old.Values
			if c.Op == "patch" {
				kind = old.Kind
			}
		} else if c.Op == "patch" {
			return fmt.Errorf("patch of an absent Record")
		}
		if lineage == nil {
			lineage = map[string]int64{}
		}
		values := map[string]any{}
		if c.Op == "patch" {
			maps.Copy(values, oldValues)
		}
		for k, v := range c.Values {
			if v == nil {
				delete(values, k)
			} else {
				values[k] = v
			}
		}
		for k, v := range values {
			if ov, ok := oldValues[k]; !ok || fmt.Sprint(ov) != fmt.Sprint(v) {
				lineage[k] = seq
			}
		}
		for k := range oldValues {
			if _, ok := values[k]; !ok {
				lineage[k] = seq
			}
		}
		title, _ := values["name"].(string)
		if err := f.writeRecord(tx, c.Key, &recRow{Kind: kind, Title: title, Values: values, Lineage: lineage, Created: created,
			Seq: seq, Versions: versions}); err != nil {
			return err
		}
		if err := f.history(tx, c.Key, histRow{Seq: seq, Rev: rev, Op: c.Op, Kind: kind, Title: title, Values: values, Prov: prov}); err != nil {
			return err
		}
		oldMaker, _ := oldValues["maker"].(string)
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
		old := effective(ls, c.Key)
		if !old.Present {
			return fmt.Errorf("delete of an absent Record")
		}
		lin, created, _ := meta(ls, old)
		versions := len(chainHist(ls, c.Key)) + 1
		if err := f.writeRecord(tx, c.Key, &recRow{Kind: old.Kind, Title: "", Values: map[string]any{}, Lineage: maps.Clone(lin),
			Created: created, Seq: seq, Versions: versions, Deleted: true}); err != nil {
			return err
		}
		if err := f.history(tx, c.Key, histRow{Seq: seq, Rev: rev, Op: "delete", Kind: old.Kind, Title: old.Title, Prov: prov}); err != nil {
			return err
		}
		if m, _ := old.Values["maker"].(string); m != "" {
			return f.setLink(tx, seq, "maker", c.Key, m, 'r', false)
		}
	case "link":
		return f.setLink(tx, seq, c.Relation, c.From, c.To, 'l', true)
	case "unlink":
		return f.setLink(tx, seq, c.Relation, c.From, c.To, 'l', false)
	}
	return nil
}

func (f *fixture) history(tx pgx.Tx, key string, h histRow) error {
	b := f.model()
	b.Hist[key] = append(b.Hist[key], h)
	var values any
	if h.Values != nil {
		values = h.Values
	}
	_, err := tx.Exec(f.ctx, `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, "values", provenance)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)`, f.domain, f.branch, key, h.Seq, h.Rev, h.Op, h.Kind, h.Title, values, h.Prov)
	return err
}

// setLink links or unlinks (a tombstone: the row stays, deleted).
func (f *fixture) setLink(tx pgx.Tx, seq int64, rel, from, to string, origin byte, on bool) error {
	b := f.model()
	k := lkey{from, rel, to}
	op := "link"
	if !on {
		op = "unlink"
		if e := effectiveLink(levels(b, seq, false), k); e.Present {
			origin = e.Origin
		}
	}
	b.Links[k] = &linkRow{Origin: origin, Seq: seq, Deleted: !on}
	b.LHist[k] = append(b.LHist[k], linkHist{Seq: seq, Op: op, Origin: origin})
	_, err := tx.Exec(f.ctx, `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq, deleted)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
		ON CONFLICT (domain_id, branch_id, from_key, relation, to_key) DO UPDATE SET origin = EXCLUDED.origin, seq = EXCLUDED.seq, deleted = EXCLUDED.deleted`,
		f.domain, f.branch, from, rel, to, string(origin), seq, !on)
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

// sharingPartition creates Domains named name-0, name-1... each committing
// c, until one's Records share the partition of f's (the tables are
// partitioned by a hash of the Domain), and answers it: the other Domain
// a hostile-Domain test needs where an index is shared.
func (f *fixture) sharingPartition(t testing.TB, s *store.Store, name string, c change) *fixture {
	t.Helper()
	part := func(domain int32) string {
		return f.strings(`SELECT tableoid::regclass::text FROM mat_records WHERE domain_id = $1 LIMIT 1`, domain)[0]
	}
	for i := range 16 {
		g := newFixture(t, s, fmt.Sprintf("%s-%d", name, i))
		g.commit("zed", "", c)
		if part(g.domain) == part(f.domain) {
			return g
		}
	}
	require.FailNow(t, "no Domain in the partition of the first")
	return nil
}
