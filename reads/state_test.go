package reads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
)

// TestStateHelpers checks lb_state_records, lb_state_links and
// lb_state_unique (run as lorebase_app in the Domain, as the commit
// pipeline runs them) against the model on every branch.
func TestStateHelpers(t *testing.T) {
	t.Parallel()
	f := branchWorld(t)
	for _, name := range []string{"main", "ov", "ov2", "cp"} {
		b := f.m[name]
		ls := levels(b, b.Head, false)
		keys := append(allKeys(ls), "NOPE", "it's")

		type rec struct {
			Key, Kind, Title, Values, Lineage string
			Created, Seq                      int64
			Versions                          int
		}
		var want []rec
		for _, k := range keys {
			e := effective(ls, k)
			if !e.Present {
				continue
			}
			lin, created, versions := meta(ls, e)
			lj, err := json.Marshal(lin)
			require.NoError(t, err)
			want = append(want, rec{k, e.Kind, e.Title, valuesJSON(t, e.Values), string(lj), created, e.Seq, versions})
		}
		var got []rec
		require.NoError(t, f.s.InDomain(f.ctx, f.domain, func(ctx context.Context, tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT key, kind, title, "values"::text, lineage::text, created_seq, seq, versions
				FROM lb_state_records($1, $2) ORDER BY key`, b.ID, keys)
			if err != nil {
				return err
			}
			for rows.Next() {
				var r rec
				var v, l []byte
				if err := rows.Scan(&r.Key, &r.Kind, &r.Title, &v, &l, &r.Created, &r.Seq, &r.Versions); err != nil {
					return err
				}
				r.Values, r.Lineage = string(v), string(l)
				got = append(got, r)
			}
			return rows.Err()
		}))
		require.Len(t, got, len(want), name)
		for i := range want {
			require.Equal(t, want[i].Key, got[i].Key, name)
			require.JSONEq(t, want[i].Values, got[i].Values, "%s %s", name, want[i].Key)
			require.JSONEq(t, want[i].Lineage, got[i].Lineage, "%s %s", name, want[i].Key)
			want[i].Values, want[i].Lineage, got[i].Values, got[i].Lineage = "", "", "", ""
			require.Equal(t, want[i], got[i], name)
		}

		// Links with an end among a few keys.
		some := []string{"S-0", "S-1", "S-5", "P-01", "O-1", "P-04"}
		in := map[string]bool{}
		for _, k := range some {
			in[k] = true
		}
		var wantL []string
		for k, o := range presentLinks(ls) {
			if in[k.From] || in[k.To] {
				wantL = append(wantL, fmt.Sprintf("%s %s %s %c", k.From, k.Rel, k.To, o))
			}
		}
		sort.Strings(wantL)
		var gotL []string
		require.NoError(t, f.s.InDomain(f.ctx, f.domain, func(ctx context.Context, tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT from_key, relation, to_key, origin FROM lb_state_links($1, $2)`, b.ID, some)
			if err != nil {
				return err
			}
			for rows.Next() {
				var from, rel, to string
				var origin byte
				if err := rows.Scan(&from, &rel, &to, &origin); err != nil {
					return err
				}
				gotL = append(gotL, fmt.Sprintf("%s %s %s %c", from, rel, to, origin))
			}
			return rows.Err()
		}))
		sort.Strings(gotL)
		require.Equal(t, wantL, gotL, name)

		// Unique values: Supplier.country, current and former values.
		vals := []string{"C0", "C1", "C2", "C9", "DE", "XX", "it's"}
		var wantU []string
		for _, e := range present(ls) {
			c, _ := e.Values["country"].(string)
			for _, v := range vals {
				if e.Kind == "Supplier" && c == v {
					wantU = append(wantU, e.Key+"="+c)
				}
			}
		}
		var gotU []string
		require.NoError(t, f.s.InDomain(f.ctx, f.domain, func(ctx context.Context, tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT key || '=' || value FROM lb_state_unique($1, 'Supplier', 'country', $2) ORDER BY 1`, b.ID, vals)
			if err != nil {
				return err
			}
			gotU, err = pgx.CollectRows(rows, pgx.RowTo[string])
			return err
		}))
		sort.Strings(wantU)
		require.Equal(t, wantU, gotU, name)
	}
	// Hostile names reach the helpers harmlessly.
	require.NoError(t, f.s.InDomain(f.ctx, f.domain, func(ctx context.Context, tx pgx.Tx) error {
		rows, err := tx.Query(ctx, `SELECT key FROM lb_state_unique($1, $2, $2, ARRAY[$2])`, f.m["ov"].ID, `x'); DROP TABLE refs; --`)
		if err != nil {
			return err
		}
		rows.Close()
		return rows.Err()
	}))
}

func TestOverlayHostileInput(t *testing.T) {
	t.Parallel()
	f := branchWorld(t)
	for _, h := range []string{"'", `'; DROP TABLE refs; --`, `\`, "%s%L", "$1", `"`, "a:* & !b", "c.key", "sr.key) OR (true"} {
		for _, br := range []string{"ov", "ov2", "cp"} {
			check := func(name string, err error) {
				if err != nil {
					require.NotContains(t, err.Error(), "SQLSTATE 42", "%s %q", name, h)
					require.NotContains(t, err.Error(), "syntax error", "%s %q", name, h)
				}
			}
			_, err := f.r.Get(f.ctx, f.domain, br, h, "")
			check("get", err)
			_, err = f.r.Page(f.ctx, f.domain, br, reads.PageQuery{After: h})
			check("page", err)
			_, err = f.r.Page(f.ctx, f.domain, br, reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: h})
			check("query", err)
			_, err = f.r.Links(f.ctx, f.domain, br, h, reads.LinksQuery{})
			check("links", err)
			_, err = f.r.Neighborhood(f.ctx, f.domain, br, h, 2, 10)
			check("neighborhood", err)
			_, err = f.r.History(f.ctx, f.domain, br, h, 10, "")
			check("history", err)
			_, err = f.r.Lineage(f.ctx, f.domain, br, h)
			check("lineage", err)
			_, err = f.r.Search(f.ctx, f.domain, br, reads.SearchQuery{Q: h})
			check("search", err)
			_, err = f.r.Resolve(f.ctx, f.domain, br, h, "", 5)
			check("resolve", err)
		}
	}
	// Resolve on the overlay: the key, then the title.
	c, err := f.r.Resolve(f.ctx, f.domain, "ov", "P-01", "", 5)
	require.NoError(t, err)
	require.Equal(t, "key", c.Candidates[0].Reason)
	c, err = f.r.Resolve(f.ctx, f.domain, "ov", "Overlay hex", "Part", 5)
	require.NoError(t, err)
	require.Equal(t, "P-01", c.Candidates[0].Key)
	require.Equal(t, "title", c.Candidates[0].Reason)
	c, err = f.r.Resolve(f.ctx, f.domain, "ov", "overlay widgte", "", 5)
	require.NoError(t, err)
	for _, x := range c.Candidates {
		require.NotEqual(t, "O-1", x.Key, "O-1 was deleted on the overlay")
	}
	c, err = f.r.Resolve(f.ctx, f.domain, "ov2", "overlay widgte", "", 5)
	require.NoError(t, err)
	require.Equal(t, "O-1", c.Candidates[0].Key, "ov2 forked before the delete")
	require.Equal(t, "typo", c.Candidates[0].Reason)
	var n int
	require.NoError(t, f.s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM refs WHERE domain_id = $1`, f.domain).Scan(&n))
	require.Equal(t, 4, n)
}
