package reads

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// Page reads a keyset page of Records (of a Kind when q.Kind is set) in key
// order, at the head or as of q.At. With q.Attribute it is the query by
// Attribute (QueryByAttribute). Next is set when more Records follow.
func (r *Reader) Page(ctx context.Context, domainID int32, branch string, q PageQuery) (*Page, error) {
	if q.Attribute != "" || q.Value != "" {
		return r.QueryByAttribute(ctx, domainID, branch, q)
	}
	n, err := limit("limit", q.Limit, r.cfg.PageDefaultLimit, r.cfg.PageMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := firstErr(checkBranch(branch), checkName("kind", q.Kind, false), checkAfter(q.After),
		checkRevision("at", q.At)); err != nil {
		return nil, err
	}
	p := &Page{Records: []Record{}}
	err = r.store.Read(ctx, domainID, `SELECT key, kind, title, "values", revision
		FROM lb_page($1, $2, $3, $4, lb_at_seq($1, $5))`, []any{branch, q.Kind, q.After, n + 1, q.At},
		func(rows pgx.Rows) error { return scanRecords(rows, &p.Records) })
	if err != nil {
		return nil, translate("page records", err)
	}
	cutPage(p, n)
	if q.Count {
		if p.Count, err = r.count(ctx, domainID, branch, q); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// count counts the Records of the listing q walks: exactly from the
// branch's Record counters (lb_count) when they can say it, at the head or
// as of a recent Revision; otherwise by one bounded walk of the same keyset
// order, at most the count cap of them.
func (r *Reader) count(ctx context.Context, domainID int32, branch string, q PageQuery) (*RecordCount, error) {
	// One statement: the counters' answer, or (only when they have none)
	// the walk, which COALESCE then evaluates.
	var n int64
	var counted bool
	capN := int64(min(r.cfg.CountCap, DefaultCountCap))
	err := r.store.Read(ctx, domainID, `SELECT coalesce(c.n, (SELECT count(*) FROM lb_page($1, $2, '', $3, a.s))), c.n IS NOT NULL
		  FROM (SELECT lb_at_seq($1, $4) AS s) a, LATERAL (SELECT lb_count($1, $2, a.s) AS n) c`,
		[]any{branch, q.Kind, capN + 1, q.At}, func(rows pgx.Rows) error {
			for rows.Next() {
				if err := rows.Scan(&n, &counted); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return nil, translate("count records", err)
	}
	if !counted && n > capN {
		return &RecordCount{Records: capN}, nil
	}
	return &RecordCount{Records: n, Exact: true}, nil
}

// cutPage keeps n Records and sets Next when there were more.
func cutPage(p *Page, n int) {
	if len(p.Records) > n {
		p.Records = p.Records[:n]
		p.Next = p.Records[n-1].Key
	}
}

// checkAfter validates a keyset cursor (a key; empty for the first page).
func checkAfter(after string) error {
	if after == "" {
		return nil
	}
	return checkKey("after", after)
}
