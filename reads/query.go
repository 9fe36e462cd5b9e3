package reads

import (
	"context"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// QueryByAttribute reads a keyset page of the Records of q.Kind whose
// Attribute q.Attribute equals q.Value (values ->> attribute, as text: a
// number 3 matches "3", a boolean "true"). It reads the per-Attribute index
// built by the store.index job once it is ready (comparing ivals ->>
// attribute, the index's expression: lb_attr_expr), values before. At (a
// Revision id) reads the branch as of that Revision.
func (r *Reader) QueryByAttribute(ctx context.Context, domainID int32, branch string, q PageQuery) (*Page, error) {
	n, err := limit("limit", q.Limit, r.cfg.PageDefaultLimit, r.cfg.PageMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := firstErr(checkBranch(branch), checkName("kind", q.Kind, true), checkName("attribute", q.Attribute, true),
		checkValue(q.Value), checkAfter(q.After)); err != nil {
		return nil, err
	}
	if err := checkRevision("at", q.At); err != nil {
		return nil, err
	}
	p := &Page{Records: []Record{}}
	sql := `SELECT key, kind, title, "values", revision FROM lb_query_by_attribute($1, $2, $3, $4, $5, $6)`
	args := []any{branch, q.Kind, q.Attribute, q.Value, q.After, n + 1}
	if q.At != "" {
		sql = `SELECT key, kind, title, "values", revision
			FROM lb_query_by_attribute_at($1, $2, $3, $4, $5, $6, lb_at_seq($1, $7))`
		args = append(args, q.At)
	}
	err = r.store.Read(ctx, domainID, sql, args, func(rows pgx.Rows) error { return scanRecords(rows, &p.Records) })
	if err != nil {
		return nil, translate("query records by attribute", err)
	}
	cutPage(p, n)
	return p, nil
}

// checkValue validates an Attribute value of a query.
func checkValue(v string) error {
	if len(v) > maxValueBytes {
		return store.Invalid("value", "too_long", "value is longer than 2048 bytes")
	}
	return checkChars("value", v)
}
