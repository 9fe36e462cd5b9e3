package reads_test

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// overlayWords are the words of the overlay world's titles and notes: few,
// so a query has many full matches, partial matches in every tier and ties.
var overlayWords = []string{"steel", "brass", "hex", "bolt", "gear", "spring", "valve", "pump", "seal", "cam"}

// overlayTitle is the title of Part i: two or three of overlayWords.
func overlayTitle(i int, salt int) string {
	w := overlayWords
	t := "Part " + w[(i+salt)%len(w)] + " " + w[(i*3+salt+1)%len(w)]
	if i%3 == 0 {
		t += " " + w[(i*7+salt+2)%len(w)]
	}
	return t
}

// overlayWorld builds main with 90 Parts and 10 Suppliers; the overlay
// "ov" with its own changes (renamed, deleted, new and revived Records, a
// Kind change, a Record also changed on main); main moving on after the
// fork (renames, deletions, new Records, a Record the overlay deleted;
// then keys changed twice, revived, and created and deleted after it);
// the overlay "ov2" of "ov"; and "ref" and "ref2", ready copies holding
// the Records of "ov" and "ov2" (the answers the overlays must give).
func overlayWorld(t *testing.T, domain, prefix string) *fixture {
	t.Helper()
	s := newStore(t)
	return overlayWorldIn(t, newFixture(t, s, domain), prefix)
}

func overlayWorldIn(t *testing.T, f *fixture, prefix string) *fixture {
	t.Helper()
	key := func(i int) string { return fmt.Sprintf("%sP-%03d", prefix, i) }
	var cs []change
	for i := 0; i < 10; i++ {
		cs = append(cs, put("Supplier", fmt.Sprintf("%sS-%d", prefix, i), map[string]any{"name": "Supplier " + overlayWords[i],
			"country": fmt.Sprintf("C%d", i%3)}))
	}
	for i := 0; i < 90; i++ {
		cs = append(cs, put("Part", key(i), map[string]any{"name": overlayTitle(i, 0),
			"note": overlayWords[(i*5)%len(overlayWords)], "maker": fmt.Sprintf("%sS-%d", prefix, i%10)}))
	}
	f.commit("alice", "", cs...)
	f.commit("bob", "", patch(key(1), map[string]any{"name": "Part steel steel hex"}), del(key(2)))
	// Six full matches of "quartz lever" on main, three once the overlay
	// deleted and renamed some: fewer than search.partial.min_results.
	cs = nil
	for i := 1; i <= 12; i++ {
		name := []string{"Part quartz lever", "Part quartz", "Part lever nut"}[min((i-1)/6+(i-1)/9, 2)]
		cs = append(cs, put("Part", fmt.Sprintf("%sQ-%02d", prefix, i), map[string]any{"name": name, "maker": prefix + "S-0"}))
	}
	f.commit("bob", "", cs...)

	ov := f.fork("ov", "overlay", revInfo{})
	cs = nil
	for i := 3; i < 90; i += 7 {
		cs = append(cs, patch(key(i), map[string]any{"name": overlayTitle(i, 4), "maker": fmt.Sprintf("%sS-%d", prefix, (i+3)%10)}))
	}
	for i := 5; i < 90; i += 11 {
		if (i-3)%7 == 0 {
			continue
		}
		cs = append(cs, del(key(i)))
	}
	for i := 100; i < 110; i++ {
		cs = append(cs, put("Part", key(i), map[string]any{"name": overlayTitle(i, 2), "note": "steel", "maker": prefix + "S-1"}))
	}
	cs = append(cs, put("Part", key(2), map[string]any{"name": "Part revived steel bolt", "note": "hex", "maker": prefix + "S-2"}),
		put("Supplier", key(4), map[string]any{"name": "Supplier steel gear", "country": "C1"}),
		del(prefix+"Q-01"), del(prefix+"Q-02"), patch(prefix+"Q-03", map[string]any{"name": "Part quartz only"}))
	ov.commit("agent", "", cs...)

	cs = nil
	for i := 6; i < 90; i += 9 {
		cs = append(cs, patch(key(i), map[string]any{"name": overlayTitle(i, 7), "note": "pump", "maker": prefix + "S-9"}))
	}
	for i := 8; i < 90; i += 13 {
		if (i-6)%9 == 0 {
			continue
		}
		cs = append(cs, del(key(i)))
	}
	for i := 200; i < 210; i++ {
		cs = append(cs, put("Part", key(i), map[string]any{"name": overlayTitle(i, 1), "note": "brass", "maker": prefix + "S-3"}))
	}
	// Changed in an Attribute no search reads: the base's row stands for
	// its version at the fork in the searches, not in the maker query.
	for _, i := range []int{40, 43, 46, 49} {
		cs = append(cs, patch(key(i), map[string]any{"maker": prefix + "S-7"}))
	}
	// Changed on both: the overlay's version wins; deleted on the overlay.
	cs = append(cs, patch(key(3), map[string]any{"name": "Part main side steel"}), patch(key(5), map[string]any{"name": "Part main hex"}))
	// A Supplier (a Kind whose search reads its title alone) renamed, and
	// one whose country changed: the overlay reads both as at the fork.
	cs = append(cs, patch(prefix+"S-2", map[string]any{"name": "Supplier zinc"}), patch(prefix+"S-5", map[string]any{"country": "C9"}))
	f.commit("carol", "", cs...)
	// Main moves on again: keys changed twice after the fork (two history
	// rows past it, one key each), a key deleted after the fork and put
	// back, and a key created and deleted after the fork (no version at
	// the fork).
	f.commit("dave", "", patch(key(6), map[string]any{"name": "Part steel twice changed"}),
		patch(key(40), map[string]any{"maker": prefix + "S-8"}), patch(prefix+"S-2", map[string]any{"name": "Supplier zinc steel"}),
		put("Part", key(8), map[string]any{"name": "Part revived on main steel", "maker": prefix + "S-9"}),
		del(key(200)),
		// Changed in an Attribute no index or search reads: their Kind and
		// maker as at the fork, their values not.
		patch(key(41), map[string]any{"weight": "3"}), patch(key(44), map[string]any{"weight": "4"}))

	ov2 := ov.fork("ov2", "overlay", revInfo{})
	ov2.commit("agent2", "", patch(key(11), map[string]any{"name": "Part steel cam nested"}), del(key(12)),
		put("Part", key(300), map[string]any{"name": "Part nested steel hex", "maker": prefix + "S-4"}))
	ov.commit("agent", "", patch(key(13), map[string]any{"name": "Part seal seal valve"}), del(key(14)))

	readyCopy(ov, "ref")
	readyCopy(ov2, "ref2")
	return f.on("main")
}

// readyCopy makes name a ready copy of f's branch at its head holding
// every effective Record and Link, as the store.materialize job leaves it.
func readyCopy(f *fixture, name string) {
	f.t.Helper()
	cp := f.fork(name, "copy", revInfo{})
	cp.materialize()
	_, err := f.s.Pool.Exec(f.ctx, `UPDATE refs SET state = 'ready' WHERE domain_id = $1 AND id = $2`, f.domain, cp.branch)
	require.NoError(f.t, err)
	cp.model().State = "ready"
}

// overlayQueries are searches of one to four words, misspelled words,
// words no Record holds, and Kinds.
func overlayQueries() []reads.SearchQuery {
	var qs []reads.SearchQuery
	for _, q := range []string{"steel", "hex", "cam", "pump", "part", "stel", "brss", "zzzz",
		"steel hex", "hex bolt", "steel gear", "seal valve", "pump cam", "steel part", "brass zzzz", "steal hex",
		"steel hex bolt", "gear spring valve", "cam seal pump", "steel brass hex", "hex bolt zzzz",
		"steel hex bolt gear", "pump valve seal cam", "revived bolt", "nested steel", "main side", "quartz lever", "quartz lever nut",
		"zinc", "supplier hex"} {
		for _, lim := range []int{1, 3, 5, 8, 20, 100} {
			qs = append(qs, reads.SearchQuery{Q: q, Limit: lim})
		}
		qs = append(qs, reads.SearchQuery{Q: q, Limit: 10, Kind: "Part"}, reads.SearchQuery{Q: q, Limit: 10, Kind: "Supplier"})
	}
	return qs
}

// TestOverlaySearchMatchesCopy: a search on an overlay (over a base that
// moved on after the fork, and nested) returns what the same search
// returns on a copy holding the same Records: the same Records in the same
// order with the same scores, matches and corrections.
func TestOverlaySearchMatchesCopy(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "overlay-search", "")
	for _, pair := range [][2]string{{"ov", "ref"}, {"ov2", "ref2"}} {
		requireSearchesMatch(t, f, pair[0], pair[1])
	}
}

// TestOverlaySearchFewOwnKeysMatchesCopy: an overlay with few own rows
// (up to 32) over a base that moved on after the fork tests the base's
// results against its own keys and the base's changed keys read once per
// search, where "ov" (more own rows) probes its own key of each result;
// the searches of both equal a copy's. The overlay "ov3" is forked where
// "ov" was, so main's later changes are past its fork: keys changed
// twice, deleted and revived, created and deleted, renamed and changed in
// Attributes no search reads; its own rows rename a key (searched text
// changed), change one in an Attribute no search reads (searched text
// unchanged), delete one, create one, and change one main also changed.
func TestOverlaySearchFewOwnKeysMatchesCopy(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "overlay-search-few", "")
	fork := f.on("ov").model().ForkSeq
	var id string
	require.NoError(t, f.s.Pool.QueryRow(f.ctx, `SELECT id FROM revisions WHERE domain_id = $1 AND seq = $2`, f.domain, fork).Scan(&id))
	ov3 := f.fork("ov3", "overlay", revInfo{ID: id, Seq: fork})
	ov3.commit("agent3", "", patch("P-010", map[string]any{"name": "Part steel valve renamed"}),
		patch("P-017", map[string]any{"weight": "9"}), del("P-024"),
		put("Part", "P-400", map[string]any{"name": "Part steel hex new", "maker": "S-2"}),
		patch("P-006", map[string]any{"name": "Part pump overlay side"}))
	readyCopy(ov3, "ref3")
	own := func(br string) int {
		var n int
		require.NoError(t, f.s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records m JOIN refs r ON r.domain_id = m.domain_id AND r.id = m.branch_id
			WHERE m.domain_id = $1 AND r.name = $2`, f.domain, br).Scan(&n))
		return n
	}
	require.LessOrEqual(t, own("ov3"), 32, "ov3 reads its own keys as a list")
	require.Greater(t, own("ov"), 32, "ov probes its own key of each result")
	for _, pair := range [][2]string{{"ov3", "ref3"}, {"ov", "ref"}} {
		requireSearchesMatch(t, f, pair[0], pair[1])
	}
}

// TestOverlayReadsMatchCopy: every other read of an overlay equals the
// copy's, Record by Record.
func TestOverlayReadsMatchCopy(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "overlay-reads", "")
	keys := f.strings(`SELECT DISTINCT key FROM mat_records WHERE domain_id = $1 ORDER BY 1`, f.domain)
	for _, pair := range [][2]string{{"ov", "ref"}, {"ov2", "ref2"}} {
		for _, k := range keys {
			got, gerr := f.r.Get(f.ctx, f.domain, pair[0], k, "")
			want, werr := f.r.Get(f.ctx, f.domain, pair[1], k, "")
			require.Equal(t, werr == nil, gerr == nil, "%s get %s: %v / %v", pair[0], k, gerr, werr)
			if werr == nil {
				require.Equal(t, want.Values, got.Values, "%s get %s", pair[0], k)
				require.Equal(t, want.Kind+want.Title, got.Kind+got.Title, "%s get %s", pair[0], k)
			}
			gl, gerr := f.r.Lineage(f.ctx, f.domain, pair[0], k)
			wl, werr := f.r.Lineage(f.ctx, f.domain, pair[1], k)
			require.Equal(t, werr == nil, gerr == nil, "%s lineage %s: %v / %v", pair[0], k, gerr, werr)
			require.Equal(t, wl, gl, "%s lineage %s", pair[0], k)
		}
		for _, q := range []reads.PageQuery{{Kind: "Part", Limit: 7}, {Limit: 11}, {Kind: "Supplier", Limit: 3},
			{Kind: "Supplier", Attribute: "country", Value: "C1", Limit: 2}, {Kind: "Supplier", Attribute: "country", Value: "C2", Limit: 2},
			{Kind: "Part", Attribute: "maker", Value: "S-9", Limit: 3}, {Kind: "Part", Attribute: "maker", Value: "S-1", Limit: 4},
			{Kind: "Part", Attribute: "maker", Value: "S-3", Limit: 100},
			{Kind: "Part", Attribute: "maker", Value: "S-6", Limit: 2}, {Kind: "Part", Attribute: "maker", Value: "S-8", Limit: 3},
			{Kind: "Part", Attribute: "maker", Value: "S-7", Limit: 100}, {Kind: "Part", Attribute: "maker", Value: "S-0", Limit: 100}} {
			got, want := pageKeys(t, f, pair[0], q), pageKeys(t, f, pair[1], q)
			require.Equal(t, want, got, "%s against %s, %+v", pair[0], pair[1], q)
			require.NotEmpty(t, want, "%+v", q)
		}
	}
}

// TestOverlayIndexedQueryMatchesCopy: with main's per-Attribute indexes
// built (ready, ivals written by every commit) the overlay's attribute
// query reads main's keys changed after the fork from mat_records_iseq_idx
// and the index range, not from the history, and answers as the copy
// does: keys whose indexed value, Kind or presence changed after the fork
// (read as at the fork), keys changed in other Attributes only (their
// value as at the fork, their other values not), keys changed twice,
// deleted and revived, created and deleted after the fork.
func TestOverlayIndexedQueryMatchesCopy(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "overlay-indexed")
	for _, a := range [][2]string{{"Part", "maker"}, {"Supplier", "country"}} {
		require.NoError(t, jobs.BuildIndex(f.ctx, s, jobs.IndexArgs{DomainID: f.domain, BranchID: f.branch, KindName: a[0], Attribute: a[1]}))
	}
	f = overlayWorldIn(t, f, "")
	var queries []reads.PageQuery
	for i := 0; i < 10; i++ {
		for _, lim := range []int{2, 5, 100} {
			queries = append(queries, reads.PageQuery{Kind: "Part", Attribute: "maker", Value: fmt.Sprintf("S-%d", i), Limit: lim})
		}
	}
	for i := 0; i < 10; i++ {
		queries = append(queries, reads.PageQuery{Kind: "Supplier", Attribute: "country", Value: fmt.Sprintf("C%d", i), Limit: 100})
	}
	// Pages of a Kind and of every Kind: their base rows changed after the
	// fork in other Attributes alone are read as at the fork.
	queries = append(queries, reads.PageQuery{Kind: "Part", Limit: 7}, reads.PageQuery{Kind: "Part", Limit: 100},
		reads.PageQuery{Limit: 11}, reads.PageQuery{Kind: "Supplier", Limit: 3})
	for _, pair := range [][2]string{{"ov", "ref"}, {"ov2", "ref2"}} {
		for _, q := range queries {
			got, want := pageKeys(t, f, pair[0], q), pageKeys(t, f, pair[1], q)
			require.Equal(t, want, got, "%s against %s, %+v", pair[0], pair[1], q)
		}
		// Every Record, values included, of the fullest queries.
		for _, q := range queries {
			if q.Limit != 100 || q.Attribute == "" {
				continue
			}
			got, err := f.r.QueryByAttribute(f.ctx, f.domain, pair[0], q)
			require.NoError(t, err)
			want, err := f.r.QueryByAttribute(f.ctx, f.domain, pair[1], q)
			require.NoError(t, err)
			require.Equal(t, len(want.Records), len(got.Records), "%s %+v", pair[0], q)
			for i := range want.Records {
				require.Equal(t, want.Records[i].Key, got.Records[i].Key, "%s %+v", pair[0], q)
				require.JSONEq(t, string(want.Records[i].Values), string(got.Records[i].Values), "%s %+v %s", pair[0], q, want.Records[i].Key)
			}
		}
	}
	var stmt string
	require.NoError(t, f.s.InDomain(f.ctx, f.domain, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT lb_query_by_attribute_sql('ov', 'Part', 'maker', 'S-1', '', 51)`).Scan(&stmt)
	}))
	require.Contains(t, stmt, "c.iseq > ")
	require.NotContains(t, stmt, "FROM mat_history c")
}

// TestOverlayGraphMatchesCopy: the Links and neighborhoods of an overlay
// equal the copy's for every key, with fanouts small enough that every
// Supplier's incoming Links are cut: the base's first Links in index order
// include ones the overlay removed and ones main added after the fork
// (candidates that are not present), so the overlay must read past them.
func TestOverlayGraphMatchesCopy(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "overlay-graph", "")
	keys := f.strings(`SELECT DISTINCT key FROM mat_records WHERE domain_id = $1 ORDER BY 1`, f.domain)
	sortLinks := func(ls []reads.Link) []reads.Link {
		out := append([]reads.Link(nil), ls...)
		sort.Slice(out, func(i, j int) bool {
			a, b := out[i], out[j]
			return a.Relation+"\x00"+a.From+"\x00"+a.To < b.Relation+"\x00"+b.From+"\x00"+b.To
		})
		return out
	}
	readers := map[int]*reads.Reader{}
	for _, fanout := range []int{1, 2, 3, 20} {
		readers[fanout] = reads.New(f.s, reads.Config{NeighborhoodFanout: fanout})
	}
	cut := 0
	for _, pair := range [][2]string{{"ov", "ref"}, {"ov2", "ref2"}} {
		for _, k := range keys {
			for _, dir := range []string{"out", "in", "both"} {
				got, gerr := f.r.Links(f.ctx, f.domain, pair[0], k, reads.LinksQuery{Direction: dir})
				want, werr := f.r.Links(f.ctx, f.domain, pair[1], k, reads.LinksQuery{Direction: dir})
				require.Equal(t, werr == nil, gerr == nil, "%s links %s %s: %v / %v", pair[0], k, dir, gerr, werr)
				if werr == nil {
					require.Equal(t, want, got, "%s links %s %s", pair[0], k, dir)
				}
			}
			for _, tc := range []struct{ fanout, depth, limit int }{
				{1, 2, 200}, {2, 1, 200}, {2, 2, 200}, {3, 3, 200}, {3, 2, 4}, {20, 2, 200}, {20, 3, 7},
			} {
				r := readers[tc.fanout]
				got, gerr := r.Neighborhood(f.ctx, f.domain, pair[0], k, tc.depth, tc.limit)
				want, werr := r.Neighborhood(f.ctx, f.domain, pair[1], k, tc.depth, tc.limit)
				require.Equal(t, werr == nil, gerr == nil, "%s neighborhood %s %+v: %v / %v", pair[0], k, tc, gerr, werr)
				if werr != nil {
					continue
				}
				require.Equal(t, want.Records, got.Records, "%s neighborhood %s %+v", pair[0], k, tc)
				require.Equal(t, sortLinks(want.Links), sortLinks(got.Links), "%s neighborhood %s %+v", pair[0], k, tc)
				if tc.fanout < 20 && tc.depth == 1 {
					all, err := f.r.Links(f.ctx, f.domain, pair[1], k, reads.LinksQuery{Direction: "in"})
					require.NoError(t, err)
					if len(all.Links) > tc.fanout {
						cut++
					}
				}
			}
		}
	}
	require.Positive(t, cut, "no neighborhood cut a Record's incoming Links at the fanout")
}

// TestOverlayHopReadsAboutFanout: on an overlay, a hop from a Record with
// 400 incoming Links on the base reads about fanout of them, not all, and
// each once: counted as the rows the plan's scans of mat_links return and
// the scans (EXPLAIN ANALYZE), the same answer as the copy's. The base's
// first Links in index order are ones the overlay removed and ones main
// added after the fork.
func TestOverlayHopReadsAboutFanout(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	f := newFixture(t, s, "overlay-hop")
	cs := []change{put("Supplier", "HUB", map[string]any{"name": "Supplier hub", "country": "C1"})}
	for i := 0; i < 400; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("P-%03d", i), map[string]any{"name": "Part " + overlayWords[i%len(overlayWords)], "maker": "HUB"}))
	}
	f.commit("alice", "", cs...)
	ov := f.fork("ov", "overlay", revInfo{})
	cs = nil
	for i := 0; i < 6; i++ {
		cs = append(cs, patch(fmt.Sprintf("P-%03d", i), map[string]any{"maker": ""}))
	}
	ov.commit("agent", "", cs...)
	cs = nil
	for i := 0; i < 6; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("A-%03d", i), map[string]any{"name": "Part new", "maker": "HUB"}))
	}
	f.commit("carol", "", cs...)
	readyCopy(ov, "ref")
	for _, tb := range []string{"mat_records", "mat_links", "mat_history", "mat_link_history"} {
		_, err := s.Pool.Exec(f.ctx, "ANALYZE "+tb)
		require.NoError(t, err)
	}

	got, err := f.r.Neighborhood(f.ctx, f.domain, "ov", "HUB", 1, 200)
	require.NoError(t, err)
	want, err := f.r.Neighborhood(f.ctx, f.domain, "ref", "HUB", 1, 200)
	require.NoError(t, err)
	require.Equal(t, want.Records, got.Records)
	require.Len(t, got.Records, 21, "HUB and the first 20 Parts")
	require.Equal(t, "P-006", got.Records[1].Key, "the Parts the overlay unlinked and main's new ones are not in it")

	var stmt string
	var plan []byte
	require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
		if err := store.Scope(f.ctx, tx, f.domain); err != nil {
			return err
		}
		if err := tx.QueryRow(f.ctx, `SELECT lb_neighborhood_sql('ov', 'HUB', 1, 200)`).Scan(&stmt); err != nil {
			return err
		}
		// HUB's Links are half the table here: the planner would read
		// the table whole, where at any size that matters it reads the
		// index; the count is of the rows the hop asks for.
		if _, err := tx.Exec(f.ctx, `RESET ROLE; SET LOCAL enable_seqscan = off`); err != nil {
			return err
		}
		return tx.QueryRow(f.ctx, `EXPLAIN (ANALYZE, FORMAT JSON) `+stmt).Scan(&plan)
	}))
	var nodes []map[string]any
	require.NoError(t, json.Unmarshal(plan, &nodes))
	var rows, scans float64
	var walk func(n map[string]any)
	walk = func(n map[string]any) {
		if rel, _ := n["Relation Name"].(string); strings.HasPrefix(rel, "mat_links_p") {
			rows += n["Actual Rows"].(float64) * n["Actual Loops"].(float64)
			scans += n["Actual Loops"].(float64)
		}
		children, _ := n["Plans"].([]any)
		for _, c := range children {
			walk(c.(map[string]any))
		}
	}
	walk(nodes[0]["Plan"].(map[string]any))
	// The base's 20 present Links and 12 that are not, and the overlay's 6
	// rows, each read once: a Link no upper level holds is decided by its
	// base row, not looked up again on each level (which read 90 rows in
	// 62 scans). 406 Links end at HUB. The scans: each level's range of
	// HUB's Links, in each direction.
	require.Positive(t, rows)
	require.LessOrEqual(t, rows, 50.0, "rows of mat_links read for a hop of fanout 20:\n%s", plan)
	require.LessOrEqual(t, scans, 8.0, "scans of mat_links for a hop of fanout 20:\n%s", plan)

	// lorebase_app may call lb_link_hop itself: scoped to another Domain,
	// row-level security leaves it none of HUB's Links; scoped to this
	// one (or as the owner) the same call reads them.
	other := newFixture(t, s, "overlay-hop-other")
	var ovID, mainID int32
	var fork int64
	require.NoError(t, s.Pool.QueryRow(f.ctx, `SELECT id, base_id, fork_seq FROM refs WHERE domain_id = $1 AND name = 'ov'`,
		f.domain).Scan(&ovID, &mainID, &fork))
	const hop = `SELECT count(*) FROM lb_link_hop($1, ARRAY[$2, $3]::int[], ARRAY[9223372036854775807, $4]::bigint[], 'HUB', 'both', '', 20)`
	for _, scope := range []*fixture{other, f, nil} {
		var n int
		require.NoError(t, pgx.BeginFunc(f.ctx, s.Pool, func(tx pgx.Tx) error {
			if scope != nil {
				if err := store.Scope(f.ctx, tx, scope.domain); err != nil {
					return err
				}
			}
			return tx.QueryRow(f.ctx, hop, f.domain, ovID, mainID, fork).Scan(&n)
		}))
		if scope == other {
			require.Zero(t, n, "another Domain reads this Domain's Links")
		} else {
			require.Equal(t, 20, n)
		}
	}
}

// pageKeys walks every page of q on branch and returns the keys, titles and
// values.
func pageKeys(t *testing.T, f *fixture, branch string, q reads.PageQuery) []string {
	t.Helper()
	var out []string
	for {
		var p *reads.Page
		var err error
		if q.Attribute != "" {
			p, err = f.r.QueryByAttribute(f.ctx, f.domain, branch, q)
		} else {
			p, err = f.r.Page(f.ctx, f.domain, branch, q)
		}
		require.NoError(t, err)
		for _, r := range p.Records {
			out = append(out, r.Key+" "+r.Title+" "+string(r.Values))
		}
		if p.Next == "" {
			return out
		}
		q.After = p.Next
	}
}

// TestOverlaySearchStaysInItsDomain: a Domain holding the same words, keys
// and branches finds nothing of the other's through an overlay.
func TestOverlaySearchStaysInItsDomain(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	// main's per-Attribute indexes built in both: the pages and attribute
	// queries read main's keys changed after the fork by iseq.
	indexed := func(domain string) *fixture {
		f := newFixture(t, s, domain)
		for _, a := range [][2]string{{"Part", "maker"}, {"Supplier", "country"}} {
			require.NoError(t, jobs.BuildIndex(f.ctx, s, jobs.IndexArgs{DomainID: f.domain, BranchID: f.branch, KindName: a[0], Attribute: a[1]}))
		}
		return f
	}
	a := overlayWorldIn(t, indexed("overlay-a"), "A")
	b := overlayWorldIn(t, indexed("overlay-b"), "B")
	for _, f := range []*fixture{a, b} {
		mine := map[int32]string{a.domain: "A", b.domain: "B"}[f.domain]
		for _, br := range []string{"ov", "ov2"} {
			for _, q := range overlayQueries() {
				res, err := f.r.Search(f.ctx, f.domain, br, q)
				require.NoError(t, err)
				for _, x := range res.Results {
					require.True(t, strings.HasPrefix(x.Key, mine), "%s %s %+v: %s", mine, br, q, x.Key)
				}
			}
			for _, q := range []reads.PageQuery{{Kind: "Part", Limit: 100}, {Limit: 100},
				{Kind: "Part", Attribute: "maker", Value: mine + "S-7", Limit: 100}, {Kind: "Supplier", Attribute: "country", Value: "C2", Limit: 100}} {
				keys := pageKeys(t, f, br, q)
				require.NotEmpty(t, keys, "%s %s %+v", mine, br, q)
				for _, k := range keys {
					require.True(t, strings.HasPrefix(k, mine), "%s %s %+v: %s", mine, br, q, k)
				}
			}
		}
	}
	// lorebase_app may call lb_search_overlay_own and lb_rec_kept_attrs
	// itself: scoped to the other Domain, row-level security leaves them
	// none of this Domain's rows; as the owner the same calls read them.
	var ov, base int32
	var fork int64
	require.NoError(t, s.Pool.QueryRow(a.ctx, `SELECT id, base_id, fork_seq FROM refs WHERE domain_id = $1 AND name = 'ov'`,
		a.domain).Scan(&ov, &base, &fork))
	const own = `SELECT count(*) FROM lb_search_overlay_own($1, $2, $3, $4, 'steel | hex', ARRAY['steel | hex']::tsquery[],
		ARRAY['steel', 'hex'], lb_rec_kept_attrs($1, $3), '')`
	const attrs = `SELECT lb_rec_kept_attrs($1, $2) = '{}'`
	// The attribute query's statement of Domain A's overlay, built as the
	// owner, run in each scope.
	var page string
	require.NoError(t, a.s.InDomain(a.ctx, a.domain, func(ctx context.Context, tx pgx.Tx) error {
		return tx.QueryRow(ctx, `SELECT lb_query_by_attribute_sql('ov', 'Part', 'maker', 'AS-7', '', 100)`).Scan(&page)
	}))
	require.Contains(t, page, "iseq > ")
	// One connection: the statement Domain A's attribute query prepared
	// (lb_rec_prepared, run by the function as the owner) is the one the
	// other Domain's call of the same text finds in the session.
	conn, err := s.Pool.Acquire(a.ctx)
	require.NoError(t, err)
	defer conn.Release()
	require.NoError(t, pgx.BeginFunc(a.ctx, conn, func(tx pgx.Tx) error {
		if err := store.Scope(a.ctx, tx, a.domain); err != nil {
			return err
		}
		var n int
		if err := tx.QueryRow(a.ctx, `SELECT count(*) FROM lb_query_by_attribute('ov', 'Part', 'maker', 'AS-7', '', 100)`).Scan(&n); err != nil {
			return err
		}
		require.NotZero(t, n)
		return nil
	}))
	for _, scope := range []*fixture{b, a, nil, b} {
		var n, pn int
		var none bool
		require.NoError(t, pgx.BeginFunc(a.ctx, conn, func(tx pgx.Tx) error {
			if scope != nil {
				if err := store.Scope(a.ctx, tx, scope.domain); err != nil {
					return err
				}
			}
			if err := tx.QueryRow(a.ctx, own, a.domain, ov, base, fork).Scan(&n); err != nil {
				return err
			}
			if err := tx.QueryRow(a.ctx, `SELECT count(*) FROM (`+page+`) p`).Scan(&pn); err != nil {
				return err
			}
			return tx.QueryRow(a.ctx, attrs, a.domain, base).Scan(&none)
		}))
		if scope == b {
			require.Zero(t, n, "another Domain reads this Domain's overlay rows")
			require.Zero(t, pn, "another Domain reads this Domain's attribute query")
			require.True(t, none, "another Domain reads this Domain's schema")
		} else {
			require.NotZero(t, n)
			require.NotZero(t, pn)
			require.False(t, none)
		}
	}
}

// requireSearchesMatch checks that every query of overlayQueries returns on
// the overlay ov what it returns on the copy ref, whose ranking is exact.
func requireSearchesMatch(t *testing.T, f *fixture, ov, ref string) {
	t.Helper()
	for _, q := range overlayQueries() {
		got, err := f.r.Search(f.ctx, f.domain, ov, q)
		require.NoError(t, err)
		want, err := f.r.Search(f.ctx, f.domain, ref, q)
		require.NoError(t, err)
		require.False(t, want.Truncated, "%s %+v: the copy's ranking is exact", ref, q)
		require.Equal(t, want.Results, got.Results, "%s against %s, %+v", ov, ref, q)
		require.Equal(t, want.Corrections, got.Corrections, "%s against %s, %+v", ov, ref, q)
	}
}
