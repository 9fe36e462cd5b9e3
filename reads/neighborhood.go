package reads

import (
	"cmp"
	"context"
	"slices"

	"github.com/jackc/pgx/v5"
)

// Node is a Record of a neighborhood and its distance in hops.
type Node struct {
	Key   string `json:"key"`
	Kind  string `json:"kind"`
	Title string `json:"title"`
	Depth int    `json:"depth"`
}

// Neighborhood is the Records around a Record and the Links between them.
type Neighborhood struct {
	Records []Node `json:"records"`
	Links   []Link `json:"links"`
}

// Neighborhood reads the Records within depth hops of a Record (Links in
// both directions; depth 0 means 2), at most limit Records nearest first
// (0 means the default), each once, and the Links between them. Every node
// follows at most Config.NeighborhoodFanout Links per direction.
func (r *Reader) Neighborhood(ctx context.Context, domainID int32, branch, key string, depth, limitN int) (*Neighborhood, error) {
	d, err := limit("depth", depth, 2, r.cfg.NeighborhoodMaxDepth)
	if err != nil {
		return nil, err
	}
	n, err := limit("limit", limitN, r.cfg.NeighborhoodDefault, r.cfg.NeighborhoodMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := firstErr(checkBranch(branch), checkKey("key", key)); err != nil {
		return nil, err
	}
	out := &Neighborhood{Records: []Node{}, Links: []Link{}}
	err = r.store.Read(ctx, domainID, `SELECT row_type, coalesce(key, ''), coalesce(kind, ''), coalesce(title, ''),
			coalesce(depth, 0), coalesce(relation, ''), coalesce(from_key, ''), coalesce(to_key, ''), coalesce(origin, '')
		FROM lb_neighborhood($1, $2, $3, $4, $5)`, []any{branch, key, d, n, r.cfg.NeighborhoodFanout},
		func(rows pgx.Rows) error {
			for rows.Next() {
				var typ string
				var nd Node
				var l Link
				if err := rows.Scan(&typ, &nd.Key, &nd.Kind, &nd.Title, &nd.Depth, &l.Relation, &l.From, &l.To, &l.Origin); err != nil {
					return err
				}
				if typ == "record" {
					out.Records = append(out.Records, nd)
				} else {
					out.Links = append(out.Links, l)
				}
			}
			return nil
		})
	if err != nil {
		return nil, translate("read neighborhood", err)
	}
	// Links in one order whatever plan produced them: relation, from, to.
	slices.SortFunc(out.Links, func(a, b Link) int {
		return cmp.Or(cmp.Compare(a.Relation, b.Relation), cmp.Compare(a.From, b.From), cmp.Compare(a.To, b.To))
	})
	return out, nil
}
