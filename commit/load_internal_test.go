package commit

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

const readSchema = `{"kinds": [
 {"name": "Supplier", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]},
 {"name": "Part", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true},
   {"name": "maker", "type": "ref", "kind": "Supplier"}]},
 {"name": "Warehouse", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]}],
 "relations": [
 {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many"},
 {"name": "stocked_at", "from": "Part", "to": "Warehouse", "cardinality": "one"}]}`

// read is how the load read a stored Record: its Kind, and whether whole.
type read struct {
	kind  string
	whole bool
}

// TestLoadReadsLinkEndsWithoutValues: the load of a commit reads whole
// (values and lineage) the stored Records it puts, patches or deletes, and
// only the Kind of those it merely links, unlinks or refers to, which the
// checks need no more of; a Record both changed and linked is read whole.
func TestLoadReadsLinkEndsWithoutValues(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, d := supplyDomain(t)
	p := New(s, Config{})
	_, err := p.PutSchema(ctx, d.ID, "main", &SchemaRequest{Document: json.RawMessage(readSchema), Author: "test", Message: "schema"})
	require.NoError(t, err)
	ch := func(op, kind, key, values, rel, from, to string) Change {
		c := Change{Op: op, Kind: kind, Key: key, Relation: rel, From: from, To: to}
		if values != "" {
			c.Values = json.RawMessage(values)
		}
		return c
	}
	_, err = p.Commit(ctx, d.ID, "main", &Request{Message: "seed", Author: "test", Changes: []Change{
		ch("put", "Supplier", "S-1", `{"name": "Acme"}`, "", "", ""),
		ch("put", "Supplier", "S-2", `{"name": "Bolt"}`, "", "", ""),
		ch("put", "Part", "P-1", `{"name": "Hex", "maker": "S-1"}`, "", "", ""),
		ch("put", "Part", "P-2", `{"name": "Nut"}`, "", "", ""),
		ch("put", "Warehouse", "W-1", `{"name": "North"}`, "", "", ""),
	}}, "")
	require.NoError(t, err)

	tests := []struct {
		name    string
		changes []Change
		want    map[string]read // every stored Record the load read
	}{
		{"links only", []Change{ch("link", "", "", "", "supplied_by", "P-1", "S-2"), ch("link", "", "", "", "stocked_at", "P-2", "W-1")},
			map[string]read{"P-1": {"Part", false}, "S-2": {"Supplier", false}, "P-2": {"Part", false}, "W-1": {"Warehouse", false}}},
		{"patched and linked", []Change{ch("patch", "", "P-1", `{"name": "Hex 2"}`, "", "", ""), ch("link", "", "", "", "supplied_by", "P-1", "S-2")},
			map[string]read{"P-1": {"Part", true}, "S-2": {"Supplier", false}}},
		{"a new ref's target", []Change{ch("patch", "", "P-2", `{"maker": "S-2"}`, "", "", "")},
			map[string]read{"P-2": {"Part", true}, "S-2": {"Supplier", false}}},
		{"deleted and unlinked", []Change{ch("unlink", "", "", "", "supplied_by", "P-1", "S-1"), ch("delete", "", "S-1", "", "", "", "")},
			map[string]read{"P-1": {"Part", false}, "S-1": {"Supplier", true}}},
		{"put over a stored Record", []Change{ch("put", "Supplier", "S-2", `{"name": "Bolt 2"}`, "", "", "")},
			map[string]read{"S-2": {"Supplier", true}}},
	}
	for _, tc := range tests {
		for _, through := range []bool{false, true} {
			t.Run(fmt.Sprintf("%s/through=%t", tc.name, through), func(t *testing.T) {
				testLoadReads(t, s, p, d.ID, through, tc.changes, tc.want)
			})
		}
	}
}

// supplyDomain opens a store on a new database with a Domain "supply".
func supplyDomain(t *testing.T) (*store.Store, *store.Domain) {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{MaxConns: 4})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	d, err := s.CreateDomain(ctx, "supply")
	require.NoError(t, err)
	return s, d
}

// testLoadReads runs the load of changes on main, reading the Records
// directly or through the branch's level chain (lb_state_records), and
// compares what it read with want: Record key -> Kind, read whole.
func testLoadReads(t *testing.T, s *store.Store, p *Pipeline, domainID int32, through bool, cs []Change, want map[string]read) {
	t.Helper()
	st := loadOnMain(t, s, p, domainID, through, cs)
	got := map[string]read{}
	for key, r := range st.records {
		if !r.had {
			continue
		}
		require.Equal(t, r.oldValues != nil, r.oldLineage != nil, key)
		got[key] = read{r.kindName, r.oldValues != nil}
		if r.oldValues != nil {
			require.NotEmpty(t, r.oldValues["name"], key)
			require.NotEmpty(t, r.oldLineage["name"], key)
		}
	}
	require.Equal(t, want, got)
}

// loadOnMain runs the load of the changes cs on main, reading the Records
// directly or through the branch's level chain (lb_state_records), and
// returns the state it read.
func loadOnMain(t *testing.T, s *store.Store, p *Pipeline, domainID int32, through bool, cs []Change) *state {
	t.Helper()
	ctx := context.Background()
	var st *state
	err := s.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		b, err := store.LockBranch(ctx, tx, "main")
		require.NoError(t, err)
		sch, err := loadSchema(ctx, tx, b.ID)
		require.NoError(t, err)
		var ps problemSet
		changes, _ := p.parse(&Request{Message: "m", Author: "a", Changes: cs}, &ps)
		require.True(t, ps.empty())
		st = &state{sch: sch, records: map[string]*record{}, links: map[linkKey]*link{}}
		return p.load(ctx, tx, domainID, b.ID, through, st, changes)
	})
	require.NoError(t, err)
	return st
}

// TestLinkChecksFormatOnlyProblems: applying and checking a commit of
// valid Links between stored Records builds no problem text (fields,
// descriptions of Links) for the Links that have no problem: its
// allocations stay a few map entries per Link.
func TestLinkChecksFormatOnlyProblems(t *testing.T) {
	doc, ps := schema.Parse([]byte(readSchema))
	require.Empty(t, ps)
	sch, ps := schema.Compile(doc)
	require.Empty(t, ps)
	const n = 1000
	req := &Request{Message: "m", Author: "a"}
	parts, suppliers := make([]string, n), make([]string, 10)
	for i := range suppliers {
		suppliers[i] = fmt.Sprintf("S-%d", i)
	}
	for i := range parts {
		parts[i] = fmt.Sprintf("P-%d", i)
		req.Changes = append(req.Changes, Change{Op: "link", Relation: "supplied_by", From: parts[i], To: suppliers[i%10]})
	}
	p := &Pipeline{cfg: Config{MaxChanges: n}}
	var pps problemSet
	changes, _ := p.parse(req, &pps)
	require.True(t, pps.empty())
	run := func() *problemSet {
		st := &state{sch: sch, records: make(map[string]*record, n+10), links: make(map[linkKey]*link, n)}
		for _, k := range parts {
			r := st.rec(k)
			r.had, r.exists, r.oldKind, r.kindName = true, true, "Part", "Part"
		}
		for _, k := range suppliers {
			r := st.rec(k)
			r.had, r.exists, r.oldKind, r.kindName = true, true, "Supplier", "Supplier"
		}
		var ps problemSet
		apply(st, changes, &ps)
		require.NoError(t, check(context.Background(), nil, 1, 1, st, changes, &ps))
		return &ps
	}
	require.True(t, run().empty())
	// The state's own Links and maps: 2 allocations a Link (measured);
	// formatting each change's field names and each Link's description
	// took 15 more.
	allocs := testing.AllocsPerRun(5, func() { run() })
	t.Logf("%.1f allocations per Link", allocs/n)
	require.Less(t, allocs/n, 5.0, "allocations per Link")
}

// TestPatchReadsLinksByStoredKind: for_part is required and starts from
// Order. A patch does not name its Kind; the load reads the Links out of a
// patched Record once its stored row says it is an Order (the required
// Relation counts them), and for a patched Part only the foreign-key Links
// its stored values hold, reading the branch's rows directly or through its
// level chain.
func TestPatchReadsLinksByStoredKind(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, d := supplyDomain(t)
	p := New(s, Config{})
	doc := `{"kinds": [
 {"name": "Supplier", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]},
 {"name": "Part", "title": "name", "attributes": [
   {"name": "name", "type": "text", "required": true},
   {"name": "maker", "type": "ref", "kind": "Supplier"}]},
 {"name": "Order", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]}],
 "relations": [
 {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many"},
 {"name": "for_part", "from": "Order", "to": "Part", "cardinality": "one", "required": true}]}`
	_, err := p.PutSchema(ctx, d.ID, "main", &SchemaRequest{Document: json.RawMessage(doc), Author: "test", Message: "schema"})
	require.NoError(t, err)
	_, err = p.Commit(ctx, d.ID, "main", &Request{Message: "seed", Author: "test", Changes: []Change{
		{Op: "put", Kind: "Supplier", Key: "S-1", Values: json.RawMessage(`{"name": "Acme"}`)},
		{Op: "put", Kind: "Part", Key: "P-1", Values: json.RawMessage(`{"name": "Hex", "maker": "S-1"}`)},
		{Op: "link", Relation: "supplied_by", From: "P-1", To: "S-1"},
		{Op: "put", Kind: "Order", Key: "O-1", Values: json.RawMessage(`{"name": "First"}`)},
		{Op: "link", Relation: "for_part", From: "O-1", To: "P-1"},
	}}, "")
	require.NoError(t, err)
	patch := func(key string) Change {
		return Change{Op: "patch", Key: key, Values: json.RawMessage(`{"name": "renamed"}`)}
	}
	tests := []struct {
		name    string
		changes []Change
		through bool
		want    []string // every Link the load put in the state
	}{
		{"a Part", []Change{patch("P-1")}, false, []string{"P-1 maker S-1 r"}},
		{"an Order", []Change{patch("O-1")}, false, []string{"O-1 for_part P-1 l"}},
		{"both", []Change{patch("O-1"), patch("P-1")}, false, []string{"O-1 for_part P-1 l", "P-1 maker S-1 r"}},
		{"a missing Record", []Change{patch("O-9")}, false, []string{}},
		{"a Part through the levels", []Change{patch("P-1")}, true, []string{"P-1 maker S-1 r"}},
		{"both through the levels", []Change{patch("P-1"), patch("O-1")}, true, []string{"O-1 for_part P-1 l", "P-1 maker S-1 r"}},
		{"an Order linked in the same commit", []Change{patch("O-1"), {Op: "link", Relation: "for_part", From: "O-1", To: "P-1"}}, false, []string{"O-1 for_part P-1 l"}},
		{"an Order through the levels", []Change{patch("O-1")}, true, []string{"O-1 for_part P-1 l"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			st := loadOnMain(t, s, p, d.ID, tc.through, tc.changes)
			got := []string{}
			for k, l := range st.links {
				got = append(got, fmt.Sprintf("%s %s %s %c", k.from, k.relation, k.to, l.origin))
			}
			slices.Sort(got)
			require.Equal(t, tc.want, got)
		})
	}
}
