package reads_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/reads"
)

// searchSQL is lb_search at the head with the default candidates, as
// Reader.Search calls it.
const searchSQL = `SELECT * FROM lb_search($1, $2, '', $3, NULL, 1000, 5, 100)`

// searchCalls counts, in one transaction scoped to f's Domain as
// lorebase_app, the calls of each of fns (SQL functions included:
// track_functions all) while lb_search answers each query on branch.
func searchCalls(t *testing.T, f *fixture, branch string, queries []string, fns []string) map[string]int64 {
	t.Helper()
	return functionCalls(t, f, "all", fns, func(ctx context.Context, tx pgx.Tx) error {
		for _, q := range queries {
			for _, lim := range []int{1, 5, 20} {
				if err := drain(tx.Query(ctx, searchSQL, branch, q, lim)); err != nil {
					return fmt.Errorf("search %q on %s: %w", q, branch, err)
				}
			}
		}
		return nil
	})
}

// searchCallsAt counts, as searchCalls does, the calls of each of fns
// while lb_search answers q once on main at limit 20, with candidates and
// partial candidates as given.
func searchCallsAt(t *testing.T, f *fixture, q string, candidates, partialCandidates int, fns ...string) map[string]int64 {
	t.Helper()
	return functionCalls(t, f, "all", fns, func(ctx context.Context, tx pgx.Tx) error {
		return drain(tx.Query(ctx, `SELECT * FROM lb_search('main', $1, '', 20, NULL, $2, 5, $3)`, q, candidates, partialCandidates))
	})
}

// TestOneWordSearchBuildsNoStatement: a one-word search at a branch's head
// (main, a copy, an overlay's base) reads the word's postings by a static
// statement, whose plan the session keeps, not by a statement built as
// text (lb_search_words_sql) and planned again on every call; and the
// planner inlines lb_search_words into that statement (an SQL function
// run as such would count calls).
func TestOneWordSearchBuildsNoStatement(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "one-word-calls", "")
	words := []string{"steel", "hex", "pump", "brass", "zinc"}
	for _, br := range []string{"main", "ref", "ov", "ov2"} {
		got := searchCalls(t, f, br, words, []string{"lb_search_words_sql", "lb_search_words", "lb_search_run"})
		require.Zero(t, got["lb_search_words_sql"], "%s: %v", br, got)
		require.Zero(t, got["lb_search_words"], "%s: %v", br, got)
		// The calls did run the branch's (or the base's) search.
		require.Positive(t, got["lb_search_run"], "%s: %v", br, got)
	}
}

// keptIndexesWorldIn writes to f's Domain (whose main may hold Records
// already) Parts and Suppliers on main; an overlay "ov" of main with rows
// of its own; then a commit on main: with moveSearch, a Part renamed and a
// Part created (rows past the fork in what a search reads), and in any
// case Parts changed in weight, an Attribute no index or search reads
// (iseq stays); "ref" a ready copy of "ov".
func keptIndexesWorldIn(t *testing.T, f *fixture, moveSearch bool) *fixture {
	t.Helper()
	var cs []change
	for i := 0; i < 40; i++ {
		cs = append(cs, put("Part", fmt.Sprintf("P-%03d", i), map[string]any{"name": overlayTitle(i, 0),
			"note": overlayWords[(i*3)%len(overlayWords)], "maker": fmt.Sprintf("S-%d", i%5)}))
	}
	for i := 0; i < 5; i++ {
		cs = append(cs, put("Supplier", fmt.Sprintf("S-%d", i), map[string]any{"name": "Supplier " + overlayWords[i], "country": "C1"}))
	}
	f.commit("alice", "", cs...)
	ov := f.fork("ov", "overlay", revInfo{})
	ov.commit("agent", "", patch("P-003", map[string]any{"name": "Part steel overlay hex"}), del("P-004"),
		put("Part", "P-100", map[string]any{"name": "Part steel new", "note": "pump", "maker": "S-1"}))
	cs = nil
	for i := 0; i < 40; i += 3 {
		cs = append(cs, patch(fmt.Sprintf("P-%03d", i), map[string]any{"weight": fmt.Sprint(i)}))
	}
	if moveSearch {
		cs = append(cs, patch("P-005", map[string]any{"name": "Part steel main side hex"}),
			put("Part", "P-200", map[string]any{"name": "Part steel pump main", "maker": "S-2"}))
	}
	f.commit("bob", "", cs...)
	readyCopy(ov, "ref")
	return f
}

// basePast counts the rows of the base of f's "ov" past its fork by iseq.
func basePast(t *testing.T, f *fixture) int {
	t.Helper()
	var n int
	require.NoError(t, f.s.Pool.QueryRow(f.ctx, `SELECT count(*) FROM mat_records m
		JOIN refs r ON r.domain_id = m.domain_id AND r.name = 'ov'
		WHERE m.domain_id = $1 AND m.branch_id = r.base_id AND m.iseq > r.fork_seq`, f.domain).Scan(&n))
	return n
}

// TestOverlaySearchReadsNoKeptAttrsWhenBaseKeptItsSearch: an overlay whose
// base moved on after the fork only in Attributes no index reads (no base
// row past the fork by iseq) does not read the base's kept Attributes
// (lb_rec_kept_attrs, a SQL function planned on every call): no base row
// needs them. Another Domain in the same partition, with the same branch
// names and keys, whose main moved on in searched text after the fork,
// reads them on every overlay search; the searches of each equal its own
// copy's (neither finds the other's rows past the fork or its Records).
func TestOverlaySearchReadsNoKeptAttrsWhenBaseKeptItsSearch(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	a := keptIndexesWorldIn(t, newFixture(t, s, "kept-a"), false)
	b := keptIndexesWorldIn(t, a.sharingPartition(t, s, "kept-b",
		put("Part", "P-900", map[string]any{"name": "Part steel zed", "maker": "S-0"})), true)
	require.Zero(t, basePast(t, a), "main moved on in weight only")
	require.Positive(t, basePast(t, b), "the other Domain's main moved on in searched text")

	queries := []string{"steel", "hex", "stel", "steel hex", "pump steel", "supplier steel", "zed"}
	fns := []string{"lb_rec_kept_attrs", "lb_search_overlay"}
	got := searchCalls(t, a, "ov", queries, fns)
	require.Zero(t, got["lb_rec_kept_attrs"], "%v", got)
	require.Equal(t, int64(3*len(queries)), got["lb_search_overlay"], "%v", got)
	got = searchCalls(t, b, "ov", queries, fns)
	require.Equal(t, got["lb_search_overlay"], got["lb_rec_kept_attrs"], "%v", got)
	require.Equal(t, int64(3*len(queries)), got["lb_search_overlay"], "%v", got)

	for _, f := range []*fixture{a, b} {
		requireSearchesMatch(t, f, "ov", "ref")
	}
}

// TestOverlayOneWordSearchInOneStatement: a one-word search on an overlay
// whose own rows and base's changed keys are few among the word's best
// matches is answered by one statement merging the base's postings and
// the overlay's (no call of lb_search_run, the base's search the overlay
// used to run and correct); where the overlay decides more than four of
// the base's best p_limit + 4 matches (the overlay of overlayWorld, which
// renamed or deleted many "steel" Parts, at limit 1), the base's search
// is run and corrected as before. Every answer equals the copy's, in two
// Domains sharing a partition with the same branch names and keys (one
// whose main moved on in searched text after the fork, read by the
// statement as at the fork), neither finding the other's rows.
func TestOverlayOneWordSearchInOneStatement(t *testing.T) {
	t.Parallel()
	s := newStore(t)
	a := keptIndexesWorldIn(t, newFixture(t, s, "one-statement-a"), false)
	b := keptIndexesWorldIn(t, a.sharingPartition(t, s, "one-statement-b",
		put("Part", "P-900", map[string]any{"name": "Part steel zed", "maker": "S-0"})), true)
	require.Positive(t, basePast(t, b), "the other Domain's main moved on in searched text")
	words := []string{"steel", "hex", "pump", "zed", "brass", "zzzz"}
	for _, f := range []*fixture{a, b} {
		got := searchCalls(t, f, "ov", words, []string{"lb_search_run", "lb_search_overlay"})
		require.Zero(t, got["lb_search_run"], "%v", got)
		require.Equal(t, int64(3*len(words)), got["lb_search_overlay"], "%v", got)
		requireSearchesMatch(t, f, "ov", "ref")
	}

	w := overlayWorld(t, "one-statement-loop", "")
	for _, q := range []struct {
		word  string
		limit int
	}{{"part", 5}, {"bolt", 3}} {
		got := functionCalls(t, w, "all", []string{"lb_search_run", "lb_search_overlay"}, func(ctx context.Context, tx pgx.Tx) error {
			return drain(tx.Query(ctx, searchSQL, "ov", q.word, q.limit))
		})
		require.Equal(t, int64(1), got["lb_search_overlay"], "%+v: %v", q, got)
		require.Positive(t, got["lb_search_run"], "%+v: %v", q, got)
		want, err := w.r.Search(w.ctx, w.domain, "ref", reads.SearchQuery{Q: q.word, Limit: q.limit})
		require.NoError(t, err)
		res, err := w.r.Search(w.ctx, w.domain, "ov", reads.SearchQuery{Q: q.word, Limit: q.limit})
		require.NoError(t, err)
		require.Equal(t, want.Results, res.Results, "%+v", q)
	}
	requireSearchesMatch(t, w, "ov", "ref")
}

// TestOverlayCorrectionsOverLevels: a misspelled word's corrections on an
// overlay, and on an overlay of it, are the best three of every level's
// nearest words, read in one statement: a word of one level alone, a word
// several levels hold (once), equal similarities ordered by word; they
// and the results equal a copy's holding the same Records.
func TestOverlayCorrectionsOverLevels(t *testing.T) {
	t.Parallel()
	f := overlayWorld(t, "corrections-levels", "")
	f.commit("erin", "", put("Part", "F-1", map[string]any{"name": "Part flangea", "maker": "S-1"}),
		put("Part", "F-2", map[string]any{"name": "Part flangec", "maker": "S-1"}))
	ov := f.fork("ovc", "overlay", revInfo{})
	ov.commit("agent", "", put("Part", "F-3", map[string]any{"name": "Part flangeb", "maker": "S-2"}),
		patch("F-2", map[string]any{"name": "Part flangec hex"}),
		put("Part", "F-4", map[string]any{"name": "Part flangeqq", "maker": "S-2"}))
	nested := ov.fork("ovn", "overlay", revInfo{})
	nested.commit("agent2", "", put("Part", "F-5", map[string]any{"name": "Part flange0", "maker": "S-3"}))
	readyCopy(ov, "ref-c")
	readyCopy(nested, "ref-n")
	for _, pair := range [][2]string{{"ovc", "ref-c"}, {"ovn", "ref-n"}} {
		for _, q := range []string{"flange", "flangec", "flnge", "flangeq hex", "flange zzzz"} {
			for _, lim := range []int{1, 5} {
				want, err := f.r.Search(f.ctx, f.domain, pair[1], reads.SearchQuery{Q: q, Limit: lim})
				require.NoError(t, err)
				got, err := f.r.Search(f.ctx, f.domain, pair[0], reads.SearchQuery{Q: q, Limit: lim})
				require.NoError(t, err)
				require.Equal(t, want.Corrections, got.Corrections, "%s %q", pair[0], q)
				require.Equal(t, want.Results, got.Results, "%s %q", pair[0], q)
			}
		}
	}
	// The words of each level: one of main's, one of the overlay's alone,
	// one both hold; on the nested overlay, one of its own ranks first.
	for br, want := range map[string][]string{"ovc": {"flangea", "flangeb", "flangec"}, "ovn": {"flange0", "flangea", "flangeb"}} {
		res, err := f.r.Search(f.ctx, f.domain, br, reads.SearchQuery{Q: "flange", Limit: 5})
		require.NoError(t, err)
		require.Equal(t, map[string][]string{"flange": want}, res.Corrections, br)
	}
}
