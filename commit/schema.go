package commit

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// Defaults of a schema change without author or message.
const (
	defaultSchemaAuthor  = "unknown"
	defaultSchemaMessage = "Replace the schema"
)

// putSchema implements Pipeline.PutSchema.
func (p *Pipeline) putSchema(ctx context.Context, domainID int32, branch string, req *SchemaRequest) (*Result, error) {
	if req == nil {
		return nil, store.Invalid("", "required", "The schema request is missing.")
	}
	var ps problemSet
	author, message := req.Author, req.Message
	if author == "" {
		author = defaultSchemaAuthor
	}
	if message == "" {
		message = defaultSchemaMessage
	}
	if code, msg := checkText("author", author, maxMessageBytes); code != "" {
		ps.bad(-1, "author", code, "%s", msg)
	}
	if code, msg := checkText("message", message, maxMessageBytes); code != "" {
		ps.bad(-1, "message", code, "%s", msg)
	}
	doc, dps := schema.Parse(req.Document)
	for _, d := range dps {
		ps.bad(-1, d.Field, d.Code, "%s", d.Message)
	}
	if !ps.empty() {
		return nil, ps.err()
	}
	newSch, cps := schema.Compile(doc)
	for _, c := range cps {
		ps.add(-1, c.Field, c.Code, "%s", c.Message)
	}
	p.checkModels(doc, &ps)
	if !ps.empty() {
		e := ps.err().(*lberr.Error)
		e.Title = "invalid schema"
		return nil, e
	}
	if err := p.checkIndexQuota(newSch); err != nil {
		return nil, err
	}
	raw, err := decodeJSON(req.Document)
	if err != nil {
		return nil, store.Invalid("", schema.CodeInvalidJSON, "The schema document is not valid JSON.")
	}
	docBody, err := CanonicalJSON(raw)
	if err != nil {
		return nil, store.Invalid("", schema.CodeInvalidJSON, "The schema document is not valid JSON.")
	}
	compiled, err := json.Marshal(newSch)
	if err != nil {
		return nil, fmt.Errorf("encode compiled schema: %w", err)
	}

	var res *Result
	err = p.store.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		if err := customPlans(ctx, tx); err != nil {
			return err
		}
		b, err := store.LockBranch(ctx, tx, branch)
		if err != nil {
			return err
		}
		if !headMatches(req.ExpectedHead, b.Head) {
			return ErrHeadMoved
		}
		res, err = p.writeSchema(ctx, tx, domainID, b, newSch, docBody, compiled, author, message, &ps)
		return err
	})
	if err != nil {
		var inv *lberr.Error
		if errors.As(err, &inv) || errors.Is(err, ErrHeadMoved) {
			return nil, err
		}
		return nil, fmt.Errorf("put schema of branch %q: %w", branch, err)
	}
	return res, nil
}

// writeSchema replaces the schema of branch b, locked by the caller in tx:
// checks the data against it, writes the schema Revision and refreshes
// titles and search vectors.
func (p *Pipeline) writeSchema(ctx context.Context, tx pgx.Tx, domainID int32, b *store.Branch, newSch *schema.Schema, docBody, compiled []byte, author, message string, ps *problemSet) (*Result, error) {
	if b.Mode == "overlay" || b.State == "copying" {
		return nil, lberr.Fields(lberr.Unprocessable, "schema change refused", lberr.Problem{
			Code: "branch_reads_through",
			Message: fmt.Sprintf("Branch %q reads through its base, so its schema follows the base's; "+
				"change the schema on the base, or on a copy branch once its copy is done.", b.Name),
		})
	}
	oldSch, err := loadSchema(ctx, tx, b.ID)
	if err != nil {
		return nil, err
	}
	for _, c := range schema.Diff(oldSch, newSch) {
		prob, err := checkCompatible(ctx, tx, domainID, b.ID, oldSch, newSch, c)
		if err != nil {
			return nil, err
		}
		if prob != nil {
			ps.add(-1, prob.Field, prob.Code, "%s", prob.Message)
		}
	}
	if !ps.empty() {
		e := ps.err().(*lberr.Error)
		e.Title = "the new schema does not fit the data on the branch"
		return nil, e
	}

	h, err := begin(ctx, tx, domainID, b)
	if err != nil {
		return nil, err
	}
	h.author, h.message = author, message
	objHash := sha(docBody)
	h.objects = []string{hexOf(objHash)}
	h.changes = []map[string]any{{"op": opSchema, "object": hexOf(objHash)}}
	if err := h.seal(); err != nil {
		return nil, err
	}
	batch := &pgx.Batch{}
	batch.Queue(`INSERT INTO objects (domain_id, hash, body) VALUES (`+ilit(domainID)+`, $1, $2::jsonb) ON CONFLICT DO NOTHING`,
		objHash, string(docBody))
	if err := queueRevision(batch, domainID, b, h); err != nil {
		return nil, err
	}
	batch.Queue(`UPDATE schemas SET seq = $1, document = $2::jsonb, compiled = $3::jsonb
		WHERE domain_id = lb_domain() AND branch_id = $4`, h.seq, string(docBody), string(compiled), b.ID)
	for _, sql := range refreshStatements(domainID, b.ID, oldSch, newSch) {
		batch.Queue(sql)
	}
	if err := tx.SendBatch(ctx, batch).Close(); err != nil {
		if errors.Is(err, ErrHeadMoved) {
			return nil, ErrHeadMoved
		}
		return nil, fmt.Errorf("write schema: %w", err)
	}
	if p.cfg.OnSchemaChange != nil {
		if err := p.cfg.OnSchemaChange(ctx, tx, domainID, b.ID, oldSch, newSch); err != nil {
			return nil, fmt.Errorf("after schema change: %w", err)
		}
	}
	return &Result{Revision: h.id, Seq: h.seq, Number: h.number, Parents: h.parents, Changes: 1}, nil
}

// PutSchemaLocked replaces the schema of branch b as one step of the
// caller's transaction tx, which holds b's ref lock: the same checks and
// writes as PutSchema, one schema Revision.
func (p *Pipeline) PutSchemaLocked(ctx context.Context, tx pgx.Tx, domainID int32, b *store.Branch, document json.RawMessage, author, message string) (*Result, error) {
	var ps problemSet
	doc, dps := schema.Parse(document)
	for _, d := range dps {
		ps.bad(-1, d.Field, d.Code, "%s", d.Message)
	}
	if !ps.empty() {
		return nil, ps.err()
	}
	newSch, cps := schema.Compile(doc)
	for _, c := range cps {
		ps.add(-1, c.Field, c.Code, "%s", c.Message)
	}
	if !ps.empty() {
		e := ps.err().(*lberr.Error)
		e.Title = "invalid schema"
		return nil, e
	}
	raw, err := decodeJSON(document)
	if err != nil {
		return nil, store.Invalid("", schema.CodeInvalidJSON, "The schema document is not valid JSON.")
	}
	docBody, err := CanonicalJSON(raw)
	if err != nil {
		return nil, store.Invalid("", schema.CodeInvalidJSON, "The schema document is not valid JSON.")
	}
	compiled, err := json.Marshal(newSch)
	if err != nil {
		return nil, fmt.Errorf("encode compiled schema: %w", err)
	}
	if err := customPlans(ctx, tx); err != nil {
		return nil, err
	}
	return p.writeSchema(ctx, tx, domainID, b, newSch, docBody, compiled, author, message, &ps)
}

// refreshStatements rewrites the title and search vector of the existing
// Records of every Kind whose title Attribute or search Attributes changed,
// one set-based UPDATE per Kind.
func refreshStatements(domainID, branchID int32, oldSch, newSch *schema.Schema) []string {
	var out []string
	for _, name := range newSch.KindNames() {
		nk := newSch.Kinds[name]
		ok, existed := oldSch.Kind(name)
		if !existed {
			continue
		}
		if nk.Title == ok.Title && slices.Equal(searchAttrs(nk), searchAttrs(ok)) {
			continue
		}
		title := "COALESCE(values ->> " + lit(nk.Title) + ", '')"
		var others []string
		for _, a := range searchAttrs(nk) {
			others = append(others, "NULLIF(values ->> "+lit(a)+", '')")
		}
		other := "''"
		if len(others) > 0 {
			other = "concat_ws(' ', " + strings.Join(others, ", ") + ")"
		}
		out = append(out, `UPDATE mat_records SET title = `+title+`,
			search = setweight(to_tsvector('simple', `+title+`), 'A') || setweight(to_tsvector('simple', `+other+`), 'B')
			WHERE domain_id = `+ilit(domainID)+` AND branch_id = `+ilit(branchID)+` AND kind = `+lit(name)+` AND NOT deleted`)
	}
	return out
}

// searchAttrs lists a Kind's search Attributes other than its title, in order.
func searchAttrs(k *schema.Kind) []string {
	var out []string
	for _, a := range k.Attributes {
		if a.Search && a.Name != k.Title {
			out = append(out, a.Name)
		}
	}
	return out
}

// checkCompatible runs one Diff check against the branch's data and returns
// a Problem naming an example when the data violates it.
func checkCompatible(ctx context.Context, tx pgx.Tx, domainID, branchID int32, oldSch, newSch *schema.Schema, c schema.Check) (*lberr.Problem, error) {
	D, B := ilit(domainID), ilit(branchID)
	recs := `FROM mat_records WHERE domain_id = ` + D + ` AND branch_id = ` + B + ` AND NOT deleted AND kind = ` + lit(c.Kind)
	one := func(sql string, args ...any) (string, bool, error) {
		var key string
		err := tx.QueryRow(ctx, sql, args...).Scan(&key)
		if errors.Is(err, pgx.ErrNoRows) {
			return "", false, nil
		}
		if err != nil {
			return "", false, fmt.Errorf("check %s of %s: %w", c.Reason, c.Kind, err)
		}
		return key, true, nil
	}
	field := "kinds." + c.Kind
	if c.Attribute != "" {
		field += ".attributes." + c.Attribute
	}
	if c.Relation != "" {
		field = "relations." + c.Relation
	}
	prob := func(format string, args ...any) *lberr.Problem {
		return &lberr.Problem{Field: field, Code: c.Reason, Message: fmt.Sprintf(format, args...)}
	}
	attr := "values -> " + lit(c.Attribute)
	text := "values ->> " + lit(c.Attribute)
	links := `FROM mat_links WHERE domain_id = ` + D + ` AND branch_id = ` + B + ` AND NOT deleted AND relation = ` + lit(c.Relation)

	switch c.Reason {
	case schema.ReasonKindDropped:
		if key, found, err := one(`SELECT key ` + recs + ` LIMIT 1`); err != nil || !found {
			return nil, err
		} else {
			return prob("Kind %s still has Records (for example %s); delete them before removing the kind.", c.Kind, short(key)), nil
		}
	case schema.ReasonAttributeDropped:
		if key, found, err := one(`SELECT key ` + recs + ` AND ` + attr + ` IS NOT NULL LIMIT 1`); err != nil || !found {
			return nil, err
		} else {
			return prob("Records of %s still hold values for %q (for example %s); remove the values first, then the attribute.", c.Kind, c.Attribute, short(key)), nil
		}
	case schema.ReasonAttributeRequired:
		if key, found, err := one(`SELECT key ` + recs + ` AND ` + attr + ` IS NULL LIMIT 1`); err != nil || !found {
			return nil, err
		} else {
			return prob("Attribute %q of %s cannot become required: some Records have no value for it (for example %s).", c.Attribute, c.Kind, short(key)), nil
		}
	case schema.ReasonTypeChanged:
		return checkTypeChange(ctx, tx, recs, oldSch, newSch, c, prob)
	case schema.ReasonEnumNarrowed:
		if key, found, err := one(`SELECT key `+recs+` AND `+text+` = ANY($1::text[]) LIMIT 1`, c.Removed); err != nil || !found {
			return nil, err
		} else {
			return prob("Enum %q of %s cannot drop %s: Records still hold them (for example %s).", c.Attribute, c.Kind, strings.Join(c.Removed, ", "), short(key)), nil
		}
	case schema.ReasonUniqueAdded:
		if key, found, err := one(`SELECT min(key) ` + recs + ` AND ` + text + ` IS NOT NULL GROUP BY ` + text + ` HAVING count(*) > 1 LIMIT 1`); err != nil || !found {
			return nil, err
		} else {
			return prob("Attribute %q of %s cannot become unique: several Records share a value (for example %s).", c.Attribute, c.Kind, short(key)), nil
		}
	case schema.ReasonRefKindChanged:
		a, _ := newSch.Kinds[c.Kind].Attr(c.Attribute)
		sql := `SELECT r.key FROM mat_records r LEFT JOIN mat_records t ON t.domain_id = ` + D + ` AND t.branch_id = ` + B + `
			AND t.key = r.values ->> ` + lit(c.Attribute) + ` AND NOT t.deleted
			WHERE NOT r.deleted AND r.domain_id = ` + D + ` AND r.branch_id = ` + B + ` AND r.kind = ` + lit(c.Kind) + `
			AND r.values -> ` + lit(c.Attribute) + ` IS NOT NULL AND (t.key IS NULL OR t.kind <> ` + lit(a.Kind) + `) LIMIT 1`
		if key, found, err := one(sql); err != nil || !found {
			return nil, err
		} else {
			return prob("Attribute %q of %s cannot refer to %s: some values refer to other kinds (for example in %s).", c.Attribute, c.Kind, a.Kind, short(key)), nil
		}
	case schema.ReasonRelationDropped:
		if key, found, err := one(`SELECT from_key ` + links + ` AND origin = 'l' LIMIT 1`); err != nil || !found {
			return nil, err
		} else {
			return prob("Relation %s still has Links (for example from %s); unlink them before removing or re-pointing it.", c.Relation, short(key)), nil
		}
	case schema.ReasonRelationRequired:
		sql := `SELECT r.key FROM mat_records r WHERE r.domain_id = ` + D + ` AND r.branch_id = ` + B + ` AND r.kind = ` + lit(c.Kind) + `
			AND NOT r.deleted AND NOT EXISTS (SELECT 1 FROM mat_links l WHERE l.domain_id = ` + D + ` AND l.branch_id = ` + B + `
				AND NOT l.deleted AND l.from_key = r.key AND l.relation = ` + lit(c.Relation) + `) LIMIT 1`
		if key, found, err := one(sql); err != nil || !found {
			return nil, err
		} else {
			return prob("Relation %s cannot become required: some %s Records have no such Link (for example %s).", c.Relation, c.Kind, short(key)), nil
		}
	case schema.ReasonCardinalityOne:
		if key, found, err := one(`SELECT from_key ` + links + ` GROUP BY from_key HAVING count(*) > 1 LIMIT 1`); err != nil || !found {
			return nil, err
		} else {
			return prob("Relation %s cannot become one-to-one: some Records have several Links (for example %s).", c.Relation, short(key)), nil
		}
	}
	return nil, fmt.Errorf("check schema change: unknown reason %q", c.Reason)
}

// checkTypeChange validates every existing value of the Attribute against
// its new type. A value passes when the new type accepts it unchanged (its
// normalized form is the stored form). Changes to or from ref are refused
// while values exist, since they add or remove foreign-key Links.
func checkTypeChange(ctx context.Context, tx pgx.Tx, recs string, oldSch, newSch *schema.Schema, c schema.Check, prob func(string, ...any) *lberr.Problem) (*lberr.Problem, error) {
	nk := newSch.Kinds[c.Kind]
	na, _ := nk.Attr(c.Attribute)
	var oldType schema.Type
	if ok, existed := oldSch.Kind(c.Kind); existed {
		if oa, had := ok.Attr(c.Attribute); had {
			oldType = oa.Type
		}
	}
	rows, err := tx.Query(ctx, `SELECT key, values -> `+lit(c.Attribute)+` `+recs+` AND values -> `+lit(c.Attribute)+` IS NOT NULL`)
	if err != nil {
		return nil, fmt.Errorf("check type change of %s.%s: %w", c.Kind, c.Attribute, err)
	}
	defer rows.Close()
	probe := &schema.Kind{Name: c.Kind, Attributes: []*schema.Attribute{na}}
	for rows.Next() {
		var key string
		var raw []byte
		if err := rows.Scan(&key, &raw); err != nil {
			return nil, fmt.Errorf("check type change of %s.%s: %w", c.Kind, c.Attribute, err)
		}
		if na.Type == schema.TypeRef || oldType == schema.TypeRef {
			return prob("Attribute %q of %s cannot change type to or from ref while Records hold values for it (for example %s); remove the values first.",
				c.Attribute, c.Kind, short(key)), nil
		}
		v, err := decodeJSON(raw)
		if err != nil {
			return nil, fmt.Errorf("check type change of %s.%s: %w", c.Kind, c.Attribute, err)
		}
		norm, vps := probe.ValidateValues(map[string]any{c.Attribute: v})
		if len(vps) > 0 || !sameJSON(norm[c.Attribute], v) {
			return prob("Attribute %q of %s cannot become %s: Record %s holds %s, which is not a %s value.",
				c.Attribute, c.Kind, c.NewType, short(key), short(string(bytes.TrimSpace(raw))), c.NewType), nil
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("check type change of %s.%s: %w", c.Kind, c.Attribute, err)
	}
	return nil, nil
}

// checkIndexQuota refuses a schema with more indexed or unique Attributes
// (each a per-Attribute index on the partition the Domain shares) than
// quota.indexed_attributes.
func (p *Pipeline) checkIndexQuota(sch *schema.Schema) error {
	if p.cfg.MaxIndexedAttributes <= 0 {
		return nil
	}
	n := 0
	for _, k := range sch.Kinds {
		for _, a := range k.Attributes {
			if a.Indexed || a.Unique {
				n++
			}
		}
	}
	if n <= p.cfg.MaxIndexedAttributes {
		return nil
	}
	return lberr.Fields(lberr.Unprocessable, "Quota reached", lberr.Problem{Field: "quota.indexed_attributes", Code: "quota_indexed_attributes",
		Message: fmt.Sprintf("The schema has %d indexed or unique Attributes; the Domain's quota (quota.indexed_attributes) is %d.", n, p.cfg.MaxIndexedAttributes)})
}
