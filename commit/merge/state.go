package merge

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/commit"
)

// rec is a Record as one state holds it. Values must not change once
// canonical has run (a changed copy starts with canon nil).
type rec struct {
	Kind   string
	Values map[string]any
	Branch int32
	Seq    int64
	// canon caches the canonical JSON of Values; canonErr its failure.
	canon    []byte
	canonErr bool
}

// canonical is the canonical JSON of the Record's values, encoded once:
// a three-way merge compares each state with two others.
func (r *rec) canonical() ([]byte, bool) {
	if r.canon == nil && !r.canonErr {
		b, err := commit.CanonicalJSON(r.Values)
		if err != nil {
			r.canonErr = true
		} else {
			r.canon = b
		}
	}
	return r.canon, !r.canonErr
}

// body is the Record as a conflict shows it.
func (r *rec) body() any {
	if r == nil {
		return nil
	}
	return map[string]any{"kind": r.Kind, "values": r.Values}
}

// sameRec reports whether two states of a Record are equal (both absent,
// or the same Kind and values).
func sameRec(a, b *rec) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	if a == b {
		return true
	}
	if a.Kind != b.Kind {
		return false
	}
	ab, ok1 := a.canonical()
	bb, ok2 := b.canonical()
	return ok1 && ok2 && bytes.Equal(ab, bb)
}

// sameJSON compares two decoded JSON values (nil: absent).
func sameJSON(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	ab, err1 := commit.CanonicalJSON(a)
	bb, err2 := commit.CanonicalJSON(b)
	return err1 == nil && err2 == nil && bytes.Equal(ab, bb)
}

// stateRef is a branch at its head (At nil) or as of a seq.
type stateRef struct {
	Branch int32
	At     *int64
}

// readRecords reads the present Records among keys of a state.
func readRecords(ctx context.Context, tx pgx.Tx, st stateRef, keys []string) (map[string]*rec, error) {
	out := make(map[string]*rec, len(keys))
	if len(keys) == 0 {
		return out, nil
	}
	rows, err := tx.Query(ctx, `SELECT key, kind, values, branch_id, seq FROM lb_merge_records($1, $2, $3::text[])`, st.Branch, st.At, keys)
	if err != nil {
		return nil, fmt.Errorf("read records of branch %d: %w", st.Branch, err)
	}
	var key string
	var vals []byte
	var r rec
	if _, err := pgx.ForEachRow(rows, []any{&key, &r.Kind, &vals, &r.Branch, &r.Seq}, func() error {
		values, err := decodeObject(vals)
		if err != nil {
			return fmt.Errorf("decode values of %q: %w", key, err)
		}
		out[key] = &rec{Kind: r.Kind, Values: values, Branch: r.Branch, Seq: r.Seq}
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read records of branch %d: %w", st.Branch, err)
	}
	return out, nil
}

// readLinks reads which of the Links are present in a state.
func readLinks(ctx context.Context, tx pgx.Tx, st stateRef, links []linkKey) (map[linkKey]bool, error) {
	out := make(map[linkKey]bool, len(links))
	if len(links) == 0 {
		return out, nil
	}
	from, rel, to := make([]string, len(links)), make([]string, len(links)), make([]string, len(links))
	for i, l := range links {
		from[i], rel[i], to[i] = l.From, l.Relation, l.To
	}
	rows, err := tx.Query(ctx, `SELECT from_key, relation, to_key FROM lb_merge_links($1, $2, $3::text[], $4::text[], $5::text[])`,
		st.Branch, st.At, from, rel, to)
	if err != nil {
		return nil, fmt.Errorf("read links of branch %d: %w", st.Branch, err)
	}
	var l linkKey
	if _, err := pgx.ForEachRow(rows, []any{&l.From, &l.Relation, &l.To}, func() error {
		out[l] = true
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read links of branch %d: %w", st.Branch, err)
	}
	return out, nil
}

// origin is who wrote a version of a Record: its Revision, author and the
// change's provenance.
type origin struct {
	Revision   string
	Author     string
	Provenance json.RawMessage
}

// originsSQL reads the origin of each Record version ($1 branches, $2 keys,
// $3 seqs): its Revision and the history row's provenance. The history is
// read with the Domain in scope as a parameter ($4), not lb_domain(): a
// plan the connection kept from a merge of another Domain then still looks
// each version up by key (reads.Reader.Get says why).
const originsSQL = `SELECT u.k, v.id, v.author, coalesce(h.provenance, v.provenance)
		FROM unnest($1::int[], $2::text[], $3::bigint[]) u(b, k, s)
		JOIN revisions v ON v.domain_id = lb_domain() AND v.seq = u.s
		LEFT JOIN mat_history h ON h.domain_id = $4::int AND h.branch_id = u.b AND h.key = u.k AND h.seq = u.s`

// readOrigins reads the origin of each Record version (branch, key, seq)
// of the Domain in scope.
func readOrigins(ctx context.Context, tx pgx.Tx, domainID int32, recs map[string]*rec) (map[string]origin, error) {
	out := make(map[string]origin, len(recs))
	if len(recs) == 0 {
		return out, nil
	}
	var bs []int32
	var ks []string
	var ss []int64
	for k, r := range recs {
		bs, ks, ss = append(bs, r.Branch), append(ks, k), append(ss, r.Seq)
	}
	rows, err := tx.Query(ctx, originsSQL, bs, ks, ss, domainID)
	if err != nil {
		return nil, fmt.Errorf("read origins: %w", err)
	}
	var k string
	var o origin
	if _, err := pgx.ForEachRow(rows, []any{&k, &o.Revision, &o.Author, &o.Provenance}, func() error {
		out[k] = o
		o.Provenance = nil // the next row scans into a buffer of its own
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read origins: %w", err)
	}
	return out, nil
}

// schemaDoc reads the schema document of a state: the newest schema
// Revision along its chain (nil when the chain never set one).
func schemaDoc(ctx context.Context, tx pgx.Tx, st stateRef) (any, error) {
	seq := int64(0)
	if st.At != nil {
		seq = *st.At
	} else if err := tx.QueryRow(ctx, `SELECT head_seq FROM refs WHERE domain_id = lb_domain() AND id = $1`, st.Branch).Scan(&seq); err != nil {
		return nil, fmt.Errorf("read branch %d: %w", st.Branch, err)
	}
	bs, cs, err := levels(ctx, tx, st.Branch, seq)
	if err != nil {
		return nil, err
	}
	var body []byte
	err = tx.QueryRow(ctx, `SELECT o.body FROM unnest($1::int[], $2::bigint[]) l(b, c)
		CROSS JOIN LATERAL (SELECT v.seq, v.changes -> 0 ->> 'object' AS obj FROM revisions v
			WHERE v.domain_id = lb_domain() AND v.branch_id = l.b AND v.seq <= l.c
			  AND v.changes @> '[{"op":"schema"}]' ORDER BY v.seq DESC LIMIT 1) s
		JOIN objects o ON o.domain_id = lb_domain() AND o.hash = decode(s.obj, 'hex')
		ORDER BY s.seq DESC LIMIT 1`, bs, cs).Scan(&body)
	if errors.Is(err, pgx.ErrNoRows) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read schema of branch %d: %w", st.Branch, err)
	}
	v, err := decodeAny(body)
	if err != nil {
		return nil, fmt.Errorf("decode schema: %w", err)
	}
	return v, nil
}

func decodeAny(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	return v, nil
}

func decodeObject(b []byte) (map[string]any, error) {
	v, err := decodeAny(b)
	if err != nil {
		return nil, err
	}
	m, _ := v.(map[string]any)
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

func sortedLinks(m map[linkKey]bool) []linkKey {
	out := make([]linkKey, 0, len(m))
	for l := range m {
		out = append(out, l)
	}
	sort.Slice(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if a.From != b.From {
			return a.From < b.From
		}
		if a.Relation != b.Relation {
			return a.Relation < b.Relation
		}
		return a.To < b.To
	})
	return out
}
