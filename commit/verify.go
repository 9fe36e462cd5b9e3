package commit

import (
	"bytes"
	"context"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// HashVersion is the version of RevisionHash new Revisions are sealed with.
const HashVersion = 2

// RevisionContent is everything a Revision says, as RevisionHash covers it.
type RevisionContent struct {
	ID           string
	Seq          int64
	BranchID     int32
	Parents      []string // parent Revision ids
	ParentHashes []string // their hashes, hex, in the same order
	Author       string
	Message      string
	At           time.Time
	Provenance   json.RawMessage // the commit's provenance; empty for none
	Changes      json.RawMessage // the changes array as stored
}

// RevisionHash is the hash of a Revision (version 2): sha256 of the
// canonical JSON of its id, sequence number, branch, parents with their
// hashes, author, message, time (RFC 3339, microseconds, UTC), provenance
// and changes (each with its object's hash and its own provenance).
// Numbers inside provenance and changes are hashed as PostgreSQL's jsonb
// writes them, so a Revision read back from the database hashes the same.
func RevisionHash(c RevisionContent) ([]byte, error) {
	var prov any
	if len(c.Provenance) > 0 {
		v, err := decodeJSON(c.Provenance)
		if err != nil {
			return nil, fmt.Errorf("revision provenance: %w", err)
		}
		prov = jsonbNumbers(v)
	}
	// A change list as the pipeline writes it (canonical JSON) without
	// numbers or a \ufffd escape is what decoding and encoding it again
	// would write: it goes in as it is.
	var changes any = canonicalBytes(c.Changes)
	if !plainCanonical(c.Changes) {
		v, err := decodeJSON(c.Changes)
		if err != nil {
			return nil, fmt.Errorf("revision changes: %w", err)
		}
		changes = jsonbNumbers(v)
	}
	if len(c.Parents) != len(c.ParentHashes) {
		return nil, fmt.Errorf("revision %s: %d parents but %d parent hashes", c.ID, len(c.Parents), len(c.ParentHashes))
	}
	parents := make([]any, len(c.Parents))
	for i := range c.Parents {
		parents[i] = map[string]any{"id": c.Parents[i], "hash": c.ParentHashes[i]}
	}
	body, err := CanonicalJSON(map[string]any{
		"version": HashVersion, "id": c.ID, "seq": c.Seq, "branch": int64(c.BranchID),
		"parents": parents, "author": c.Author, "message": c.Message,
		"at":         c.At.UTC().Truncate(time.Microsecond).Format("2006-01-02T15:04:05.000000Z"),
		"provenance": prov, "changes": changes,
	})
	if err != nil {
		return nil, fmt.Errorf("revision hash: %w", err)
	}
	return sha(body), nil
}

// revisionHashV1 is the hash of Revisions sealed before version 2: parents'
// hashes, objects' hashes in change order, author, message, provenance.
func revisionHashV1(parentHashes []string, changes json.RawMessage, author, message string, provenance json.RawMessage) ([]byte, error) {
	var prov any
	if len(provenance) > 0 {
		v, err := decodeJSON(provenance)
		if err != nil {
			return nil, fmt.Errorf("revision provenance: %w", err)
		}
		prov = v
	}
	var list []struct {
		Object string `json:"object"`
	}
	if err := json.Unmarshal(changes, &list); err != nil {
		return nil, fmt.Errorf("revision changes: %w", err)
	}
	objects := make([]any, len(list))
	for i, c := range list {
		objects[i] = c.Object
	}
	ph := make([]any, len(parentHashes))
	for i, p := range parentHashes {
		ph[i] = p
	}
	body, err := CanonicalJSON(map[string]any{
		"parents": ph, "objects": objects, "author": author, "message": message, "provenance": prov,
	})
	if err != nil {
		return nil, fmt.Errorf("revision hash: %w", err)
	}
	return sha(body), nil
}

// jsonbNumbers rewrites every number of a decoded JSON value (UseNumber)
// as PostgreSQL's numeric type prints it.
func jsonbNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		return json.Number(pgNumeric(string(x)))
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = jsonbNumbers(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = jsonbNumbers(e)
		}
		return out
	}
	return v
}

// pgNumeric renders a JSON number the way PostgreSQL's numeric output does:
// plain decimal notation, the scale of the input (fraction digits less the
// exponent, at least 0), no sign on zero.
func pgNumeric(s string) string {
	neg := strings.HasPrefix(s, "-")
	s = strings.TrimPrefix(s, "-")
	exp := 0
	if i := strings.IndexAny(s, "eE"); i >= 0 {
		e, err := strconv.Atoi(strings.TrimPrefix(s[i+1:], "+"))
		if err != nil {
			return s
		}
		exp = e
		s = s[:i]
	}
	intPart, frac, _ := strings.Cut(s, ".")
	digits := intPart + frac
	scale := len(frac) - exp
	if scale < 0 {
		scale = 0
	}
	// digits × 10^(exp - len(frac)): place the decimal point.
	point := len(intPart) + exp // position of the point within digits
	var ip, fp string
	switch {
	case point <= 0:
		ip, fp = "0", strings.Repeat("0", -point)+digits
	case point >= len(digits):
		ip, fp = digits+strings.Repeat("0", point-len(digits)), ""
	default:
		ip, fp = digits[:point], digits[point:]
	}
	ip = strings.TrimLeft(ip, "0")
	if ip == "" {
		ip = "0"
	}
	if len(fp) > scale {
		fp = fp[:scale] // only zeros are cut: scale covers every given digit
	}
	fp += strings.Repeat("0", scale-len(fp))
	out := ip
	if scale > 0 {
		out += "." + fp
	}
	if neg && strings.Trim(ip+fp, "0") != "" {
		out = "-" + out
	}
	return out
}

// gNumbers rewrites every number as the commit pipeline writes values of
// number Attributes (shortest %g), for objects whose bodies jsonb rewrote.
func gNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if f, err := strconv.ParseFloat(string(x), 64); err == nil {
			return json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		}
		return x
	case []any:
		out := make([]any, len(x))
		for i, e := range x {
			out[i] = gNumbers(e)
		}
		return out
	case map[string]any:
		out := make(map[string]any, len(x))
		for k, e := range x {
			out[k] = gNumbers(e)
		}
		return out
	}
	return v
}

// VerifyReport is what Verify found.
type VerifyReport struct {
	// Revisions and Objects count what was checked.
	Revisions int `json:"revisions"`
	Objects   int `json:"objects"`
	// Heads is each branch's head Revision and its hash (hex): record them
	// to detect a rewrite of the whole chain later.
	Heads map[string]string `json:"heads"`
	// Bad names the first Revision (by sequence number) that fails, nil
	// when all pass.
	Bad *BadRevision `json:"bad,omitempty"`
}

// BadRevision is a Revision that failed verification and why.
type BadRevision struct {
	ID     string `json:"id"`
	Seq    int64  `json:"seq"`
	Reason string `json:"reason"`
}

// verifyBatch is how many Revisions Verify reads at once.
const verifyBatch = 500

// Verify checks the hash chain of every Revision of a Domain, oldest
// first, as the owner: each Revision's hash recomputes from what it says
// and its parents' stored hashes, each parent exists, and each object it
// wrote exists and hashes to its address. It stops at the first bad
// Revision. Each transaction reads one batch, so none grows with the
// Domain.
func Verify(ctx context.Context, s *store.Store, domainID int32) (*VerifyReport, error) {
	rep := &VerifyReport{Heads: map[string]string{}}
	after := int64(-1)
	type row struct {
		id, author, message string
		seq                 int64
		branch              int32
		parents             []string
		at                  time.Time
		hash                []byte
		prov, changes       []byte
		version             int16
	}
	for {
		rows, err := s.Pool.Query(ctx, `SELECT id, seq, branch_id, parents, author, message, at, hash,
				provenance::text, changes::text, hash_version
			FROM revisions WHERE domain_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, domainID, after, verifyBatch)
		if err != nil {
			return nil, fmt.Errorf("read revisions: %w", err)
		}
		batch, err := pgx.CollectRows(rows, func(r pgx.CollectableRow) (row, error) {
			var x row
			var prov *string
			var changes string
			err := r.Scan(&x.id, &x.seq, &x.branch, &x.parents, &x.author, &x.message, &x.at, &x.hash, &prov, &changes, &x.version)
			if prov != nil {
				x.prov = []byte(*prov)
			}
			x.changes = []byte(changes)
			return x, err
		})
		if err != nil {
			return nil, fmt.Errorf("read revisions: %w", err)
		}
		if len(batch) == 0 {
			break
		}
		// Parents' stored hashes and the objects the batch names.
		var parentIDs []string
		objSet := map[string]bool{}
		for _, x := range batch {
			parentIDs = append(parentIDs, x.parents...)
			var list []struct {
				Object string `json:"object"`
			}
			if err := json.Unmarshal(x.changes, &list); err == nil {
				for _, c := range list {
					if c.Object != "" {
						objSet[c.Object] = true
					}
				}
			}
		}
		parentHash := map[string]string{}
		if len(parentIDs) > 0 {
			rows, err := s.Pool.Query(ctx, `SELECT id, hash FROM revisions WHERE domain_id = $1 AND id = ANY($2)`, domainID, parentIDs)
			if err != nil {
				return nil, fmt.Errorf("read parent revisions: %w", err)
			}
			for rows.Next() {
				var id string
				var h []byte
				if err := rows.Scan(&id, &h); err != nil {
					rows.Close()
					return nil, fmt.Errorf("read parent revisions: %w", err)
				}
				parentHash[id] = hex.EncodeToString(h)
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("read parent revisions: %w", err)
			}
		}
		objOK := map[string]string{} // hash -> "" when good, else the reason
		if len(objSet) > 0 {
			hashes := make([][]byte, 0, len(objSet))
			for h := range objSet {
				b, err := hex.DecodeString(h)
				if err != nil {
					objOK[h] = "object address " + h + " is not a hash"
					continue
				}
				hashes = append(hashes, b)
			}
			rows, err := s.Pool.Query(ctx, `SELECT hash, body::text FROM objects WHERE domain_id = $1 AND hash = ANY($2)`, domainID, hashes)
			if err != nil {
				return nil, fmt.Errorf("read objects: %w", err)
			}
			for rows.Next() {
				var h []byte
				var body string
				if err := rows.Scan(&h, &body); err != nil {
					rows.Close()
					return nil, fmt.Errorf("read objects: %w", err)
				}
				objOK[hex.EncodeToString(h)] = checkObject(h, []byte(body))
				rep.Objects++
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return nil, fmt.Errorf("read objects: %w", err)
			}
		}
		for _, x := range batch {
			rep.Revisions++
			fail := func(format string, args ...any) *VerifyReport {
				rep.Bad = &BadRevision{ID: x.id, Seq: x.seq, Reason: fmt.Sprintf(format, args...)}
				return rep
			}
			ph := make([]string, len(x.parents))
			for i, p := range x.parents {
				h, ok := parentHash[p]
				if !ok {
					return fail("its parent %s does not exist", p), nil
				}
				ph[i] = h
			}
			var sum []byte
			switch x.version {
			case 1:
				sum, err = revisionHashV1(ph, x.changes, x.author, x.message, x.prov)
			case HashVersion:
				sum, err = RevisionHash(RevisionContent{ID: x.id, Seq: x.seq, BranchID: x.branch, Parents: x.parents, ParentHashes: ph,
					Author: x.author, Message: x.message, At: x.at, Provenance: x.prov, Changes: x.changes})
			default:
				return fail("unknown hash version %d", x.version), nil
			}
			if err != nil {
				return fail("its content cannot be hashed: %v", err), nil
			}
			if !bytes.Equal(sum, x.hash) {
				return fail("its stored hash %s does not match its content (%s)", hex.EncodeToString(x.hash), hex.EncodeToString(sum)), nil
			}
			var list []struct {
				Object string `json:"object"`
			}
			_ = json.Unmarshal(x.changes, &list)
			for i, c := range list {
				if c.Object == "" {
					continue
				}
				reason, found := objOK[c.Object]
				if !found {
					return fail("change %d: object %s does not exist", i, c.Object), nil
				}
				if reason != "" {
					return fail("change %d: %s", i, reason), nil
				}
			}
			after = x.seq
		}
	}
	rows, err := s.Pool.Query(ctx, `SELECT r.name, r.head, encode(v.hash, 'hex') FROM refs r
		JOIN revisions v ON v.domain_id = r.domain_id AND v.id = r.head WHERE r.domain_id = $1`, domainID)
	if err != nil {
		return nil, fmt.Errorf("read branch heads: %w", err)
	}
	for rows.Next() {
		var name, head, h string
		if err := rows.Scan(&name, &head, &h); err != nil {
			rows.Close()
			return nil, fmt.Errorf("read branch heads: %w", err)
		}
		rep.Heads[name] = head + " " + h
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read branch heads: %w", err)
	}
	return rep, nil
}

// checkObject reports why a stored object does not hash to its address
// ("" when it does). jsonb keeps numbers in plain notation, so a body is
// also tried with its numbers as the pipeline writes number Attributes.
func checkObject(addr, body []byte) string {
	v, err := decodeJSON(body)
	if err != nil {
		return "object " + hex.EncodeToString(addr) + " is not JSON"
	}
	for _, cand := range []any{v, gNumbers(v)} {
		b, err := CanonicalJSON(cand)
		if err == nil && bytes.Equal(sha(b), addr) {
			return ""
		}
	}
	return "object " + hex.EncodeToString(addr) + " does not hash to its address (its body was changed)"
}
