package commit

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/oklog/ulid/v2"

	"github.com/lorebase/lorebase/store"
)

// objectSet collects a commit's content-addressed objects, once each.
type objectSet struct {
	seen   map[string]bool
	hashes [][]byte
	bodies []string
}

func (o *objectSet) add(body []byte) []byte {
	h := sha(body)
	if o.seen == nil {
		o.seen = map[string]bool{}
	}
	if !o.seen[string(h)] {
		o.seen[string(h)] = true
		o.hashes = append(o.hashes, h)
		o.bodies = append(o.bodies, string(body))
	}
	return h
}

// sort puts the objects in the order of their hashes.
func (o *objectSet) sort() {
	idx := make([]int, len(o.hashes))
	for i := range idx {
		idx[i] = i
	}
	slices.SortFunc(idx, func(a, b int) int { return bytes.Compare(o.hashes[a], o.hashes[b]) })
	hashes, bodies := make([][]byte, len(idx)), make([]string, len(idx))
	for i, j := range idx {
		hashes[i], bodies[i] = o.hashes[j], o.bodies[j]
	}
	o.hashes, o.bodies = hashes, bodies
}

// revisionHeader is what a new Revision needs before its rows are written.
type revisionHeader struct {
	id          string
	seq         int64 // internal order, one counter for all Domains
	number      int64 // the Domain's own Revision number, what clients see
	parents     []string
	parentHash  []string
	objects     []string         // object hashes, hex, in change order
	changes     []map[string]any // the change list, when changesJSON is not set
	changesJSON []byte           // canonical JSON of the change list, set by write or by seal from changes
	author      string
	message     string
	provenance  json.RawMessage
	hash        []byte
	expectedOld *string
	branchID    int32
	at          time.Time
	// indexed lists, by Kind, the Attributes whose per-Attribute index the
	// branch records (attribute_indexes, any state): the commit writes
	// their values into ivals.
	indexed map[string][]string
}

// indexedSQL reads the branch's recorded per-Attribute indexes as
// {"Kind": ["attr", ...]}. The store.index job records an index before it
// backfills ivals and then waits for the commits holding the branch lock,
// so a commit that locked the branch after that sees the record here.
func indexedSQL(domainID, branchID int32) string {
	return `(SELECT jsonb_object_agg(x.kind, x.attrs) FROM (SELECT a.kind, array_agg(a.attribute ORDER BY a.attribute) AS attrs
		FROM attribute_indexes a WHERE a.domain_id = ` + ilit(domainID) + ` AND a.branch_id = ` + ilit(branchID) + ` GROUP BY a.kind) x)`
}

// begin reserves the Revision's sequence number and reads its parent's
// hash and the branch's recorded per-Attribute indexes. The statements of
// before (without parameters) run first, in the same round trip.
func begin(ctx context.Context, tx pgx.Tx, domainID int32, b *store.Branch, before ...string) (*revisionHeader, error) {
	h := &revisionHeader{id: ulid.Make().String(), parents: []string{}, parentHash: []string{}, expectedOld: b.Head,
		branchID: b.ID, at: time.Now().UTC().Truncate(time.Microsecond)}
	batch := &pgx.Batch{}
	for _, sql := range before {
		batch.Queue(sql)
	}
	var parentHash []byte
	if b.Head == nil {
		batch.Queue(`SELECT nextval('revision_seq'), lb_next_revision_number(), ` + indexedSQL(domainID, b.ID)).
			QueryRow(func(row pgx.Row) error { return row.Scan(&h.seq, &h.number, &h.indexed) })
	} else {
		batch.Queue(`SELECT nextval('revision_seq'), lb_next_revision_number(),
		(SELECT hash FROM revisions WHERE domain_id = `+ilit(domainID)+` AND id = $1), `+indexedSQL(domainID, b.ID),
			*b.Head).QueryRow(func(row pgx.Row) error { return row.Scan(&h.seq, &h.number, &parentHash, &h.indexed) })
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		return nil, fmt.Errorf("next revision number: %w", err)
	}
	if b.Head == nil {
		return h, nil
	}
	if parentHash == nil {
		return nil, fmt.Errorf("parent revision %s of branch %q: %w", *b.Head, b.Name, store.ErrNotFound)
	}
	h.parents = []string{*b.Head}
	h.parentHash = []string{hexOf(parentHash)}
	return h, nil
}

// addParents adds further parents (a merge's source head) after the
// branch head, with their hashes.
func (h *revisionHeader) addParents(ctx context.Context, tx pgx.Tx, domainID int32, ids []string) error {
	for _, id := range ids {
		var hash []byte
		err := tx.QueryRow(ctx, `SELECT hash FROM revisions WHERE domain_id = `+ilit(domainID)+` AND id = $1`, id).Scan(&hash)
		if errors.Is(err, pgx.ErrNoRows) {
			return fmt.Errorf("parent revision %s: %w", id, store.ErrNotFound)
		}
		if err != nil {
			return fmt.Errorf("read parent revision %s: %w", id, err)
		}
		h.parents = append(h.parents, id)
		h.parentHash = append(h.parentHash, hexOf(hash))
	}
	return nil
}

// seal computes the Revision's hash (RevisionHash, version 2): it covers
// everything the Revision says, its parents' hashes included.
func (h *revisionHeader) seal() error {
	changes := h.changesJSON
	if changes == nil {
		var err error
		if changes, err = CanonicalJSON(anySlice(h.changes)); err != nil {
			return fmt.Errorf("revision changes: %w", err)
		}
		h.changesJSON = changes
	}
	sum, err := RevisionHash(RevisionContent{
		ID: h.id, Seq: h.seq, BranchID: h.branchID, Parents: h.parents, ParentHashes: h.parentHash,
		Author: h.author, Message: h.message, At: h.at, Provenance: h.provenance, Changes: changes,
	})
	if err != nil {
		return err
	}
	h.hash = sum
	return nil
}

// queueRevision queues the Revision row (sealed) and the compare-and-swap
// of the ref.
func queueRevision(batch *pgx.Batch, domainID int32, b *store.Branch, h *revisionHeader) error {
	if h.hash == nil {
		return fmt.Errorf("revision %s is queued before it is sealed", h.id)
	}
	changes := h.changesJSON
	var prov any
	if len(h.provenance) > 0 {
		prov = string(h.provenance)
	}
	batch.Queue(`INSERT INTO revisions (domain_id, id, seq, number, branch_id, parents, author, message, hash, provenance, changes, at, hash_version)
		VALUES (`+ilit(domainID)+`, $1, $2, $11, $3, $4, $5, $6, $7, $8::jsonb, $9::jsonb, $10, `+strconv.Itoa(HashVersion)+`)`,
		h.id, h.seq, b.ID, h.parents, h.author, h.message, h.hash, prov, string(changes), h.at, h.number)
	batch.Queue(`UPDATE refs SET head = $1, head_seq = $2
		WHERE domain_id = lb_domain() AND id = $3 AND head IS NOT DISTINCT FROM $4`,
		h.id, h.seq, b.ID, h.expectedOld).Exec(func(ct pgconn.CommandTag) error {
		if ct.RowsAffected() != 1 {
			return ErrHeadMoved
		}
		return nil
	})
	return nil
}

// recordObject writes the object of a put, patch or delete: the canonical
// JSON of {"key": key, "kind": kind, "values": values} with values, the
// canonical JSON of the Record's values after the change, nil for null.
func recordObject(buf *bytes.Buffer, key, kind string, values []byte) {
	buf.WriteString(`{"key":`)
	appendString(buf, key)
	buf.WriteString(`,"kind":`)
	appendString(buf, kind)
	buf.WriteString(`,"values":`)
	if values == nil {
		buf.WriteString("null")
	} else {
		buf.Write(values)
	}
	buf.WriteByte('}')
}

// linkObject writes the object of a link or unlink: the canonical JSON of
// {"from": from, "relation": relation, "to": to}.
func linkObject(buf *bytes.Buffer, from, relation, to string) {
	buf.WriteString(`{"from":`)
	appendString(buf, from)
	buf.WriteString(`,"relation":`)
	appendString(buf, relation)
	buf.WriteString(`,"to":`)
	appendString(buf, to)
	buf.WriteByte('}')
}

// appendChange writes the change list's entry of c as canonical JSON, its
// keys in byte order: op, object and provenance, with kind and key (put,
// patch, delete) or relation, from and to (link, unlink).
func appendChange(buf *bytes.Buffer, c *change, kind, object string) error {
	switch c.op {
	case opLink, opUnlink:
		buf.WriteString(`{"from":`)
		appendString(buf, c.from)
	default:
		buf.WriteString(`{"key":`)
		appendString(buf, c.key)
		buf.WriteString(`,"kind":`)
		appendString(buf, kind)
	}
	buf.WriteString(`,"object":`)
	appendString(buf, object)
	buf.WriteString(`,"op":`)
	appendString(buf, c.op)
	if c.prov != nil {
		buf.WriteString(`,"provenance":`)
		if err := appendCanonical(buf, c.prov); err != nil {
			return err
		}
	}
	if c.op == opLink || c.op == opUnlink {
		buf.WriteString(`,"relation":`)
		appendString(buf, c.relation)
		buf.WriteString(`,"to":`)
		appendString(buf, c.to)
	}
	buf.WriteByte('}')
	return nil
}

func anySlice(ms []map[string]any) []any {
	out := make([]any, len(ms))
	for i, m := range ms {
		out[i] = m
	}
	return out
}

// write writes a validated commit: objects, the Revision, the materialized
// Records, history and Links, and moves the ref.
func (p *Pipeline) write(ctx context.Context, tx pgx.Tx, domainID int32, b *store.Branch, st *state, changes []*change, req *Request, commitProv json.RawMessage, idemKey string, extraParents []string) (*Result, error) {
	// The staging tables that the sets may need, created in the round
	// trip that reserves the sequence numbers: each set's size is bounded
	// before the rows are built (an object per change at most, a Record
	// and a history row per Record touched, a Link row per Link changed).
	linkChanges := 0
	for _, l := range st.links {
		if l.before != l.after {
			linkChanges++
		}
	}
	th := p.cfg.CopyThresholdRows
	h, err := begin(ctx, tx, domainID, b, stageStatements([]stageBound{
		{"lb_stage_objects", objectCols(), len(changes)}, {"lb_stage_records", recordCols(), len(st.order)},
		{"lb_stage_history", historyCols(), len(st.order)}, {"lb_stage_unlinks", linkCols(), linkChanges},
		{"lb_stage_links", linkCols(), linkChanges}, {"lb_stage_link_history", linkHistoryCols(), linkChanges}}, th)...)
	if err != nil {
		return nil, err
	}
	if err := h.addParents(ctx, tx, domainID, extraParents); err != nil {
		return nil, err
	}
	h.author, h.message, h.provenance = req.Author, req.Message, commitProv

	// Objects and the Revision's change list (canonical JSON, written
	// directly), in change order.
	var objs objectSet
	lastObj := map[string][]byte{}            // Record key -> object of its last change
	lastProv := map[string]json.RawMessage{}  // Record key -> provenance of its last change
	afterJSON := make([][]byte, len(changes)) // canonical JSON of each put's and patch's values after it
	var list bytes.Buffer
	list.WriteByte('[')
	var body bytes.Buffer
	for i, c := range changes {
		if i > 0 {
			list.WriteByte(',')
		}
		body.Reset()
		kindName := ""
		switch c.op {
		case opPut, opPatch, opDelete:
			kindName = st.records[c.key].kindName
			var vb []byte
			if c.after != nil {
				if vb, err = CanonicalJSON(c.after); err != nil {
					return nil, fmt.Errorf("encode change %d: %w", c.idx, err)
				}
				afterJSON[i] = vb
			}
			recordObject(&body, c.key, kindName, vb)
		case opLink, opUnlink:
			linkObject(&body, c.from, c.relation, c.to)
		default:
			return nil, fmt.Errorf("encode change %d: unknown op %q", c.idx, c.op)
		}
		hash := objs.add(body.Bytes())
		hexHash := hexOf(hash)
		if err := appendChange(&list, c, kindName, hexHash); err != nil {
			return nil, fmt.Errorf("encode change %d: %w", c.idx, err)
		}
		h.objects = append(h.objects, hexHash)
		switch c.op {
		case opPut, opPatch, opDelete:
			lastObj[c.key] = hash
			lastProv[c.key] = c.prov
		}
	}
	list.WriteByte(']')
	h.changesJSON = list.Bytes()
	if err := h.seal(); err != nil {
		return nil, err
	}

	// Records: final rows, deletions, history.
	recs := &rowset{cols: recordCols()}
	var rKey, rKind, rTitle, rVals, rOther, rLin []string
	var rIvals []*string
	var rCreated []int64
	var rVersions []int32
	var rDeleted []bool
	hist := &rowset{cols: historyCols()}
	var hKey, hOp, hKind, hTitle []string
	var hVals, hProv []*string
	var hObj [][]byte
	seqNum := json.Number(strconv.FormatInt(h.seq, 10))
	newRecords := 0 // Records the commit creates
	// Every set's rows go in the order of its primary key (Records and
	// history by key, Links by their ends and Relation, objects by hash):
	// each insert then lands beside the one before it in the index.
	for _, key := range slices.Sorted(slices.Values(st.order)) {
		r := st.records[key]
		var title string
		var valsText *string
		if r.exists {
			// A Record present after the commit was last put or patched:
			// that change's values are its values.
			vb := afterJSON[r.lastIdx]
			if vb == nil {
				var err error
				if vb, err = CanonicalJSON(r.values); err != nil {
					return nil, fmt.Errorf("encode values of %q: %w", key, err)
				}
			}
			title = r.kind.TitleOf(r.values)
			others := maps.Clone(r.values)
			delete(others, r.kind.Title)
			lineage := map[string]any{}
			continuing := r.had && !r.recreated
			if continuing {
				lineage = maps.Clone(r.oldLineage)
			}
			for a := range lineage {
				if _, ok := r.values[a]; !ok {
					delete(lineage, a)
				}
			}
			for a, v := range r.values {
				if continuing {
					if old, ok := r.oldValues[a]; ok && sameJSON(old, v) {
						if _, has := lineage[a]; has {
							continue
						}
					}
				}
				lineage[a] = seqNum
			}
			lb, err := CanonicalJSON(lineage)
			if err != nil {
				return nil, fmt.Errorf("encode lineage of %q: %w", key, err)
			}
			created := h.seq
			if continuing {
				created = r.createdSeq
			}
			versions := int32(1)
			if r.had {
				versions = r.versions + 1
			} else {
				newRecords++
			}
			rKey = append(rKey, key)
			rKind = append(rKind, r.kindName)
			rTitle = append(rTitle, title)
			rVals = append(rVals, string(vb))
			rOther = append(rOther, r.kind.SearchText(others))
			rLin = append(rLin, string(lb))
			rCreated = append(rCreated, created)
			rVersions = append(rVersions, versions)
			rDeleted = append(rDeleted, false)
			iv, err := indexedValues(h.indexed[r.kindName], r.values)
			if err != nil {
				return nil, fmt.Errorf("encode indexed values of %q: %w", key, err)
			}
			rIvals = append(rIvals, iv)
			s := string(vb)
			valsText = &s
		} else if r.had {
			// A deleted Record keeps a tombstone row: overlays forked
			// before the deletion and reads as of an earlier Revision
			// still find its earlier versions behind it.
			lb, err := CanonicalJSON(r.oldLineage)
			if err != nil {
				return nil, fmt.Errorf("encode lineage of %q: %w", key, err)
			}
			rKey = append(rKey, key)
			rKind = append(rKind, r.oldKind)
			rTitle = append(rTitle, "")
			rVals = append(rVals, "{}")
			rOther = append(rOther, "")
			rLin = append(rLin, string(lb))
			rCreated = append(rCreated, r.createdSeq)
			rVersions = append(rVersions, r.versions+1)
			rDeleted = append(rDeleted, true)
			rIvals = append(rIvals, nil)
		}
		hKey = append(hKey, key)
		hOp = append(hOp, r.lastOp)
		hKind = append(hKind, r.kindName)
		hTitle = append(hTitle, title)
		hVals = append(hVals, valsText)
		hObj = append(hObj, lastObj[key])
		prov := lastProv[key]
		if prov == nil {
			prov = commitProv
		}
		var ps *string
		if prov != nil {
			s := string(prov)
			ps = &s
		}
		hProv = append(hProv, ps)
	}
	recs.data = []any{rKey, rKind, rTitle, rVals, rOther, rLin, rCreated, rVersions, rDeleted, rIvals}
	recs.n = len(rKey)
	hist.data = []any{hKey, hOp, hKind, hTitle, hVals, hObj, hProv}
	hist.n = len(hKey)

	// Links that change.
	var addFrom, addRel, addTo, addOrigin, delFrom, delRel, delTo, delOrigin []string
	lh := &rowset{cols: linkHistoryCols()}
	var lhFrom, lhRel, lhTo, lhOp, lhOrigin []string
	changed := make([]*link, 0, linkChanges)
	for _, l := range st.links {
		if l.before != l.after {
			changed = append(changed, l)
		}
	}
	slices.SortFunc(changed, func(a, b *link) int {
		return cmp.Or(strings.Compare(a.from, b.from), strings.Compare(a.relation, b.relation), strings.Compare(a.to, b.to))
	})
	for _, l := range changed {
		op := opLink
		if l.after {
			addFrom, addRel, addTo, addOrigin = append(addFrom, l.from), append(addRel, l.relation), append(addTo, l.to), append(addOrigin, string(l.origin))
		} else {
			op = opUnlink
			delFrom, delRel, delTo, delOrigin = append(delFrom, l.from), append(delRel, l.relation), append(delTo, l.to), append(delOrigin, string(l.origin))
		}
		lhFrom, lhRel, lhTo, lhOp, lhOrigin = append(lhFrom, l.from), append(lhRel, l.relation), append(lhTo, l.to), append(lhOp, op), append(lhOrigin, string(l.origin))
	}
	adds := &rowset{cols: linkCols(),
		data: []any{addFrom, addRel, addTo, addOrigin}, n: len(addFrom)}
	dels := &rowset{cols: linkCols(),
		data: []any{delFrom, delRel, delTo, delOrigin}, n: len(delFrom)}
	lh.data = []any{lhFrom, lhRel, lhTo, lhOp, lhOrigin}
	lh.n = len(lhFrom)
	objs.sort()
	objRows := &rowset{cols: objectCols(), data: []any{objs.hashes, objs.bodies}, n: len(objs.hashes)}

	D, B := ilit(domainID), ilit(b.ID)
	batch := &pgx.Batch{}
	// The statements take the Revision's sequence number and id as their
	// first parameters (lead: $1, $2), not as literals: a statement's text
	// is then the same in every commit of the branch, and pgx prepares it
	// once per connection instead of once per commit. The rows follow.
	queue := func(stage string, rs *rowset, lead []any, sql func(src string) string) error {
		if rs.n == 0 {
			return nil
		}
		src, args, err := source(ctx, tx, stage, rs, th, len(lead))
		if err != nil {
			return err
		}
		batch.Queue(sql(src), append(append([]any{}, lead...), args...)...)
		return nil
	}
	seqArg, seqIDArgs := []any{h.seq}, []any{h.seq, h.id}
	if err := queue("lb_stage_objects", objRows, nil, func(src string) string {
		return `INSERT INTO objects (domain_id, hash, body) SELECT ` + D + `, u.hash, u.body::jsonb FROM ` + src + ` ON CONFLICT DO NOTHING`
	}); err != nil {
		return nil, err
	}
	if err := queueRevision(batch, domainID, b, h); err != nil {
		return nil, err
	}
	if err := queue("lb_stage_records", recs, seqArg, func(src string) string {
		// iseq is the seq on insert; on update the mat_records_iseq_upd
		// trigger moves it when the Kind, title, search vector, indexed
		// values, deletion or creation changed (migrations/0023_record_iseq).
		return `INSERT INTO mat_records (domain_id, branch_id, key, kind, title, values, search, lineage, created_seq, seq, versions, deleted, ivals, iseq)
			SELECT ` + D + `, ` + B + `, u.key, u.kind, u.title, u.vals::jsonb,
				setweight(to_tsvector('simple', u.title), 'A') || setweight(to_tsvector('simple', u.other), 'B'),
				u.lineage::jsonb, u.created_seq, $1::bigint, u.versions, u.deleted, u.ivals::jsonb, $1::bigint
			FROM ` + src + `
			ON CONFLICT (domain_id, branch_id, key) DO UPDATE SET kind = EXCLUDED.kind, title = EXCLUDED.title,
				values = EXCLUDED.values, search = EXCLUDED.search, lineage = EXCLUDED.lineage,
				created_seq = EXCLUDED.created_seq, seq = EXCLUDED.seq, versions = EXCLUDED.versions, deleted = EXCLUDED.deleted,
				ivals = EXCLUDED.ivals`
	}); err != nil {
		return nil, err
	}
	if kinds, deltas := countDeltas(st); len(kinds) > 0 {
		// The branch's Record counts (migrations/0014_record_counts): its
		// counter and this Revision's change of it, on a branch that
		// keeps one.
		batch.Queue(`WITH d AS (SELECT u.kind, u.delta FROM unnest($1::text[], $2::bigint[]) u(kind, delta)),
			counted AS (SELECT 1 FROM refs WHERE domain_id = `+D+` AND id = `+B+` AND counts_from IS NOT NULL),
			logged AS (INSERT INTO mat_count_changes (domain_id, branch_id, kind, seq, delta)
				SELECT `+D+`, `+B+`, d.kind, $3::bigint, d.delta FROM d, counted)
			INSERT INTO mat_counts AS c (domain_id, branch_id, kind, records)
			SELECT `+D+`, `+B+`, d.kind, d.delta FROM d, counted ORDER BY d.kind
			ON CONFLICT (domain_id, branch_id, kind) DO UPDATE SET records = c.records + EXCLUDED.records`, kinds, deltas, h.seq)
	}
	if err := queue("lb_stage_history", hist, seqIDArgs, func(src string) string {
		return `INSERT INTO mat_history (domain_id, branch_id, key, seq, revision_id, op, kind, title, values, object_hash, provenance)
			SELECT ` + D + `, ` + B + `, u.key, $1::bigint, $2::text, u.op, u.kind, u.title, u.vals::jsonb, u.object_hash, u.provenance::jsonb
			FROM ` + src
	}); err != nil {
		return nil, err
	}
	if err := queue("lb_stage_unlinks", dels, seqArg, func(src string) string {
		// Unlinked Links keep a tombstone row (see the Records above).
		return `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq, deleted)
			SELECT ` + D + `, ` + B + `, u.from_key, u.relation, u.to_key, u.origin::"char", $1::bigint, true FROM ` + src + `
			ON CONFLICT (domain_id, branch_id, from_key, relation, to_key) DO UPDATE
				SET deleted = true, seq = EXCLUDED.seq, origin = EXCLUDED.origin`
	}); err != nil {
		return nil, err
	}
	if err := queue("lb_stage_links", adds, seqArg, func(src string) string {
		return `INSERT INTO mat_links (domain_id, branch_id, from_key, relation, to_key, origin, seq)
			SELECT ` + D + `, ` + B + `, u.from_key, u.relation, u.to_key, u.origin::"char", $1::bigint FROM ` + src + `
			ON CONFLICT (domain_id, branch_id, from_key, relation, to_key) DO UPDATE
				SET deleted = false, seq = EXCLUDED.seq, origin = EXCLUDED.origin`
	}); err != nil {
		return nil, err
	}
	if err := queue("lb_stage_link_history", lh, seqArg, func(src string) string {
		return `INSERT INTO mat_link_history (domain_id, branch_id, from_key, relation, to_key, seq, op, origin)
			SELECT ` + D + `, ` + B + `, u.from_key, u.relation, u.to_key, $1::bigint, u.op, u.origin::"char" FROM ` + src
	}); err != nil {
		return nil, err
	}
	res := &Result{Revision: h.id, Seq: h.seq, Number: h.number, Parents: h.parents, Changes: len(changes)}
	if idemKey != "" {
		resp, err := json.Marshal(storedAnswer{Result: res, Seq: res.Seq})
		if err != nil {
			return nil, fmt.Errorf("encode answer: %w", err)
		}
		batch.Queue(`UPDATE idempotency_keys SET status = 201, response = $2::jsonb
			WHERE domain_id = lb_domain() AND scope = $3 AND key = $1`, idemKey, string(resp), req.IdempotencyScope)
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		if errors.Is(err, ErrHeadMoved) {
			return nil, ErrHeadMoved
		}
		return nil, fmt.Errorf("write commit: %w", err)
	}
	// A large commit queues the Domain's statistics; so does every
	// analyzeEveryRevisions-th Revision that creates rows, for a Domain
	// that grows by small commits.
	created := newRecords + adds.n
	large := created >= p.cfg.analyzeAfterRows()
	periodic := created > 0 && h.number%p.cfg.analyzeEveryRevisions() == 0
	if p.cfg.AnalyzeJobs != nil && (large || periodic) {
		if err := p.cfg.AnalyzeJobs(ctx, tx, domainID); err != nil {
			return nil, fmt.Errorf("queue analyze: %w", err)
		}
	}
	return res, nil
}

// indexedValues is a Record's ivals: the canonical JSON object of its
// values of attrs (the indexed Attributes of its Kind), those it has; nil
// (NULL) when it has none.
func indexedValues(attrs []string, values map[string]any) (*string, error) {
	if len(attrs) == 0 {
		return nil, nil
	}
	m := make(map[string]any, len(attrs))
	for _, a := range attrs {
		if v, ok := values[a]; ok {
			m[a] = v
		}
	}
	if len(m) == 0 {
		return nil, nil
	}
	b, err := CanonicalJSON(m)
	if err != nil {
		return nil, err
	}
	s := string(b)
	return &s, nil
}

// countDeltas is what the commit changes in the branch's count of each
// Kind's present Records, Kinds in name order, those it leaves unchanged
// left out: a Record present before (on an overlay, as the branch read it
// through its base) no longer counts for its old Kind, one present after
// counts for its Kind.
func countDeltas(st *state) ([]string, []int64) {
	delta := map[string]int64{}
	for _, key := range st.order {
		r := st.records[key]
		if r.had {
			delta[r.oldKind]--
		}
		if r.exists {
			delta[r.kindName]++
		}
	}
	kinds := make([]string, 0, len(delta))
	for k, n := range delta {
		if n != 0 {
			kinds = append(kinds, k)
		}
	}
	sort.Strings(kinds)
	deltas := make([]int64, len(kinds))
	for i, k := range kinds {
		deltas[i] = delta[k]
	}
	return kinds, deltas
}

// sameJSON reports whether two decoded JSON values are equal as canonical JSON.
func sameJSON(a, b any) bool {
	switch x := a.(type) {
	case string:
		y, ok := b.(string)
		return ok && x == y
	case json.Number:
		// Written as they are: equal texts of a valid number are equal.
		if y, ok := b.(json.Number); ok && x == y {
			return x != "" && json.Valid([]byte(x))
		}
	case bool:
		if y, ok := b.(bool); ok {
			return x == y
		}
	}
	ab, err1 := CanonicalJSON(a)
	bb, err2 := CanonicalJSON(b)
	return err1 == nil && err2 == nil && string(ab) == string(bb)
}
