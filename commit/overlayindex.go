package commit

import (
	"context"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
	"github.com/lorebase/lorebase/store/schema"
)

// overlayIndexes asks for the per-Attribute indexes of an overlay's Kinds
// that this commit grew past the threshold, in the commit's transaction.
// The count is bounded (it stops at threshold+1 rows of the Kind's index),
// and nothing is counted for a Kind whose indexes already exist.
func (p *Pipeline) overlayIndexes(ctx context.Context, tx pgx.Tx, domainID int32, b *store.Branch, st *state) error {
	if p.cfg.IndexBuilds == nil || b.Mode != "overlay" || p.cfg.OverlayIndexThreshold < 0 {
		return nil
	}
	threshold := p.cfg.OverlayIndexThreshold
	kinds := map[string]*schema.Kind{}
	for _, key := range st.order {
		r := st.records[key]
		if r.exists && r.kind != nil {
			kinds[r.kindName] = r.kind
		}
	}
	names := make([]string, 0, len(kinds))
	for n := range kinds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, name := range names {
		var attrs []string
		for _, a := range kinds[name].Attributes {
			if a.Indexed || a.Unique {
				attrs = append(attrs, a.Name)
			}
		}
		if len(attrs) == 0 {
			continue
		}
		if p.cfg.IndexName != nil {
			var exists bool
			if err := tx.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, p.cfg.IndexName(domainID, b.ID, name, attrs[0])).Scan(&exists); err != nil {
				return fmt.Errorf("look up the indexes of %s: %w", name, err)
			}
			if exists {
				continue
			}
		}
		var n int
		err := tx.QueryRow(ctx, `SELECT count(*) FROM (SELECT 1 FROM mat_records
			WHERE domain_id = `+ilit(domainID)+` AND branch_id = `+ilit(b.ID)+` AND kind = `+lit(name)+`
			LIMIT `+fmt.Sprint(threshold+1)+`) x`).Scan(&n)
		if err != nil {
			return fmt.Errorf("count the own Records of %s: %w", name, err)
		}
		if n <= threshold {
			continue
		}
		if err := p.cfg.IndexBuilds(ctx, tx, domainID, b.ID, name, attrs); err != nil {
			return fmt.Errorf("queue the indexes of %s: %w", name, err)
		}
	}
	return nil
}
