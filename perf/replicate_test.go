package perf_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/supply"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/store"
)

func TestReplicate(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	cfg := supply.Config{Seed: 3, Scale: 3, ExtraLinks: 1, Replicas: 3}
	res, err := perf.Load(ctx, s, perf.LoadOptions{Supply: cfg, SkipVacuum: true})
	require.NoError(t, err)
	require.Equal(t, supply.RecordsPerUnit, res.Records, "the load loads the base")

	// The staged path drops the secondary indexes while it copies; a run
	// killed after dropping them resumes, and the indexes come back as
	// they were.
	indexes := indexDefs(t, s)
	require.Contains(t, indexes, "mat_records_search_idx")
	// The load built the per-Attribute indexes and wrote ivals.
	baseIvals := requireIndexedLoad(t, s, res.DomainID)
	require.Positive(t, baseIvals)
	dropped, err := perf.DropReplicaIndexes(ctx, s)
	require.NoError(t, err)
	require.Positive(t, dropped)
	require.NotContains(t, indexDefs(t, s), "mat_records_search_idx")
	// The staging tables are unlogged: a server crash after the run staged
	// the base rows leaves them empty. The run stages them again rather
	// than copying replicas without rows.
	require.NoError(t, perf.EmptyReplicaStage(ctx, s))

	rep, err := perf.Replicate(ctx, s, cfg, nil)
	require.NoError(t, err)
	require.Equal(t, 2, rep.Copied)
	require.Equal(t, indexes, indexDefs(t, s), "the indexes after the replicas")
	var leftover int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relname LIKE 'perf\_%'`).Scan(&leftover))
	require.Zero(t, leftover, "staging tables or index definitions left behind")
	require.Positive(t, rep.Rows)
	// The replicas carry the ivals of their own values, and the
	// per-Attribute indexes came back with the others (indexDefs above).
	require.Equal(t, cfg.Replicas*baseIvals, requireIndexedLoad(t, s, res.DomainID))

	g, err := supply.New(cfg)
	require.NoError(t, err)
	type row struct {
		kind, title string
		values      map[string]any
	}
	got := map[string]row{}
	rows, err := s.Pool.Query(ctx, `SELECT key, kind, title, values FROM mat_records WHERE domain_id = $1`, res.DomainID)
	require.NoError(t, err)
	for rows.Next() {
		var k string
		var r row
		var raw []byte
		require.NoError(t, rows.Scan(&k, &r.kind, &r.title, &raw))
		require.NoError(t, json.Unmarshal(raw, &r.values))
		got[k] = r
	}
	require.NoError(t, rows.Err())
	require.Len(t, got, g.Counts().Records())

	base, err := supply.New(cfg.Base())
	require.NoError(t, err)
	for _, kind := range []string{supply.KindSupplier, supply.KindWarehouse, supply.KindPart, supply.KindPurchaseOrder, supply.KindRiskFlag} {
		per := base.Counts().Of(kind)
		for i := range g.Counts().Of(kind) {
			c, err := g.Record(kind, i)
			require.NoError(t, err)
			r, ok := got[c.Key]
			require.True(t, ok, "%s %d: %s missing", kind, i, c.Key)
			require.Equal(t, kind, r.kind)
			orig := got[base.Key(kind, i%per)]
			require.Equal(t, orig.title, r.title, c.Key)
			var want map[string]any
			require.NoError(t, json.Unmarshal(c.Values, &want))
			for _, attr := range []string{"maker", "supplier", "part", "vat"} {
				require.Equal(t, want[attr], r.values[attr], "%s.%s", c.Key, attr)
			}
		}
	}

	wantLinks := map[[3]string]bool{}
	for c := range g.Changes() {
		if c.Op == "link" {
			wantLinks[[3]string{c.From, c.Relation, c.To}] = true
		}
	}
	links := map[[3]string]bool{}
	var refs int
	lrows, err := s.Pool.Query(ctx, `SELECT from_key, relation, to_key, origin = 'r' FROM mat_links WHERE domain_id = $1`, res.DomainID)
	require.NoError(t, err)
	for lrows.Next() {
		var l [3]string
		var ref bool
		require.NoError(t, lrows.Scan(&l[0], &l[1], &l[2], &ref))
		if ref {
			refs++
			continue
		}
		links[l] = true
	}
	require.NoError(t, lrows.Err())
	require.Equal(t, wantLinks, links)
	require.Equal(t, g.Counts().RefLinks(), refs)

	var history, linkHistory int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM mat_history WHERE domain_id = $1),
		(SELECT count(*) FROM mat_link_history WHERE domain_id = $1)`, res.DomainID).Scan(&history, &linkHistory))
	require.Equal(t, g.Counts().Records(), history)
	require.Equal(t, g.Counts().Links()+g.Counts().RefLinks(), linkHistory)

	var lexicon int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT records FROM mat_lexicon WHERE domain_id = $1 ORDER BY records DESC LIMIT 1`,
		res.DomainID).Scan(&lexicon))
	require.Positive(t, lexicon)

	// The word postings and the lexicon are what the mat_records triggers
	// derive from the replicated rows, whichever way they were written.
	var postings, postingsOff, lexiconOff int
	require.NoError(t, s.Pool.QueryRow(ctx, `WITH want AS (
		SELECT m.key, w AS word, ts_rank(m.search, ('''' || replace(replace(w, '\', '\\'), '''', '''''') || '''')::tsquery) AS score
		  FROM mat_records m, unnest(tsvector_to_array(m.search)) w WHERE m.domain_id = $1 AND NOT m.deleted),
		got AS (SELECT key, word, score FROM mat_search_words WHERE domain_id = $1)
		SELECT (SELECT count(*) FROM got),
		       (SELECT count(*) FROM ((SELECT * FROM want EXCEPT SELECT * FROM got) UNION ALL (SELECT * FROM got EXCEPT SELECT * FROM want)) d)`,
		res.DomainID).Scan(&postings, &postingsOff))
	require.Positive(t, postings)
	require.Zero(t, postingsOff, "postings differing from the Records' search vectors")
	require.NoError(t, s.Pool.QueryRow(ctx, `WITH want AS (
		SELECT w AS word, count(*)::int AS records FROM mat_records m, unnest(tsvector_to_array(m.search)) w
		 WHERE m.domain_id = $1 AND NOT m.deleted GROUP BY w),
		got AS (SELECT word, records FROM mat_lexicon WHERE domain_id = $1)
		SELECT count(*) FROM ((SELECT * FROM want EXCEPT SELECT * FROM got) UNION ALL (SELECT * FROM got EXCEPT SELECT * FROM want)) d`,
		res.DomainID).Scan(&lexiconOff))
	require.Zero(t, lexiconOff, "lexicon words whose count differs from the Records holding them")

	// main's Record counters say what it holds, per Kind.
	for _, kind := range []string{supply.KindSupplier, supply.KindWarehouse, supply.KindPart, supply.KindPurchaseOrder, supply.KindRiskFlag} {
		var counted int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT records FROM mat_counts WHERE domain_id = $1 AND kind = $2`,
			res.DomainID, kind).Scan(&counted))
		require.Equal(t, g.Counts().Of(kind), counted, kind)
	}

	// Killed while building the indexes again: the next run builds the
	// rest and copies nothing.
	_, err = perf.DropReplicaIndexes(ctx, s)
	require.NoError(t, err)
	again, err := perf.Replicate(ctx, s, cfg, nil)
	require.NoError(t, err)
	require.Equal(t, 0, again.Copied)
	require.Equal(t, 2, again.Skipped)
	require.Equal(t, indexes, indexDefs(t, s))
}

// indexDefs answers the definitions of the indexes of the copied tables
// and their partitions, by name.
func indexDefs(t *testing.T, s *store.Store) map[string]string {
	t.Helper()
	rows, err := s.Pool.Query(context.Background(), `SELECT indexname, indexdef FROM pg_indexes
		WHERE tablename ~ '^mat_(records|links|history|link_history|search_words)(_p[0-9]+)?$'`)
	require.NoError(t, err)
	defs := map[string]string{}
	for rows.Next() {
		var name, def string
		require.NoError(t, rows.Scan(&name, &def))
		defs[name] = def
	}
	require.NoError(t, rows.Err())
	return defs
}
