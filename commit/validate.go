package commit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/schema"
)

// load reads every stored Record and Link the commit needs: the Records it
// changes, links or unlinks; the targets of the ref values it sets that the
// Records did not hold before; every Link out of a Record it deletes or links
// from, and out of every Record it puts or patches of a Kind a required
// Relation starts from; every Link into a Record it deletes. A patch does not
// name its Kind: the Links out of a patched Record of such a Kind are read
// once its stored row says so, in the round trip that reads the new ref
// targets (one more round trip when there are none).
//
// The foreign-key Links out of the other Records it puts or patches are not
// read: a Record holds one foreign-key Link per ref Attribute of its Kind
// that has a value, named after the Attribute and pointing at that value (a
// commit writes them so, and a ref Attribute changes type or goes away only
// once no Record holds a value for it), so they follow from the values just
// read. A put or patch cannot change a Record's Kind (that takes a deletion
// first), so its other Links neither change nor need a check unless a link,
// an unlink or a required Relation involves them. A ref value the Record
// already held needs no read of its target either: the target exists (a
// Record still referred to cannot be deleted) and is of the Attribute's Kind.
func (p *Pipeline) load(ctx context.Context, tx pgx.Tx, domainID, branchID int32, through bool, st *state, changes []*change) error {
	refNames := map[string]bool{}
	for _, k := range st.sch.Kinds {
		for _, a := range k.RefAttributes() {
			refNames[a.Name] = true
		}
	}
	// The Kinds a required Relation starts from: the check counts the Links
	// out of their Records.
	requiredFrom := map[string]bool{}
	for _, rel := range st.sch.Relations {
		if rel.Required {
			requiredFrom[rel.From] = true
		}
	}
	type refUse struct{ key, attr, target string }
	var refs []refUse
	keySet := map[string]struct{}{}
	fromSet := map[string]struct{}{} // every Link out of these
	fkSet := map[string]struct{}{}   // the foreign-key Links out of these
	// Patched Records, whose Kind is known once they are read: every Link
	// out of those of a Kind a required Relation starts from is read after
	// them; the others keep their place in fkSet.
	patched := map[string]struct{}{}
	delSet := map[string]struct{}{}
	for _, c := range changes {
		switch c.op {
		case opPut, opPatch:
			keySet[c.key] = struct{}{}
			if requiredFrom[c.kind] {
				fromSet[c.key] = struct{}{}
			} else {
				fkSet[c.key] = struct{}{}
			}
			if c.op == opPatch && len(requiredFrom) > 0 {
				patched[c.key] = struct{}{}
			}
			for a, v := range c.values {
				if s, ok := v.(string); ok && refNames[a] {
					if code, _ := checkKey(s); code == "" {
						refs = append(refs, refUse{c.key, a, s})
					}
				}
			}
		case opDelete:
			keySet[c.key] = struct{}{}
			fromSet[c.key] = struct{}{}
			delSet[c.key] = struct{}{}
		case opLink, opUnlink:
			keySet[c.from] = struct{}{}
			keySet[c.to] = struct{}{}
			fromSet[c.from] = struct{}{}
		}
	}
	for k := range fromSet {
		delete(fkSet, k)
		delete(patched, k)
	}
	// The Records the commit puts, patches or deletes are read whole; the
	// ends of its Links only as far as the checks look at them: whether
	// they exist and their Kind.
	full, ends := map[string]struct{}{}, map[string]struct{}{}
	for _, c := range changes {
		switch c.op {
		case opPut, opPatch, opDelete:
			full[c.key] = struct{}{}
		}
	}
	for k := range keySet {
		if _, ok := full[k]; !ok {
			ends[k] = struct{}{}
		}
	}
	// The Records and the Links travel in one round trip: which Links are
	// read follows from the changes alone.
	batch := &pgx.Batch{}
	queueReadRecords(batch, domainID, branchID, through, st, setList(full), setList(ends))
	if len(fromSet) > 0 || len(delSet) > 0 {
		queueReadLinks(batch, domainID, branchID, through, st, setList(fromSet), setList(delSet))
	}
	if batch.Len() > 0 {
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return err
		}
	}

	// The targets of ref values that are new to their Record.
	targets := map[string]struct{}{}
	for _, u := range refs {
		if _, read := keySet[u.target]; read {
			continue
		}
		if r := st.records[u.key]; r != nil && r.had {
			if old, ok := r.oldValues[u.attr].(string); ok && old == u.target {
				continue
			}
		}
		targets[u.target] = struct{}{}
	}
	// The patched Records of a Kind a required Relation starts from: every
	// Link out of them (the check counts them), read with the targets.
	requiredOut := map[string]struct{}{}
	for k := range patched {
		if r := st.records[k]; r != nil && r.had && requiredFrom[r.oldKind] {
			requiredOut[k] = struct{}{}
		}
	}
	if len(targets) > 0 || len(requiredOut) > 0 {
		batch := &pgx.Batch{}
		queueReadRecords(batch, domainID, branchID, through, st, nil, setList(targets))
		if len(requiredOut) > 0 {
			queueReadLinks(batch, domainID, branchID, through, st, setList(requiredOut), []string{})
		}
		if err := tx.SendBatch(ctx, batch).Close(); err != nil {
			return err
		}
	}

	// The foreign-key Links of the Records in fkSet, from their stored
	// values. A Record that did not exist before the commit has none (a
	// deleted one's went with it).
	for key := range fkSet {
		r := st.records[key]
		if r == nil || !r.had {
			continue
		}
		k, ok := st.sch.Kind(r.oldKind)
		if !ok {
			continue
		}
		for _, a := range k.RefAttributes() {
			if v, ok := refValue(r.oldValues, a); ok {
				lk := linkKey{key, a.Name, v}
				if st.links[lk] == nil {
					st.links[lk] = &link{linkKey: lk, origin: 'r', before: true, after: true}
				}
			}
		}
	}

	return nil
}

// queueReadLinks queues the read of every stored Link out of the Records
// of from and into those of into.
func queueReadLinks(batch *pgx.Batch, domainID, branchID int32, through bool, st *state, from, into []string) {
	D, B := ilit(domainID), ilit(branchID)
	// Each key is looked up on its own (a lateral subquery that OFFSET 0
	// keeps from being flattened into a join): with the keys as one
	// "= ANY" condition the planner weighs their index probes against one
	// scan of the branch's Links filtered by key, and picks the scan
	// whenever the statistics say the branch has few Links, as they do
	// while a new Domain is loaded faster than autovacuum analyzes it (75
	// to 110 ms a call at 1M). The Domain and branch are InitPlan values
	// ((SELECT 7)), unknown when the statement is planned: a constant
	// Domain that the partition's statistics do not know (a new tenant
	// beside a large one in its partition) is estimated at a row, and
	// the planner then scans the branch for each key in whichever index
	// leads with the Domain and branch (executed under EXPLAIN ANALYZE,
	// 11.1 s for 1,000 keys among the branch's 200,000 Links in
	// TestReadsProbeByKeyWithStaleStatistics, against 3.6 to 5.9 ms).
	// Unknown, they are estimated as an average Domain of the partition,
	// and the index the key leads wins. The partition is then chosen when
	// the statement runs, and all eight are planned (0.1 to 0.45 ms more a
	// statement).
	linkSQL := `SELECT l.from_key, l.relation, l.to_key, l.origin FROM unnest($1::text[]) k(key)
		CROSS JOIN LATERAL (SELECT o.from_key, o.relation, o.to_key, o.origin FROM mat_links o
			WHERE o.domain_id = (SELECT ` + D + `) AND o.branch_id = (SELECT ` + B + `) AND o.from_key = k.key AND NOT o.deleted OFFSET 0) l
		UNION ALL
		SELECT l.from_key, l.relation, l.to_key, l.origin FROM unnest($2::text[]) k(key)
		CROSS JOIN LATERAL (SELECT o.from_key, o.relation, o.to_key, o.origin FROM mat_links o
			WHERE o.domain_id = (SELECT ` + D + `) AND o.branch_id = (SELECT ` + B + `) AND o.to_key = k.key AND NOT o.deleted OFFSET 0) l`
	if through {
		// lb_state_links answers Links with either end among the keys:
		// keep the outgoing Links of from and the incoming of into.
		linkSQL = `SELECT s.from_key, s.relation, s.to_key, s.origin FROM lb_state_links(` + B + `, $1::text[] || $2::text[]) s
		WHERE s.from_key = ANY($1::text[]) OR s.to_key = ANY($2::text[])`
	}
	// A Link may come twice (out of one Record and into another): the map
	// keeps it once. A foreign-key Link that load took from a Record's
	// stored values is the same Link; the stored row's origin is kept.
	batch.Queue(linkSQL, from, into).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			var k linkKey
			var origin byte
			if err := rows.Scan(&k.from, &k.relation, &k.to, &origin); err != nil {
				return fmt.Errorf("read links: %w", err)
			}
			st.links[k] = &link{linkKey: k, origin: origin, before: true, after: true}
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read links: %w", err)
		}
		return nil
	})
}

// prefetchRecords is the number of Records from which a commit on a branch
// that owns its rows reads them by lb_commit_records.
const prefetchRecords = 32

// queueReadRecords queues the read of the stored Records of whole and ends
// into st, in one statement. A branch that reads through its base (an
// overlay, a copy still copying) reads the effective state of its level
// chain; one that owns all its rows reads them directly, by lb_commit_records
// when they are prefetchRecords or more, which prefetches their heap pages
// (its statement is planned at each call: 0.18 ms, more than a few Records'
// pages cost). The Records of whole are read with their values and lineage;
// of those of ends only the Kind is read (their values and lineage are
// neither sent nor decoded): enough for a Record the commit only links,
// unlinks or refers to, which it does not change. Nothing is queued when both
// are empty.
func queueReadRecords(batch *pgx.Batch, domainID, branchID int32, through bool, st *state, whole, ends []string) {
	if len(whole) == 0 && len(ends) == 0 {
		return
	}
	var sql string
	var args []any
	if !through && len(whole)+len(ends) >= prefetchRecords {
		if whole == nil {
			whole = []string{}
		}
		if ends == nil {
			ends = []string{}
		}
		sql = `SELECT whole, key, kind, values, lineage, created_seq, versions FROM lb_commit_records(` +
			ilit(domainID) + `, ` + ilit(branchID) + `, $1::text[], $2::text[])`
		args = []any{whole, ends}
	} else {
		from := func(param string) string {
			if through {
				return ` FROM lb_state_records(` + ilit(branchID) + `, ` + param + `::text[])`
			}
			// Each key looked up on its own, the Domain and branch
			// unknown when planned, as for the Links (see
			// queueReadLinks). With the statistics of an empty partition
			// the branch's range of mat_records_iseq_idx is still
			// estimated at a few rows and, a level shorter to descend
			// than the primary key, scanned for each key
			// (TestReadsProbeByKeyWithStaleStatistics).
			return ` FROM unnest(` + param + `::text[]) k(k) CROSS JOIN LATERAL (
			SELECT o.key, o.kind, o."values", o.lineage, o.created_seq, o.versions FROM mat_records o
			WHERE o.domain_id = (SELECT ` + ilit(domainID) + `) AND o.branch_id = (SELECT ` + ilit(branchID) + `) AND o.key = k.k AND NOT o.deleted OFFSET 0) m`
		}
		var parts []string
		if len(whole) > 0 {
			args = append(args, whole)
			parts = append(parts, `SELECT true, key, kind, values, lineage, created_seq, versions`+from("$"+strconv.Itoa(len(args))))
		}
		if len(ends) > 0 {
			args = append(args, ends)
			parts = append(parts, `SELECT false, key, kind, NULL::jsonb, NULL::jsonb, created_seq, versions`+from("$"+strconv.Itoa(len(args))))
		}
		sql = strings.Join(parts, "\n\t\tUNION ALL\n\t\t")
	}
	batch.Queue(sql, args...).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			var isWhole bool
			var key, kind string
			var vals, lin []byte
			var created int64
			var versions int32
			if err := rows.Scan(&isWhole, &key, &kind, &vals, &lin, &created, &versions); err != nil {
				return fmt.Errorf("read records: %w", err)
			}
			r := st.rec(key)
			r.had, r.exists = true, true
			r.oldKind, r.kindName = kind, kind
			r.kind, _ = st.sch.Kind(kind)
			r.createdSeq, r.versions = created, versions
			if !isWhole {
				continue
			}
			var err error
			if r.oldValues, err = decodeObject(vals); err != nil {
				return fmt.Errorf("read records: values of %q: %w", key, err)
			}
			if r.oldLineage, err = decodeObject(lin); err != nil {
				return fmt.Errorf("read records: lineage of %q: %w", key, err)
			}
			r.values = r.oldValues
		}
		if err := rows.Err(); err != nil {
			return fmt.Errorf("read records: %w", err)
		}
		return nil
	})
}

func setList(m map[string]struct{}) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// decodeObject decodes a stored jsonb object with UseNumber.
func decodeObject(b []byte) (map[string]any, error) {
	if len(b) == 0 {
		return map[string]any{}, nil
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var m map[string]any
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		m = map[string]any{}
	}
	return m, nil
}

// apply runs the changes in order over the loaded state, reporting what
// each change alone gets wrong. Checks that depend on the final state run
// afterwards (check).
func apply(st *state, changes []*change, ps *problemSet) {
	for _, c := range changes {
		i := c.idx
		f := func(name string) string { return changeField(i, name) }
		switch c.op {
		case opPut:
			r := st.touch(c)
			k, ok := st.sch.Kind(c.kind)
			if !ok {
				ps.add(i, f("kind"), "unknown_kind", "The schema has no kind named %s.", short(c.kind))
			} else if r.exists && r.kindName != c.kind {
				ps.add(i, f("kind"), "kind_changed", "Record %s is a %s, not a %s; delete it first to reuse its key for another kind.", short(c.key), r.kindName, c.kind)
			}
			r.exists, r.kindName, r.kind, r.putIdx, r.attrIdx = true, c.kind, k, i, nil
			r.values, r.broken = map[string]any{}, true
			if k != nil {
				norm, vps := k.ValidateValues(c.values)
				for _, vp := range vps {
					ps.add(i, f(vp.Field), vp.Code, "%s", vp.Message)
				}
				if len(vps) == 0 {
					r.values, r.broken = norm, false
				}
			}
			c.after = r.values
		case opPatch:
			r := st.touch(c)
			if !r.exists {
				ps.add(i, f("key"), "not_found", "Record %s does not exist on this branch; put it first.", short(c.key))
				r.broken = true
				break
			}
			if c.kind != "" && c.kind != r.kindName {
				ps.add(i, f("kind"), "kind_mismatch", "Record %s is a %s, not a %s.", short(c.key), r.kindName, short(c.kind))
			}
			if r.kind == nil {
				ps.add(i, f("key"), "unknown_kind", "Record %s is a %s, which the schema no longer defines.", short(c.key), r.kindName)
				r.broken = true
				break
			}
			norm, vps := r.kind.ValidatePatch(c.values)
			for _, vp := range vps {
				ps.add(i, f(vp.Field), vp.Code, "%s", vp.Message)
			}
			if len(vps) > 0 {
				r.broken = true
				break
			}
			merged := maps.Clone(r.values)
			if merged == nil {
				merged = map[string]any{}
			}
			if r.attrIdx == nil {
				r.attrIdx = map[string]int{}
			}
			for a, v := range norm {
				if v == nil {
					delete(merged, a)
				} else {
					merged[a] = v
				}
				r.attrIdx[a] = i
			}
			if !r.broken {
				for _, vp := range r.kind.MissingRequired(merged) {
					ps.add(i, f(vp.Field), vp.Code, "%s", vp.Message)
				}
			}
			r.values = merged
			c.after = merged
		case opDelete:
			r := st.touch(c)
			if !r.exists {
				ps.add(i, f("key"), "not_found", "Record %s does not exist on this branch.", short(c.key))
			} else if c.kind != "" && c.kind != r.kindName {
				ps.add(i, f("kind"), "kind_mismatch", "Record %s is a %s, not a %s.", short(c.key), r.kindName, short(c.kind))
			}
			r.exists, r.values, r.broken, r.recreated, r.deleteIdx, r.attrIdx = false, nil, false, true, i, nil
			r.putIdx = -1
			c.after = nil
		case opLink, opUnlink:
			if _, ok := st.sch.Relation(c.relation); !ok {
				ps.add(i, f("relation"), "unknown_relation", "The schema has no relation named %s.", short(c.relation))
				break
			}
			l := st.link(linkKey{c.from, c.relation, c.to})
			if c.op == opLink {
				if l.after {
					ps.add(i, f("to"), "already_linked", "%s is already linked to %s by %s.", short(c.from), short(c.to), c.relation)
				}
				l.after, l.origin = true, 'l'
			} else {
				if !l.after {
					ps.add(i, f("to"), "not_linked", "%s is not linked to %s by %s.", short(c.from), short(c.to), c.relation)
				}
				l.after = false
			}
		}
	}
}

// touch returns the Record a put, patch or delete changes and notes the change.
func (st *state) touch(c *change) *record {
	r := st.rec(c.key)
	if !r.touched {
		r.touched = true
		st.order = append(st.order, c.key)
	}
	r.lastIdx, r.lastOp = c.idx, c.op
	return r
}

// refValue returns the ref value of Attribute a in values, if any.
func refValue(values map[string]any, a *schema.Attribute) (string, bool) {
	s, ok := values[a.Name].(string)
	return s, ok && s != ""
}

// uniqueText is a unique Attribute's value as `values ->> 'attr'` gives it.
func uniqueText(v any) (string, bool) {
	switch x := v.(type) {
	case string:
		return x, true
	case json.Number:
		return string(x), true
	}
	return "", false
}

// check runs the checks of the commit's final state: foreign-key Links,
// ref targets, Link ends, cardinality, required Relations, deletions of
// linked Records and unique Attributes.
func check(ctx context.Context, tx pgx.Tx, domainID, branchID int32, st *state, changes []*change, ps *problemSet) error {
	sch := st.sch
	// Foreign-key Links follow the final values of every changed Record.
	fkOut := map[string][]*link{}
	for _, l := range st.links {
		if l.origin == 'r' {
			fkOut[l.from] = append(fkOut[l.from], l)
		}
	}
	for _, key := range st.order {
		r := st.records[key]
		for _, l := range fkOut[key] {
			l.after = false
		}
		if !r.exists || r.kind == nil {
			continue
		}
		for _, a := range r.kind.RefAttributes() {
			if v, ok := refValue(r.values, a); ok {
				l := st.link(linkKey{key, a.Name, v})
				l.after, l.origin = true, 'r'
			}
		}
	}

	// Ref targets exist after the commit and are of the Attribute's Kind.
	for _, key := range st.order {
		r := st.records[key]
		if !r.exists || r.kind == nil || r.broken {
			continue
		}
		for _, a := range r.kind.RefAttributes() {
			v, ok := refValue(r.values, a)
			if !ok {
				continue
			}
			t := st.records[v]
			if t == nil && r.had {
				if old, ok := refValue(r.oldValues, a); ok && old == v {
					// Unchanged by this commit: the target existed before, and
					// a target deleted by this commit would have been read.
					continue
				}
			}
			i := r.blame(a.Name)
			field := fmt.Sprintf("changes[%d].values.%s", i, a.Name)
			switch {
			case t == nil || !t.exists:
				ps.add(i, field, "unknown_ref", "Attribute %q refers to Record %s, which does not exist on this branch.", a.Name, short(v))
			case t.kindName != a.Kind:
				ps.add(i, field, "ref_kind", "Attribute %q must refer to a %s; %s is a %s.", a.Name, a.Kind, short(v), t.kindName)
			}
		}
	}

	// Link ends exist after the commit with the Relation's Kinds.
	type pairKey struct{ from, relation string }
	linkedPairs := map[pairKey]int{} // cardinality-one pairs linked by the commit -> change index
	for _, c := range changes {
		if c.op != opLink {
			continue
		}
		rel, ok := sch.Relation(c.relation)
		if !ok {
			continue
		}
		for _, end := range []struct{ name, key, kind string }{{"from", c.from, rel.From}, {"to", c.to, rel.To}} {
			t := st.records[end.key]
			switch {
			case t == nil || !t.exists:
				ps.add(c.idx, changeField(c.idx, end.name), "unknown_record", "Record %s does not exist on this branch after the commit.", short(end.key))
			case t.kindName != end.kind:
				ps.add(c.idx, changeField(c.idx, end.name), "relation_kind", "Relation %s links a %s to a %s; %s is a %s.", rel.Name, rel.From, rel.To, short(end.key), t.kindName)
			}
		}
		if rel.Cardinality == schema.CardinalityOne {
			linkedPairs[pairKey{c.from, c.relation}] = c.idx
		}
	}

	// Links out of and into each Record after the commit.
	outCount := map[pairKey]int{}
	deleted := map[string]*record{}
	for _, key := range st.order {
		if r := st.records[key]; !r.exists && r.deleteIdx >= 0 {
			deleted[key] = r
		}
	}
	kindChanged := func(r *record) bool { return r != nil && r.had && r.exists && r.kindName != r.oldKind }
	stillLinked := map[string][]string{}
	for _, l := range st.links {
		if !l.after {
			continue
		}
		outCount[pairKey{l.from, l.relation}]++
		desc := func() string { return fmt.Sprintf("%s -%s-> %s", short(l.from), l.relation, short(l.to)) }
		if _, gone := deleted[l.from]; gone {
			stillLinked[l.from] = append(stillLinked[l.from], desc())
		}
		if _, gone := deleted[l.to]; gone && l.from != l.to {
			stillLinked[l.to] = append(stillLinked[l.to], desc())
		}
		// A Record put again under another Kind keeps its Links only where
		// they still fit.
		fr, tr := st.records[l.from], st.records[l.to]
		if l.origin == 'l' && (kindChanged(fr) || kindChanged(tr)) {
			if rel, ok := sch.Relation(l.relation); ok && fr != nil && tr != nil && (fr.kindName != rel.From || tr.kindName != rel.To) {
				blame := fr
				if !kindChanged(fr) {
					blame = tr
				}
				ps.add(blame.lastIdx, fmt.Sprintf("changes[%d].kind", blame.lastIdx), "relation_kind",
					"Link %s no longer fits relation %s (%s to %s); unlink it first.", desc(), rel.Name, rel.From, rel.To)
			}
		}
		if l.origin == 'r' && kindChanged(tr) && fr != nil && fr.kind != nil {
			if a, ok := fr.kind.Attr(l.relation); ok && a.Kind != tr.kindName {
				ps.add(tr.lastIdx, fmt.Sprintf("changes[%d].kind", tr.lastIdx), "still_linked",
					"Record %s is referred to by %s as a %s.", short(l.to), short(l.from), a.Kind)
			}
		}
	}
	for key, r := range deleted {
		linkers := stillLinked[key]
		if len(linkers) == 0 {
			continue
		}
		sort.Strings(linkers)
		more := ""
		if len(linkers) > 5 {
			more = fmt.Sprintf(" and %d more", len(linkers)-5)
			linkers = linkers[:5]
		}
		ps.add(r.deleteIdx, fmt.Sprintf("changes[%d].key", r.deleteIdx), "still_linked",
			"Record %s is still linked (%s%s); unlink these Links or change the Records that refer to it in the same commit.",
			short(key), strings.Join(linkers, ", "), more)
	}

	// Cardinality one.
	for pk, idx := range linkedPairs {
		if n := outCount[pk]; n > 1 {
			ps.add(idx, fmt.Sprintf("changes[%d].to", idx), "cardinality",
				"Relation %s allows one Link per %s; %s would have %d.", pk.relation, sch.Relations[pk.relation].From, short(pk.from), n)
		}
	}

	// Required Relations of every Record the commit puts, patches or unlinks from.
	required := map[string][]*schema.Relation{}
	for _, name := range sch.RelationNames() {
		if rel := sch.Relations[name]; rel.Required {
			required[rel.From] = append(required[rel.From], rel)
		}
	}
	if len(required) > 0 {
		subjects := map[string]int{} // key -> change index to blame
		for _, key := range st.order {
			if r := st.records[key]; r.exists && !r.broken {
				subjects[key] = r.lastIdx
			}
		}
		for _, c := range changes {
			if c.op == opUnlink {
				if r := st.records[c.from]; r != nil && r.exists {
					if _, seen := subjects[c.from]; !seen || subjects[c.from] < c.idx {
						subjects[c.from] = c.idx
					}
				}
			}
		}
		for key, idx := range subjects {
			r := st.records[key]
			for _, rel := range required[r.kindName] {
				if outCount[pairKey{key, rel.Name}] == 0 {
					ps.add(idx, fmt.Sprintf("changes[%d]", idx), "required_link",
						"A %s needs at least one %s Link; %s would have none.", r.kindName, rel.Name, short(key))
				}
			}
		}
	}

	return checkUnique(ctx, tx, branchID, st, ps)
}

// checkUnique checks unique Attributes within the commit and against the
// branch: one statement per unique Attribute the commit sets, written with
// the Domain, branch, Kind and Attribute as literals and the Attribute's
// index expression (lb_state_unique, lb_attr_expr) so that its partial
// index serves it.
func checkUnique(ctx context.Context, tx pgx.Tx, branchID int32, st *state, ps *problemSet) error {
	type attrKey struct{ kind, attr string }
	type holder struct {
		key string
		idx int
	}
	seen := map[attrKey]map[string]holder{}
	var order []attrKey
	for _, key := range st.order {
		r := st.records[key]
		if !r.exists || r.kind == nil || r.broken {
			continue
		}
		for _, a := range r.kind.Attributes {
			if !a.Unique {
				continue
			}
			text, ok := uniqueText(r.values[a.Name])
			if !ok {
				continue
			}
			ak := attrKey{r.kindName, a.Name}
			m := seen[ak]
			if m == nil {
				m = map[string]holder{}
				seen[ak] = m
				order = append(order, ak)
			}
			i := r.blame(a.Name)
			if first, dup := m[text]; dup {
				ps.add(i, fmt.Sprintf("changes[%d].values.%s", i, a.Name), "unique",
					"Attribute %q of %s must be unique; %s also sets %s.", a.Name, r.kindName, short(first.key), short(text))
				continue
			}
			m[text] = holder{key, i}
		}
	}
	B := ilit(branchID)
	for _, ak := range order {
		m := seen[ak]
		texts := make([]string, 0, len(m))
		for t := range m {
			texts = append(texts, t)
		}
		sort.Strings(texts)
		// lb_state_unique runs the check with the Domain, branch, Kind and
		// Attribute as literals, as the owner, so the per-Attribute index
		// serves it under row-level security too, and over a level chain.
		rows, err := tx.Query(ctx, `SELECT key, value FROM lb_state_unique(`+B+`, `+lit(ak.kind)+`, `+lit(ak.attr)+`, $1::text[])`, texts)
		if err != nil {
			return fmt.Errorf("check unique %s.%s: %w", ak.kind, ak.attr, err)
		}
		for rows.Next() {
			var key, text string
			if err := rows.Scan(&key, &text); err != nil {
				rows.Close()
				return fmt.Errorf("check unique %s.%s: %w", ak.kind, ak.attr, err)
			}
			if r := st.records[key]; r != nil && r.touched {
				continue // its final value is among the commit's own
			}
			h, ok := m[text]
			if !ok || h.key == key {
				continue
			}
			ps.add(h.idx, fmt.Sprintf("changes[%d].values.%s", h.idx, ak.attr), "unique",
				"Attribute %q of %s must be unique; Record %s already holds %s.", ak.attr, ak.kind, short(key), short(text))
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("check unique %s.%s: %w", ak.kind, ak.attr, err)
		}
	}
	return nil
}
