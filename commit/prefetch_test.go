package commit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/store"
)

// batchStatements records the SQL of every statement sent while on, those
// queued in a batch included, and the queued statements with their
// arguments.
type batchStatements struct {
	statements
	queued []pgx.QueuedQuery
}

func (s *batchStatements) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		for _, q := range d.Batch.QueuedQueries {
			s.sql = append(s.sql, q.SQL)
			s.queued = append(s.queued, *q)
		}
	}
	return ctx
}

// args returns the arguments of the last statement queued in a batch while
// on that starts with prefix.
func (s *batchStatements) args(t *testing.T, prefix string) []any {
	t.Helper()
	s.mu.Lock()
	defer s.mu.Unlock()
	for i := len(s.queued) - 1; i >= 0; i-- {
		if strings.HasPrefix(strings.TrimSpace(s.queued[i].SQL), prefix) {
			return s.queued[i].Arguments
		}
	}
	t.Fatalf("no statement %q sent", prefix)
	return nil
}

func (s *batchStatements) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (s *batchStatements) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

// TestCommitReadsManyRecordsByPrefetch: a commit on a branch that owns its
// rows reads its Records by lb_commit_records from 32 Records on, below
// that by its own statement, and either way with what the commit needs:
// a patch keeps the Attributes it does not name (the stored values were
// read), the versions count on, and a Link's end is known by its Kind (the
// ends' read).
func TestCommitReadsManyRecordsByPrefetch(t *testing.T) {
	t.Parallel()
	trace := &batchStatements{}
	b := setupStore(t, commit.Config{}, store.Config{Tracer: trace})

	const parts = 80
	var seed []commit.Change
	seed = append(seed, put("Supplier", "S-1", `{"name": "Acme"}`))
	for i := range parts {
		seed = append(seed, put("Part", fmt.Sprintf("P-%d", i), fmt.Sprintf(`{"name": "Part %d", "maker": "S-1", "sku": %d, "weight_kg": 1}`, i, i)))
	}
	b.commit(t, seed...)

	for _, tc := range []struct {
		name     string
		from, to int // the Parts patched and linked
		prefetch bool
	}{
		{"31 Parts and their Supplier", 0, 31, true},
		{"30 Parts and their Supplier", 31, 61, false},
		{"one Part and its Supplier", 70, 71, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var cs []commit.Change
			for i := tc.from; i < tc.to; i++ {
				key := fmt.Sprintf("P-%d", i)
				cs = append(cs, patch(key, `{"weight_kg": 2}`), lnk("supplied_by", key, "S-1"))
			}
			trace.record(true)
			res := b.commit(t, cs...)
			sent := trace.record(false)
			byFunction := slices.ContainsFunc(sent, func(q string) bool { return strings.Contains(q, "lb_commit_records(") })
			require.Equal(t, tc.prefetch, byFunction, "read by lb_commit_records, %d Parts and a Supplier", tc.to-tc.from)
			for i := tc.from; i < tc.to; i++ {
				r := b.record(t, fmt.Sprintf("P-%d", i))
				require.NotNil(t, r)
				require.Equal(t, map[string]any{"name": fmt.Sprintf("Part %d", i), "maker": "S-1", "sku": float64(i), "weight_kg": float64(2)}, r.Values)
				require.Equal(t, 2, r.Versions)
				require.Equal(t, res.Seq, r.Lineage["weight_kg"])
				require.Less(t, r.Lineage["name"], res.Seq)
			}
		})
	}
	links := b.links(t)
	require.Contains(t, links, "P-0 supplied_by S-1 l")
	require.Contains(t, links, "P-60 supplied_by S-1 l")
	require.Contains(t, links, "P-70 supplied_by S-1 l")
	require.NotContains(t, links, "P-61 supplied_by S-1 l")
}

// TestCommitRecordsReadsByBitmap: lb_commit_records reads the keys
// through a bitmap of the primary key (the plan auto_explain reports), answers
// what a plain read of those keys answers, the Records of the keys in
// p_whole with their values and lineage and of those in p_ends with their
// Kind alone, and as lorebase_app in one Domain answers nothing of another
// Domain whose id and keys it is handed.
func TestCommitRecordsReadsByBitmap(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	var cs []commit.Change
	for i := range 50 {
		cs = append(cs, put("Part", fmt.Sprintf("P-%d", i), fmt.Sprintf(`{"name": "Part %d", "sku": %d}`, i, i)))
	}
	cs = append(cs, put("Supplier", "S-1", `{"name": "Acme"}`))
	b.commit(t, cs...)
	b.commit(t, patch("P-3", `{"name": "Part three"}`), del("P-4"))
	var mainID int32
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, b.domain).Scan(&mainID))

	conn, plans := autoExplain(t, b, false)

	whole := []string{"P-1", "P-3", "P-4", "P-40", "no such key"}
	ends := []string{"S-1", "P-2"}
	read := func(q string, args ...any) []string {
		t.Helper()
		rows, err := conn.Query(b.ctx, q, args...)
		require.NoError(t, err)
		var out []string
		for rows.Next() {
			var isWhole bool
			var key, kind string
			var vals, lin []byte
			var created int64
			var versions int32
			require.NoError(t, rows.Scan(&isWhole, &key, &kind, &vals, &lin, &created, &versions))
			out = append(out, fmt.Sprintf("%t %s %s %s %s %d %d", isWhole, key, kind, vals, lin, created, versions))
		}
		require.NoError(t, rows.Err())
		slices.Sort(out)
		return out
	}
	got := read(`SELECT * FROM lb_commit_records($1, $2, $3, $4)`, b.domain, mainID, whole, ends)
	reported := strings.Join(plans(), "\n")
	require.Contains(t, reported, "Bitmap Heap Scan on mat_records")
	require.Contains(t, reported, "Bitmap Index Scan on mat_records")
	require.NotContains(t, reported, "Index Scan using")
	require.NotContains(t, reported, "Seq Scan")

	want := read(`SELECT true, key, kind, values, lineage, created_seq, versions FROM mat_records
		WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted AND key = ANY($3)
		UNION ALL
		SELECT false, key, kind, NULL::jsonb, NULL::jsonb, created_seq, versions FROM mat_records
		WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted AND key = ANY($4)`, b.domain, mainID, whole, ends)
	require.Equal(t, want, got)
	require.Len(t, got, 5, "P-1, P-3, P-40 whole; S-1, P-2 by Kind (P-4 deleted, one key not stored)")
	for _, g := range got {
		if strings.HasPrefix(g, "false ") {
			require.Regexp(t, `^false (S-1 Supplier|P-2 Part)   \d+ 1$`, g, "an end's values and lineage are not read")
		}
	}
	require.Contains(t, strings.Join(got, "\n"), `true P-3 Part {"sku": 3, "name": "Part three"}`)

	// Another Domain's Records, read as lorebase_app in this Domain by
	// that Domain's id, branch and keys: nothing.
	o, err := b.store.CreateDomain(b.ctx, "other")
	require.NoError(t, err)
	_, err = b.p.PutSchema(b.ctx, o.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
	require.NoError(t, err)
	_, err = b.p.Commit(b.ctx, o.ID, "main", req(put("Part", "P-1", `{"name": "Secret part"}`), put("Supplier", "S-1", `{"name": "Secret"}`)), "")
	require.NoError(t, err)
	var otherMain int32
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, o.ID).Scan(&otherMain))
	for _, dom := range []struct{ d, br int32 }{{o.ID, otherMain}, {b.domain, otherMain}, {o.ID, mainID}} {
		err = b.store.InDomain(b.ctx, b.domain, func(ctx context.Context, tx pgx.Tx) error {
			var n int
			if err := tx.QueryRow(ctx, `SELECT count(*) FROM lb_commit_records($1, $2, $3, $4)`, dom.d, dom.br, []string{"P-1"}, []string{"S-1"}).Scan(&n); err != nil {
				return err
			}
			require.Zero(t, n, "Domain %d, branch %d read from Domain %d", dom.d, dom.br, b.domain)
			return nil
		})
		require.NoError(t, err)
	}
	// The same call in the other Domain reads its Records: the zero above is
	// the isolation, not a call that reads nothing.
	err = b.store.InDomain(b.ctx, o.ID, func(ctx context.Context, tx pgx.Tx) error {
		var n int
		if err := tx.QueryRow(ctx, `SELECT count(*) FROM lb_commit_records($1, $2, $3, $4)`, o.ID, otherMain, []string{"P-1"}, []string{"S-1"}).Scan(&n); err != nil {
			return err
		}
		require.Equal(t, 2, n)
		return nil
	})
	require.NoError(t, err)
}

// TestPutReadsLinksOnlyForRequiredRelations: the schema's for_part
// Relation is required and starts from Order. A commit of Part puts reads
// no Link (a Part's foreign-key Links follow from its values: a new maker
// moves its maker Link), a put of an Order reads the Links out of it (the
// required Relation counts them: an Order put again keeps its stored
// for_part Link; a new Order without one is refused), and a patch of an
// Order, which does not name its Kind, finds its for_part Link
// (TestPatchReadsLinksByStoredKind: a patch of a Part reads none).
func TestPutReadsLinksOnlyForRequiredRelations(t *testing.T) {
	t.Parallel()
	trace := &batchStatements{}
	b := setupStore(t, commit.Config{}, store.Config{Tracer: trace})
	b.commit(t, put("Supplier", "S-1", `{"name": "Acme"}`), put("Supplier", "S-2", `{"name": "Bolt Co"}`),
		put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1"}`), put("Part", "P-2", `{"name": "Nut", "maker": "S-1"}`),
		lnk("supplied_by", "P-1", "S-1"),
		put("Order", "O-1", `{"name": "Order one"}`), lnk("for_part", "O-1", "P-1"))
	readsLinks := func(sent []string) bool {
		return slices.ContainsFunc(sent, func(q string) bool { return strings.Contains(q, "FROM mat_links") })
	}

	trace.record(true)
	b.commit(t, put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-2"}`), put("Part", "P-2", `{"name": "Nut M8", "maker": "S-1"}`))
	require.False(t, readsLinks(trace.record(false)), "Part puts read Links")
	require.Equal(t, []string{"O-1 for_part P-1 l", "P-1 maker S-2 r", "P-1 supplied_by S-1 l", "P-2 maker S-1 r"}, b.links(t))

	trace.record(true)
	b.commit(t, put("Order", "O-1", `{"name": "Order one, again"}`))
	require.True(t, readsLinks(trace.record(false)), "an Order put reads its Links")
	require.Contains(t, b.links(t), "O-1 for_part P-1 l")
	ie := b.invalid(t, req(put("Order", "O-2", `{"name": "Order two"}`)))
	require.Equal(t, "required_link", ie.Problems[0].Code)

	trace.record(true)
	b.commit(t, patch("O-1", `{"name": "Order one, patched"}`), patch("P-2", `{"name": "Nut M10"}`))
	require.True(t, readsLinks(trace.record(false)), "a patch of an Order reads its Links")
	require.Contains(t, b.links(t), "O-1 for_part P-1 l")
	ie = b.invalid(t, req(patch("O-1", `{"name": "Order one, unlinked"}`), unlnk("for_part", "O-1", "P-1")))
	require.Equal(t, "required_link", ie.Problems[0].Code)
}
