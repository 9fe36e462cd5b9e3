package commit

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"

	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// Change ops.
const (
	opPut    = "put"
	opPatch  = "patch"
	opDelete = "delete"
	opLink   = "link"
	opUnlink = "unlink"
	opSchema = "schema"
)

// change is one parsed change of a commit.
type change struct {
	idx      int
	op       string
	kind     string
	key      string
	values   map[string]any // put and patch, decoded with UseNumber
	relation string
	from     string
	to       string
	prov     json.RawMessage // canonical provenance of the change, nil if none
	vector   []float32       // put/patch: the client's embedding, nil if none
	vecFrom  int64           // put: the version whose vector the new version takes (Change.VectorFrom)

	after map[string]any // put/patch/delete: the Record's values after this change (nil for delete or a broken change)
}

// record is the state of one Record key during a commit: as stored before
// it, and as the changes leave it.
type record struct {
	key string

	// As stored before the commit.
	had        bool
	oldKind    string
	oldValues  map[string]any
	oldLineage map[string]any
	createdSeq int64
	versions   int32

	// As the changes leave it.
	exists   bool
	kindName string
	kind     *schema.Kind // nil when the Kind is unknown
	values   map[string]any
	broken   bool // a change of it was invalid: skip checks that need its values

	touched   bool
	recreated bool // deleted at some point of the commit
	lastIdx   int
	lastOp    string
	putIdx    int
	deleteIdx int
	attrIdx   map[string]int // change that last set an Attribute by patch
}

// blame is the index of the change that set attribute a of the Record last.
func (r *record) blame(a string) int {
	if i, ok := r.attrIdx[a]; ok {
		return i
	}
	if r.putIdx >= 0 {
		return r.putIdx
	}
	return r.lastIdx
}

// linkKey names a Link.
type linkKey struct{ from, relation, to string }

// link is the state of one Link during a commit.
type link struct {
	linkKey
	origin byte // 'l' stored, 'r' foreign key
	before bool
	after  bool
}

// state is a commit's working set: every Record and Link it reads or writes.
type state struct {
	sch     *schema.Schema
	records map[string]*record
	links   map[linkKey]*link
	order   []string // touched Record keys in first-touch order
}

func (st *state) rec(key string) *record {
	r := st.records[key]
	if r == nil {
		r = &record{key: key, putIdx: -1, deleteIdx: -1, lastIdx: -1}
		st.records[key] = r
	}
	return r
}

func (st *state) link(k linkKey) *link {
	l := st.links[k]
	if l == nil {
		l = &link{linkKey: k, origin: 'l'}
		st.links[k] = l
	}
	return l
}

// commit implements Pipeline.Commit.
func (p *Pipeline) commit(ctx context.Context, domainID int32, branch string, req *Request, idemKey string) (*Result, error) {
	if req == nil {
		return nil, store.Invalid("", "required", "The commit body is missing.")
	}
	var ps problemSet
	if idemKey != "" {
		if code, msg := checkText("Idempotency-Key", idemKey, maxIdemKeyBytes); code != "" {
			ps.bad(-1, "Idempotency-Key", code, "%s", msg)
			return nil, ps.err()
		}
	}
	changes, commitProv := p.parse(req, &ps)
	if ps.malformed {
		// Nothing more can be said about a malformed request without
		// guessing what it meant.
		return nil, ps.err()
	}
	var reqHash []byte
	if idemKey != "" {
		body, err := CanonicalJSON(req)
		if err != nil {
			return nil, store.Invalid("", "invalid_json", "The commit body could not be encoded as JSON.")
		}
		h := sha256.New()
		h.Write(body)
		h.Write([]byte{0})
		h.Write([]byte(branch))
		reqHash = h.Sum(nil)
	}

	var res *Result
	// The scope, the plan setting, the branch lock and the schema travel in
	// one round trip.
	var b *store.Branch
	var schRow store.SchemaRow
	first := &pgx.Batch{}
	first.Queue(customPlansSQL)
	store.QueueLockBranch(first, branch, &b, &schRow)
	err := p.store.InDomainBatch(ctx, domainID, first, func(ctx context.Context, tx pgx.Tx) error {
		if idemKey != "" {
			prev, err := claimIdempotencyKey(ctx, tx, req.IdempotencyScope, idemKey, b.ID, reqHash, p.cfg.IdempotencyTTL)
			if err != nil {
				return err
			}
			if prev != nil {
				res = prev
				return nil
			}
		}
		if !headMatches(req.ExpectedHead, b.Head) {
			return ErrHeadMoved
		}
		sch, err := decodeSchema(schRow.Compiled)
		if err != nil {
			return err
		}
		st := &state{sch: sch, records: map[string]*record{}, links: map[linkKey]*link{}}
		if err := p.load(ctx, tx, domainID, b.ID, b.Mode == "overlay" || b.State == "copying", st, changes); err != nil {
			return err
		}
		apply(st, changes, &ps)
		if err := check(ctx, tx, domainID, b.ID, st, changes, &ps); err != nil {
			return err
		}
		if !ps.empty() {
			return ps.err()
		}
		vecs := checkVectors(st, changes, &ps)
		if !ps.empty() {
			return ps.err()
		}
		r, err := p.write(ctx, tx, domainID, b, st, changes, req, commitProv, idemKey, nil)
		if err != nil {
			return err
		}
		if err := p.writeVectors(ctx, tx, domainID, b.ID, r.Seq, st, changes, vecs); err != nil {
			return err
		}
		if err := p.overlayIndexes(ctx, tx, domainID, b, st); err != nil {
			return err
		}
		res = r
		return nil
	})
	if err != nil {
		var inv *lberr.Error
		if errors.As(err, &inv) || errors.Is(err, ErrHeadMoved) || errors.Is(err, ErrIdempotencyReused) {
			return nil, err
		}
		return nil, fmt.Errorf("commit to branch %q: %w", branch, err)
	}
	return res, nil
}

// customPlans makes every statement of the transaction plan for its own
// parameters. The pipeline's statements take arrays of keys whose sizes vary
// from one to tens of thousands; a cached generic plan chosen after a few
// executions can be orders of magnitude slower for another size.
func customPlans(ctx context.Context, tx pgx.Tx) error {
	if _, err := tx.Exec(ctx, customPlansSQL); err != nil {
		return fmt.Errorf("set plan cache mode: %w", err)
	}
	return nil
}

const customPlansSQL = `SET LOCAL plan_cache_mode = force_custom_plan`

// headMatches compares expected_head with the branch head ("" matches a
// branch without commits).
func headMatches(expected, head *string) bool {
	if expected == nil {
		return true
	}
	if head == nil {
		return *expected == ""
	}
	return *expected == *head
}

func loadSchema(ctx context.Context, tx pgx.Tx, branchID int32) (*schema.Schema, error) {
	row, err := store.LoadSchema(ctx, tx, branchID)
	if err != nil {
		return nil, err
	}
	return decodeSchema(row.Compiled)
}

// decodeSchema decodes a branch's compiled schema as stored.
func decodeSchema(compiled []byte) (*schema.Schema, error) {
	sch := schema.Empty()
	if err := json.Unmarshal(compiled, sch); err != nil {
		return nil, fmt.Errorf("load schema: %w", err)
	}
	return sch, nil
}

// storedAnswer is the answer an Idempotency-Key keeps: the Result as
// clients see it and its internal order, so a replay answers from the key's
// row alone.
type storedAnswer struct {
	*Result
	Seq int64 `json:"internal_seq"`
}

// claimIdempotencyKey looks the key up: an earlier commit with the same
// request answers again; another request under the key is
// ErrIdempotencyReused. A new key is inserted now (its answer is filled in
// when the commit lands), so a concurrent request with the same key waits
// for this transaction and then finds it. Keys live in their scope (the
// token that sent them) and are forgotten after ttl: an older entry is
// taken over as if new.
func claimIdempotencyKey(ctx context.Context, tx pgx.Tx, scope, key string, branchID int32, reqHash []byte, ttl time.Duration) (*Result, error) {
	secs := ttl.Seconds()
	lookup := func() (*Result, bool, error) {
		var hash, resp []byte
		err := tx.QueryRow(ctx, `SELECT request_hash, response FROM idempotency_keys
			WHERE domain_id = lb_domain() AND scope = $2 AND key = $1
			  AND created_at > now() - make_interval(secs => $3)`, key, scope, secs).Scan(&hash, &resp)
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, false, nil
		}
		if err != nil {
			return nil, false, fmt.Errorf("look up idempotency key: %w", err)
		}
		if !bytes.Equal(hash, reqHash) {
			return nil, true, ErrIdempotencyReused
		}
		var r Result
		stored := storedAnswer{Result: &r}
		if err := json.Unmarshal(resp, &stored); err != nil {
			return nil, true, fmt.Errorf("decode stored answer of idempotency key: %w", err)
		}
		r.Seq = stored.Seq
		if r.Seq == 0 {
			// An answer stored without its internal order (by an earlier
			// version): the Revision has it.
			if err := tx.QueryRow(ctx, `SELECT seq FROM revisions WHERE domain_id = lb_domain() AND id = $1`, r.Revision).Scan(&r.Seq); err != nil {
				return nil, true, fmt.Errorf("read the replayed revision %s: %w", r.Revision, err)
			}
		}
		r.Replayed = true
		return &r, true, nil
	}
	if r, found, err := lookup(); found || err != nil {
		return r, err
	}
	tag, err := tx.Exec(ctx, `INSERT INTO idempotency_keys (domain_id, scope, key, branch_id, request_hash, status, response)
		VALUES (lb_domain(), $4, $1, $2, $3, 0, '{}')
		ON CONFLICT (domain_id, scope, key) DO UPDATE
		   SET branch_id = EXCLUDED.branch_id, request_hash = EXCLUDED.request_hash,
		       status = 0, response = '{}', created_at = now()
		 WHERE idempotency_keys.created_at <= now() - make_interval(secs => $5)`, key, branchID, reqHash, scope, secs)
	if err != nil {
		return nil, fmt.Errorf("claim idempotency key: %w", err)
	}
	if tag.RowsAffected() == 1 {
		return nil, nil
	}
	// Another transaction stored the key meanwhile and has committed.
	r, found, err := lookup()
	if err != nil {
		return nil, err
	}
	if !found {
		return nil, fmt.Errorf("claim idempotency key: %w", store.ErrConflict)
	}
	return r, nil
}

// parse checks the request's shape and decodes its changes. Problems that
// make the request malformed are lberr.Invalid; the rest wait for the data.
func (p *Pipeline) parse(req *Request, ps *problemSet) ([]*change, json.RawMessage) {
	if code, msg := checkText("message", req.Message, maxMessageBytes); code != "" {
		ps.bad(-1, "message", code, "%s", msg)
	}
	if code, msg := checkText("author", req.Author, maxMessageBytes); code != "" {
		ps.bad(-1, "author", code, "%s", msg)
	}
	if req.ExpectedHead != nil && *req.ExpectedHead != "" {
		if _, err := ulid.ParseStrict(*req.ExpectedHead); err != nil {
			ps.bad(-1, "expected_head", "invalid_revision", "expected_head must be a Revision id (a ULID) or empty for a branch without commits.")
		}
	}
	commitProv := parseProvenance(req.Provenance, -1, "provenance", ps)
	switch {
	case len(req.Changes) == 0:
		ps.bad(-1, "changes", "required", "A commit needs at least one change.")
	case len(req.Changes) > p.cfg.MaxChanges:
		ps.bad(-1, "changes", "too_many", "A commit may hold at most %d changes; this one holds %d.", p.cfg.MaxChanges, len(req.Changes))
		return nil, nil
	}
	out := make([]*change, len(req.Changes))
	for i := range req.Changes {
		in := &req.Changes[i]
		c := &change{idx: i, op: in.Op, kind: in.Kind, key: in.Key, relation: in.Relation, from: in.From, to: in.To}
		if in.Op == opPut {
			c.vecFrom = in.VectorFrom
		}
		out[i] = c
		f := func(name string) string { return changeField(i, name) }
		if len(in.Provenance) > 0 {
			c.prov = parseProvenance(in.Provenance, i, f("provenance"), ps)
		}
		if len(in.Vector) > 0 && string(in.Vector) != "null" {
			if in.Op != opPut && in.Op != opPatch {
				ps.bad(i, f("vector"), "not_allowed", "Only put and patch changes carry a vector.")
			} else {
				c.vector = parseVector(in.Vector, i, f("vector"), ps)
			}
		}
		checkKeyField := func(name, v string) {
			if code, msg := checkKey(v); code != "" {
				ps.bad(i, f(name), code, "%s", msg)
			}
		}
		checkName := func(name, v string) {
			if v == "" {
				ps.bad(i, f(name), "required", "A %s change needs a %s.", c.op, name)
			}
		}
		switch in.Op {
		case opPut, opPatch:
			if in.Op == opPut {
				checkName("kind", in.Kind)
			}
			checkKeyField("key", in.Key)
			if len(in.Values) == 0 || string(in.Values) == "null" {
				if in.Op == opPatch {
					ps.bad(i, f("values"), "required", "A patch change needs values: an object of the Attributes to change.")
				}
				c.values = map[string]any{}
				break
			}
			v, err := decodeJSON(in.Values)
			m, isObj := v.(map[string]any)
			if err != nil || !isObj {
				ps.bad(i, f("values"), "invalid_json", "values must be a JSON object of Attribute values.")
				break
			}
			c.values = m
		case opDelete:
			checkKeyField("key", in.Key)
		case opLink, opUnlink:
			checkName("relation", in.Relation)
			checkKeyField("from", in.From)
			checkKeyField("to", in.To)
		case "":
			ps.bad(i, f("op"), "required", "Each change needs an op: put, patch, delete, link or unlink.")
		default:
			ps.bad(i, f("op"), "unknown_op", "Op %s is not one of put, patch, delete, link, unlink.", short(in.Op))
		}
	}
	return out, commitProv
}

// parseProvenance checks a provenance object and returns it as canonical
// JSON (nil when absent or null).
func parseProvenance(raw json.RawMessage, idx int, field string, ps *problemSet) json.RawMessage {
	if len(raw) == 0 || string(raw) == "null" {
		return nil
	}
	if len(raw) > maxProvenanceBytes {
		ps.bad(idx, field, "too_long", "Provenance may hold at most %d bytes.", maxProvenanceBytes)
		return nil
	}
	v, err := decodeJSON(raw)
	m, isObj := v.(map[string]any)
	if err != nil || !isObj {
		ps.bad(idx, field, "invalid_json", "Provenance must be a JSON object.")
		return nil
	}
	if hasNUL(m) {
		ps.bad(idx, field, "invalid_text", "Provenance may not contain NUL characters.")
		return nil
	}
	b, err := CanonicalJSON(m)
	if err != nil {
		ps.bad(idx, field, "invalid_json", "Provenance must be a JSON object.")
		return nil
	}
	return b
}

// hasNUL reports whether a decoded JSON value holds a NUL in a string or key.
func hasNUL(v any) bool {
	switch x := v.(type) {
	case string:
		return bytes.IndexByte([]byte(x), 0) >= 0
	case []any:
		for _, e := range x {
			if hasNUL(e) {
				return true
			}
		}
	case map[string]any:
		for k, e := range x {
			if bytes.IndexByte([]byte(k), 0) >= 0 || hasNUL(e) {
				return true
			}
		}
	}
	return false
}

// sha returns the sha256 of b.
func sha(b []byte) []byte {
	h := sha256.Sum256(b)
	return h[:]
}

// hexOf encodes a hash.
func hexOf(b []byte) string { return hex.EncodeToString(b) }
