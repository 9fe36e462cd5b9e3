package commit_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

func TestEffects(t *testing.T) {
	t.Parallel()
	for _, threshold := range []int{0, 1} {
		t.Run(fmt.Sprintf("copy threshold %d", threshold), func(t *testing.T) {
			t.Parallel()
			b := setup(t, commit.Config{CopyThresholdRows: threshold})
			r1 := b.commit(t,
				put("Supplier", "S-1", `{"name": "Acme", "vat": "V1", "country": "DE", "tier": "gold"}`),
				put("Supplier", "S-2", `{"name": "Bolt", "vat": "V2"}`),
				put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1", "weight_kg": 1.50}`),
				lnk("supplied_by", "P-1", "S-1"),
			)
			require.Equal(t, 4, r1.Changes)
			require.Len(t, r1.Parents, 1, "the schema change is the parent")
			p1 := b.record(t, "P-1")
			require.Equal(t, "Part", p1.Kind)
			require.Equal(t, "Hex bolt", p1.Title)
			require.Equal(t, map[string]any{"name": "Hex bolt", "maker": "S-1", "weight_kg": 1.5}, p1.Values)
			require.Equal(t, r1.Seq, p1.CreatedSeq)
			require.Equal(t, r1.Seq, p1.Seq)
			require.Equal(t, 1, p1.Versions)
			require.Equal(t, map[string]int64{"name": r1.Seq, "maker": r1.Seq, "weight_kg": r1.Seq}, p1.Lineage)
			require.Contains(t, p1.Search, "'hex':1A")
			require.Equal(t, []string{"P-1 maker S-1 r", "P-1 supplied_by S-1 l"}, b.links(t))

			// Patch: the ref moves, the FK Link follows; lineage only for what changed.
			r2 := b.commit(t,
				patch("P-1", `{"maker": "S-2", "weight_kg": 1.5}`),
				unlnk("supplied_by", "P-1", "S-1"),
				lnk("supplied_by", "P-1", "S-2"),
			)
			require.Equal(t, []string{r1.Revision}, r2.Parents)
			p1 = b.record(t, "P-1")
			require.Equal(t, map[string]int64{"name": r1.Seq, "maker": r2.Seq, "weight_kg": r1.Seq}, p1.Lineage)
			require.Equal(t, 2, p1.Versions)
			require.Equal(t, r1.Seq, p1.CreatedSeq)
			require.Equal(t, r2.Seq, p1.Seq)
			require.Equal(t, []string{"P-1 maker S-2 r", "P-1 supplied_by S-2 l"}, b.links(t))

			// Several changes of one key in one commit; removing an attribute.
			r3 := b.commit(t,
				put("Supplier", "S-3", `{"name": "Cog", "vat": "V3"}`),
				patch("S-3", `{"country": "FR"}`),
				patch("S-1", `{"tier": null}`),
				patch("P-1", `{"maker": null}`),
			)
			s3 := b.record(t, "S-3")
			require.Equal(t, map[string]any{"name": "Cog", "vat": "V3", "country": "FR"}, s3.Values)
			require.Equal(t, 1, s3.Versions, "one history row per Record per commit")
			s1 := b.record(t, "S-1")
			require.NotContains(t, s1.Values, "tier")
			require.NotContains(t, s1.Lineage, "tier")
			require.Equal(t, r1.Seq, s1.Lineage["name"])
			require.Equal(t, []string{"P-1 supplied_by S-2 l"}, b.links(t))

			// Delete: the row goes, history keeps a delete row.
			b.commit(t, unlnk("supplied_by", "P-1", "S-2"), del("P-1"), del("S-1"))
			require.Nil(t, b.record(t, "P-1"))
			require.Nil(t, b.record(t, "S-1"))
			require.Empty(t, b.links(t))

			type hist struct {
				Key, Op string
				Seq     int64
				HasVals bool
			}
			rows, err := b.store.Pool.Query(b.ctx, `SELECT key, op, seq, values IS NOT NULL FROM mat_history WHERE domain_id = $1 ORDER BY key, seq`, b.domain)
			require.NoError(t, err)
			var hs []hist
			for rows.Next() {
				var h hist
				require.NoError(t, rows.Scan(&h.Key, &h.Op, &h.Seq, &h.HasVals))
				hs = append(hs, h)
			}
			require.NoError(t, rows.Err())
			var p1h []hist
			for _, h := range hs {
				if h.Key == "P-1" {
					p1h = append(p1h, h)
				}
			}
			require.Len(t, p1h, 4)
			require.Equal(t, "put", p1h[0].Op)
			require.Equal(t, "delete", p1h[3].Op)
			require.False(t, p1h[3].HasVals)

			var linkHist int
			require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT count(*) FROM mat_link_history WHERE domain_id = $1`, b.domain).Scan(&linkHist))
			// link l, link r; unlink l, link l, unlink r, link r; unlink r; unlink l
			require.Equal(t, 8, linkHist)
			_ = r3

			// Re-creating a deleted key starts a new Record.
			r5 := b.commit(t, put("Supplier", "S-1", `{"name": "Acme again"}`))
			s1 = b.record(t, "S-1")
			require.Equal(t, r5.Seq, s1.CreatedSeq)
			require.Equal(t, map[string]int64{"name": r5.Seq}, s1.Lineage)
		})
	}
}

// TestHashChain recomputes every Revision's hash from its parents and objects.
func TestHashChain(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	seed(t, b)
	b.commit(t, patch("S-1", `{"country": "FR"}`))
	_, err := b.p.Commit(b.ctx, b.domain, "main", &commit.Request{Message: "with provenance", Author: "agent:x",
		Provenance: json.RawMessage(`{"tool": "web.fetch", "confidence": 0.9}`),
		Changes: []commit.Change{{Op: "patch", Key: "S-2", Values: json.RawMessage(`{"country": "NL"}`),
			Provenance: json.RawMessage(`{"source": "https://example.com/nl", "confidence": 5e-1}`)}}}, "")
	require.NoError(t, err)

	type revRow struct {
		id, author, message string
		seq                 int64
		branch              int32
		parents             []string
		at                  time.Time
		prov, changes, hash []byte
		version             int16
	}
	rows, err := b.store.Pool.Query(b.ctx, `SELECT id, seq, branch_id, parents, author, message, at, provenance, changes, hash, hash_version
		FROM revisions WHERE domain_id = $1 ORDER BY seq`, b.domain)
	require.NoError(t, err)
	revs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (revRow, error) {
		var x revRow
		err := r.Scan(&x.id, &x.seq, &x.branch, &x.parents, &x.author, &x.message, &x.at, &x.prov, &x.changes, &x.hash, &x.version)
		return x, err
	})
	require.NoError(t, err)
	require.Len(t, revs, 4)

	// Each hash is sha256 of the canonical JSON of everything the Revision
	// says, its parents' hashes included (version 2).
	hashes := map[string]string{}
	var prev string
	for _, x := range revs {
		require.EqualValues(t, commit.HashVersion, x.version)
		if prev != "" {
			require.Equal(t, []string{prev}, x.parents)
		} else {
			require.Empty(t, x.parents)
		}
		parents := []any{}
		for _, p := range x.parents {
			parents = append(parents, map[string]any{"id": p, "hash": hashes[p]})
		}
		var pv any
		if x.prov != nil {
			pv = json.RawMessage(x.prov)
		}
		body, err := commit.CanonicalJSON(map[string]any{"version": 2, "id": x.id, "seq": x.seq, "branch": int64(x.branch),
			"parents": parents, "author": x.author, "message": x.message,
			"at": x.at.UTC().Format("2006-01-02T15:04:05.000000Z"), "provenance": pv, "changes": json.RawMessage(x.changes)})
		require.NoError(t, err)
		sum := sha256.Sum256(body)
		require.Equal(t, hex.EncodeToString(sum[:]), hex.EncodeToString(x.hash), "revision %s", x.id)
		hashes[x.id] = hex.EncodeToString(x.hash)
		prev = x.id
	}
	// The per-change provenance is part of what is hashed.
	require.Contains(t, string(revs[3].changes), "example.com/nl")

	// Every object's hash is the sha256 of its canonical body.
	rows, err = b.store.Pool.Query(b.ctx, `SELECT hash, body FROM objects WHERE domain_id = $1`, b.domain)
	require.NoError(t, err)
	type objRow struct{ hash, body []byte }
	objs, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (objRow, error) {
		var o objRow
		err := r.Scan(&o.hash, &o.body)
		return o, err
	})
	require.NoError(t, err)
	for _, o := range objs {
		c, err := commit.CanonicalJSON(json.RawMessage(o.body))
		require.NoError(t, err)
		sum := sha256.Sum256(c)
		require.Equal(t, o.hash, sum[:])
	}
}

func TestIdempotency(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	r := req(put("Supplier", "S-1", `{"name": "Acme"}`))
	first, err := b.p.Commit(b.ctx, b.domain, "main", r, "key-1")
	require.NoError(t, err)
	require.False(t, first.Replayed)
	before := b.counts(t)
	again, err := b.p.Commit(b.ctx, b.domain, "main", req(put("Supplier", "S-1", `{"name": "Acme"}`)), "key-1")
	require.NoError(t, err)
	require.True(t, again.Replayed)
	require.Equal(t, first.Revision, again.Revision)
	require.Equal(t, first.Seq, again.Seq)
	require.Equal(t, first.Number, again.Number)
	require.Equal(t, before, b.counts(t), "a replay writes nothing")

	_, err = b.p.Commit(b.ctx, b.domain, "main", req(put("Supplier", "S-1", `{"name": "Other"}`)), "key-1")
	require.ErrorIs(t, err, commit.ErrIdempotencyReused)

	// A replay of a commit with expected_head answers again although the head moved.
	head := first.Revision
	withHead := &commit.Request{Message: "m", Author: "a", ExpectedHead: &head, Changes: []commit.Change{patch("S-1", `{"vat": "V"}`)}}
	r2, err := b.p.Commit(b.ctx, b.domain, "main", withHead, "key-2")
	require.NoError(t, err)
	r3, err := b.p.Commit(b.ctx, b.domain, "main", withHead, "key-2")
	require.NoError(t, err)
	require.Equal(t, r2.Revision, r3.Revision)

	// A refused commit does not use up its key.
	_, err = b.p.Commit(b.ctx, b.domain, "main", req(del("nothing")), "key-3")
	var inv *lberr.Error
	require.ErrorAs(t, err, &inv)
	_, err = b.p.Commit(b.ctx, b.domain, "main", req(put("Supplier", "S-2", `{"name": "B"}`)), "key-3")
	require.NoError(t, err)

	// Concurrent requests with one key: one commit, the others replay it.
	var wg sync.WaitGroup
	results := make([]*commit.Result, 6)
	errs := make([]error, 6)
	for i := range results {
		wg.Add(1)
		go func() {
			defer wg.Done()
			results[i], errs[i] = b.p.Commit(b.ctx, b.domain, "main", req(put("Supplier", "S-9", `{"name": "Nine"}`)), "key-4")
		}()
	}
	wg.Wait()
	replayed := 0
	for i := range results {
		require.NoError(t, errs[i])
		require.Equal(t, results[0].Revision, results[i].Revision)
		if results[i].Replayed {
			replayed++
		}
	}
	require.Equal(t, 5, replayed)
}

func TestExpectedHead(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	var head *string
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT head FROM refs WHERE domain_id = $1`, b.domain).Scan(&head))
	require.NotNil(t, head, "the schema change is a Revision")
	empty := ""
	_, err := b.p.Commit(b.ctx, b.domain, "main", &commit.Request{Message: "m", Author: "a", ExpectedHead: &empty,
		Changes: []commit.Change{put("Warehouse", "W-1", `{"name": "x"}`)}}, "")
	require.ErrorIs(t, err, commit.ErrHeadMoved)
	before := b.counts(t)
	stale := "01ARZ3NDEKTSV4RRFFQ69G5FAV"
	_, err = b.p.Commit(b.ctx, b.domain, "main", &commit.Request{Message: "m", Author: "a", ExpectedHead: &stale,
		Changes: []commit.Change{put("Warehouse", "W-1", `{"name": "x"}`)}}, "")
	require.ErrorIs(t, err, commit.ErrHeadMoved)
	require.Equal(t, before, b.counts(t))
	res, err := b.p.Commit(b.ctx, b.domain, "main", &commit.Request{Message: "m", Author: "a", ExpectedHead: head,
		Changes: []commit.Change{put("Warehouse", "W-1", `{"name": "x"}`)}}, "")
	require.NoError(t, err)
	require.Equal(t, []string{*head}, res.Parents)

	_, err = b.p.Commit(b.ctx, b.domain, "no-such-branch", req(del("x")), "")
	require.ErrorIs(t, err, store.ErrNotFound)
}

func TestFirstCommitOnEmptyBranch(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	// A fresh Domain's main has no head until its first Revision.
	d, err := b.store.CreateDomain(b.ctx, "fresh")
	require.NoError(t, err)
	empty := ""
	res, err := b.p.PutSchema(b.ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), ExpectedHead: &empty})
	require.NoError(t, err)
	require.Empty(t, res.Parents)
}

func TestConcurrentCommits(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	var wg sync.WaitGroup
	errs := make(chan error, 80)
	for g := range 8 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range 10 {
				key := fmt.Sprintf("W-%d-%d", g, i)
				_, err := b.p.Commit(b.ctx, b.domain, "main", req(put("Warehouse", key, `{"name": "w"}`)), "")
				errs <- err
			}
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	checkChain(t, b, 81)

	// Racing from one head: exactly one wins per round.
	for round := range 3 {
		var head string
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT head FROM refs WHERE domain_id = $1`, b.domain).Scan(&head))
		var wins, moved int
		var mu sync.Mutex
		var wg sync.WaitGroup
		for g := range 8 {
			wg.Add(1)
			go func() {
				defer wg.Done()
				_, err := b.p.Commit(b.ctx, b.domain, "main", &commit.Request{Message: "m", Author: "a", ExpectedHead: &head,
					Changes: []commit.Change{put("Warehouse", fmt.Sprintf("R-%d-%d", round, g), `{"name": "r"}`)}}, "")
				mu.Lock()
				defer mu.Unlock()
				switch {
				case err == nil:
					wins++
				case errors.Is(err, commit.ErrHeadMoved):
					moved++
				default:
					t.Errorf("unexpected error: %v", err)
				}
			}()
		}
		wg.Wait()
		require.Equal(t, 1, wins)
		require.Equal(t, 7, moved)
	}
	checkChain(t, b, 84)
}

// checkChain checks that main's log holds n Revisions, each the parent of
// the next, with increasing seq, ending at the head.
func checkChain(t *testing.T, b *bundle, n int) {
	t.Helper()
	rows, err := b.store.Pool.Query(b.ctx, `SELECT id, parents, seq FROM revisions WHERE domain_id = $1 ORDER BY seq`, b.domain)
	require.NoError(t, err)
	var prev string
	var prevSeq int64
	count := 0
	for rows.Next() {
		var id string
		var parents []string
		var seq int64
		require.NoError(t, rows.Scan(&id, &parents, &seq))
		if prev == "" {
			require.Empty(t, parents)
		} else {
			require.Equal(t, []string{prev}, parents)
			require.Greater(t, seq, prevSeq)
		}
		prev, prevSeq = id, seq
		count++
	}
	require.NoError(t, rows.Err())
	require.Equal(t, n, count)
	var head string
	var headSeq int64
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT head, head_seq FROM refs WHERE domain_id = $1`, b.domain).Scan(&head, &headSeq))
	require.Equal(t, prev, head)
	require.Equal(t, prevSeq, headSeq)
}

func TestDomainIsolation(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	other, err := b.store.CreateDomain(b.ctx, "other")
	require.NoError(t, err)
	_, err = b.p.PutSchema(b.ctx, other.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema)})
	require.NoError(t, err)
	_, err = b.p.Commit(b.ctx, other.ID, "main", req(
		put("Supplier", "S-B", `{"name": "Only in B", "vat": "VB"}`),
		put("Part", "P-B", `{"name": "b"}`)), "")
	require.NoError(t, err)

	inv := b.invalid(t, req(put("Part", "P-1", `{"name": "x", "maker": "S-B"}`)))
	require.Equal(t, "unknown_ref", inv.Problems[0].Code)
	inv = b.invalid(t, req(put("Part", "P-1", `{"name": "x"}`), lnk("supplied_by", "P-1", "S-B")))
	require.Equal(t, "unknown_record", inv.Problems[0].Code)
	inv = b.invalid(t, req(patch("P-B", `{"name": "y"}`)))
	require.Equal(t, "not_found", inv.Problems[0].Code)
	// Unique values of another Domain do not collide.
	b.commit(t, put("Supplier", "S-B", `{"name": "Mine", "vat": "VB"}`))
	// An Idempotency-Key is per Domain.
	_, err = b.p.Commit(b.ctx, other.ID, "main", req(put("Warehouse", "W", `{"name": "w"}`)), "shared")
	require.NoError(t, err)
	res, err := b.p.Commit(b.ctx, b.domain, "main", req(put("Warehouse", "W", `{"name": "other body"}`)), "shared")
	require.NoError(t, err)
	require.False(t, res.Replayed)
}

func TestCanonicalJSON(t *testing.T) {
	t.Parallel()
	got, err := commit.CanonicalJSON(json.RawMessage(`{"b": [1.50, "x<y>&"], "a": {"d": null, "c": true}, "é": "\u2028"}`))
	require.NoError(t, err)
	require.Equal(t, `{"a":{"c":true,"d":null},"b":[1.50,"x<y>&"],"é":"\u2028"}`, string(got))
	got, err = commit.CanonicalJSON(map[string]any{"z": json.Number("1e3"), "a": "\xff\n"})
	require.NoError(t, err)
	require.Equal(t, `{"a":"\ufffd\n","z":1e3}`, string(got))
	_, err = commit.CanonicalJSON(json.RawMessage(`{"a": 1} x`))
	require.Error(t, err)
}

// A patch that leaves a ref Attribute alone does not re-check its target,
// which the commit did not read; a patch that changes it does.
func TestPatchKeepsUnchangedRef(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	b.commit(t,
		put("Supplier", "S-1", `{"name": "Acme"}`),
		put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1"}`),
	)
	b.commit(t, patch("P-1", `{"weight_kg": 2}`))
	require.Equal(t, map[string]any{"name": "Hex bolt", "maker": "S-1", "weight_kg": 2.0}, b.record(t, "P-1").Values)

	ie := b.invalid(t, req(patch("P-1", `{"maker": "S-404"}`)))
	require.Equal(t, "unknown_ref", ie.Problems[0].Code)
	ie = b.invalid(t, req(del("S-1")))
	require.Equal(t, "still_linked", ie.Problems[0].Code)
}

// Deleting and unlinking keep tombstone rows (read as absent); putting the
// key again revives the row as a new Record.
func TestTombstones(t *testing.T) {
	t.Parallel()
	b := setup(t, commit.Config{})
	b.commit(t,
		put("Supplier", "S-1", `{"name": "Acme"}`),
		put("Part", "P-1", `{"name": "Hex bolt", "maker": "S-1"}`),
		lnk("supplied_by", "P-1", "S-1"),
	)
	r2 := b.commit(t, unlnk("supplied_by", "P-1", "S-1"), del("P-1"))
	require.Nil(t, b.record(t, "P-1"), "a deleted Record is absent")
	require.Empty(t, b.links(t), "unlinked and the deleted Record's FK Links are absent")

	var deleted bool
	var seq int64
	var versions int
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT deleted, seq, versions FROM mat_records
		WHERE domain_id = $1 AND key = 'P-1'`, b.domain).Scan(&deleted, &seq, &versions))
	require.True(t, deleted)
	require.Equal(t, r2.Seq, seq)
	require.Equal(t, 2, versions)
	var tombLinks int
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT count(*) FROM mat_links
		WHERE domain_id = $1 AND deleted AND seq = $2`, b.domain, r2.Seq).Scan(&tombLinks))
	require.Equal(t, 2, tombLinks, "the stored Link and the FK Link")

	// A patch of a deleted Record is refused; a put revives it.
	ie := b.invalid(t, req(patch("P-1", `{"weight_kg": 1}`)))
	require.Equal(t, "not_found", ie.Problems[0].Code)
	r3 := b.commit(t, put("Part", "P-1", `{"name": "Hex bolt 2", "maker": "S-1"}`), lnk("supplied_by", "P-1", "S-1"))
	p := b.record(t, "P-1")
	require.NotNil(t, p)
	require.Equal(t, r3.Seq, p.CreatedSeq)
	require.Equal(t, []string{"P-1 maker S-1 r", "P-1 supplied_by S-1 l"}, b.links(t))
	ie = b.invalid(t, req(del("S-1")))
	require.Equal(t, "still_linked", ie.Problems[0].Code)
}

// statements records the SQL of every statement sent while on.
type statements struct {
	mu  sync.Mutex
	on  bool
	sql []string
}

func (s *statements) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.on {
		s.sql = append(s.sql, d.SQL)
	}
	return ctx
}

func (s *statements) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// record turns recording on (clearing what was recorded) or off and
// returns what was recorded.
func (s *statements) record(on bool) []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	out := s.sql
	s.on = on
	if on {
		s.sql = nil
	}
	return out
}

// TestIdempotentReplayAnswersFromItsKey: a replay answers from the
// key's stored answer alone (it reads no Revision) and gives the first
// answer, internal order included.
func TestIdempotentReplayAnswersFromItsKey(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	trace := &statements{}
	s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{Tracer: trace})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	d, err := s.CreateDomain(ctx, "supply")
	require.NoError(t, err)
	p := commit.New(s, commit.Config{})
	_, err = p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
	require.NoError(t, err)
	first, err := p.Commit(ctx, d.ID, "main", req(put("Supplier", "S-1", `{"name": "Acme"}`)), "key-1")
	require.NoError(t, err)

	trace.record(true)
	again, err := p.Commit(ctx, d.ID, "main", req(put("Supplier", "S-1", `{"name": "Acme"}`)), "key-1")
	sent := trace.record(false)
	require.NoError(t, err)
	require.True(t, again.Replayed)
	again.Replayed = false
	require.Equal(t, first, again)
	require.NotEmpty(t, sent)
	for _, sql := range sent {
		require.NotContains(t, sql, "revisions", "a replay reads only its key: %q", sql)
	}
}
