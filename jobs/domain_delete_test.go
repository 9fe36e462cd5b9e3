package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/embed"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/store"
)

const domainSchema = `{"kinds": [{"name": "Doc", "title": "title", "attributes": [
	{"name": "title", "type": "text", "required": true, "search": true},
	{"name": "group", "type": "text", "indexed": true}],
	"embedding": {"attributes": ["title"], "dims": 16, "model": "hash"}}],
 "relations": [{"name": "cites", "from": "Doc", "to": "Doc", "cardinality": "many"}]}`

// leftovers lists what of a Domain the database still holds: its rows in
// every table that has a domain_id column (read from information_schema,
// so a table added later is covered; a partitioned table's rows counted
// once, through it), its Revision-number sequence, the
// named indexes and its HNSW indexes, and its domains row.
func leftovers(t *testing.T, s *store.Store, domainID int32, indexes []string) map[string]int {
	t.Helper()
	ctx := context.Background()
	rows, err := s.Pool.Query(ctx, `SELECT c.table_name::text FROM information_schema.columns c
		JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
		WHERE c.table_schema = current_schema() AND c.column_name = 'domain_id' AND t.table_type = 'BASE TABLE'
		  AND NOT (SELECT k.relispartition FROM pg_class k
		            WHERE k.oid = format('%I.%I', c.table_schema, c.table_name)::regclass) -- the parent counts them
		ORDER BY 1`)
	require.NoError(t, err)
	tables, err := pgx.CollectRows(rows, pgx.RowTo[string])
	require.NoError(t, err)
	require.Contains(t, tables, "mat_records")
	out := map[string]int{}
	for _, table := range tables {
		var n int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+pgx.Identifier{table}.Sanitize()+` WHERE domain_id = $1`, domainID).Scan(&n))
		if n > 0 {
			out[table] = n
		}
	}
	var n int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relkind = 'S' AND relname = $1`,
		fmt.Sprintf("revision_number_%d", domainID)).Scan(&n))
	if n > 0 {
		out["sequence revision_number"] = n
	}
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM pg_class WHERE relkind = 'i'
		AND (relname = ANY($1) OR starts_with(relname::text, $2))`, indexes, jobs.VectorIndexName(domainID, "")).Scan(&n))
	if n > 0 {
		out["indexes"] = n
	}
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM domains WHERE id = $1`, domainID).Scan(&n))
	if n > 0 {
		out["domains"] = n
	}
	return out
}

// TestDomainDeleteLeavesNothing: deleting a Domain removes its rows from
// every table with a domain_id, its indexes and its Revision-number
// sequence, resuming after a stop; another Domain keeps all of its own.
// Removing the domains row alone (its foreign keys cascade) is not enough,
// which the same check shows.
func TestDomainDeleteLeavesNothing(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	pipe := commit.New(s, commit.Config{})
	e := &jobs.Embedder{Store: s, Embedders: embed.NewSet(nil)}
	noQueue := store.BranchJobs{
		Copy:   func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil },
		Delete: func(context.Context, pgx.Tx, int32, int32) error { return nil },
	}
	// seed gives a Domain a schema, Records, Links, vectors, an index, an
	// overlay branch with a commit, a token and an idempotency key.
	seed := func(name string) (int32, []string) {
		d, err := s.CreateDomain(ctx, name)
		require.NoError(t, err)
		_, err = pipe.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: []byte(domainSchema)})
		require.NoError(t, err)
		var changes []commit.Change
		for i := range 30 {
			changes = append(changes, commit.Change{Op: "put", Kind: "Doc", Key: fmt.Sprintf("D-%02d", i),
				Values: []byte(fmt.Sprintf(`{"title": %q, "group": "g%d"}`, docTitle(i), i%3))})
			if i > 0 {
				changes = append(changes, commit.Change{Op: "link", Relation: "cites", From: fmt.Sprintf("D-%02d", i), To: "D-00"})
			}
		}
		res, err := pipe.Commit(ctx, d.ID, "main", &commit.Request{Message: "docs", Author: "t", Changes: changes}, "key-1")
		require.NoError(t, err)
		var main int32
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d.ID).Scan(&main))
		_, err = e.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: d.ID, BranchID: main, Seq: res.Seq})
		require.NoError(t, err)
		require.NoError(t, jobs.BuildIndex(ctx, s, jobs.IndexArgs{DomainID: d.ID, BranchID: main, KindName: "Doc", Attribute: "group"}))
		b, err := s.CreateBranch(ctx, d.ID, store.CreateBranchRequest{Name: "agent/a", From: "main", Mode: store.ModeOverlay}, noQueue)
		require.NoError(t, err)
		res, err = pipe.Commit(ctx, d.ID, "agent/a", &commit.Request{Message: "m", Author: "t", Changes: []commit.Change{
			{Op: "patch", Key: "D-03", Values: []byte(`{"title": "copper hinge"}`)}}}, "")
		require.NoError(t, err)
		_, err = e.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: d.ID, BranchID: b.ID, Seq: res.Seq})
		require.NoError(t, err)
		_, _, err = s.CreateToken(ctx, d.ID, "agent", "writer", []string{"agent/*"}, nil)
		require.NoError(t, err)
		return d.ID, []string{jobs.IndexName(d.ID, main, "Doc", "group")}
	}
	gone, goneIndexes := seed("gone")
	kept, keptIndexes := seed("kept")
	cascaded, cascadedIndexes := seed("cascaded")
	before := leftovers(t, s, gone, goneIndexes)
	for _, table := range []string{"domains", "refs", "schemas", "revisions", "tokens", "idempotency_keys", "mat_records", "mat_links",
		"mat_history", "mat_link_history", "mat_vectors", "mat_lexicon", "attribute_indexes", "sequence revision_number", "indexes"} {
		require.Contains(t, before, table, "the fixture gives the Domain rows in %s", table)
	}
	keptBefore := leftovers(t, s, kept, keptIndexes)
	require.Equal(t, before, keptBefore)

	// The domains row alone: its cascade leaves the Domain's data behind.
	_, err := s.Pool.Exec(ctx, `DELETE FROM domains WHERE id = $1`, cascaded)
	require.NoError(t, err)
	left := leftovers(t, s, cascaded, cascadedIndexes)
	require.Contains(t, left, "sequence revision_number")
	require.Contains(t, left, "mat_records")
	require.Contains(t, left, "mat_vectors")

	// Deleting: the Domain is gone at once for lookups, its tokens revoked.
	queued := 0
	_, err = s.DeleteDomain(ctx, "gone", func(context.Context, pgx.Tx, int32) error { queued++; return nil })
	require.NoError(t, err)
	require.Equal(t, 1, queued)
	_, err = s.DomainByName(ctx, "gone")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, err = s.DeleteDomain(ctx, "gone", func(context.Context, pgx.Tx, int32) error { return nil })
	require.ErrorIs(t, err, store.ErrNotFound, "already deleting")
	var live int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM tokens WHERE domain_id = $1 AND revoked_at IS NULL`, gone).Scan(&live))
	require.Zero(t, live)

	// The bootstrap admin's list leaves it out, unless asked for those
	// being deleted.
	names := func(deleting bool) map[string]string {
		list, err := s.DomainStatuses(ctx, deleting)
		require.NoError(t, err)
		out := map[string]string{}
		for _, d := range list {
			out[d.Name] = d.State
		}
		return out
	}
	require.Equal(t, map[string]string{"kept": "ready"}, names(false))
	require.Equal(t, map[string]string{"kept": "ready", "gone": "deleting"}, names(true))

	// The job, stopped every third batch, resumes until done; every batch
	// leaves its progress on the Domain, counted over every run.
	stop := errors.New("stopped")
	runs, deleted := 0, 0
	dd := &jobs.DomainDeleter{Store: s, BatchRows: 7, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		deleted += st.Rows
		var p struct {
			Phase      string `json:"phase"`
			TablesDone int    `json:"tables_done"`
			Tables     int    `json:"tables"`
			Rows       int    `json:"rows"`
		}
		var raw []byte
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT progress FROM domains WHERE id = $1`, gone).Scan(&raw))
		require.NoError(t, json.Unmarshal(raw, &p))
		require.Equal(t, st.Phase, p.Phase)
		require.Equal(t, deleted, p.Rows, "the rows deleted so far, over every run")
		require.Less(t, p.TablesDone, p.Tables)
		if st.Batch%3 == 0 {
			return stop
		}
		return nil
	}}
	for {
		runs++
		err := dd.Run(ctx, jobs.DomainDeleteArgs{DomainID: gone})
		if err == nil {
			break
		}
		require.ErrorIs(t, err, stop)
	}
	require.Greater(t, runs, 2, "the deletion was stopped and resumed")
	require.Empty(t, leftovers(t, s, gone, goneIndexes), "nothing of the deleted Domain remains")
	require.Equal(t, keptBefore, leftovers(t, s, kept, keptIndexes), "the other Domain keeps everything")
	require.NoError(t, dd.Run(ctx, jobs.DomainDeleteArgs{DomainID: gone}), "a run after the end does nothing")

	// The name is free again: a new Domain, numbered from 1.
	d, err := s.CreateDomain(ctx, "gone")
	require.NoError(t, err)
	require.NotEqual(t, gone, d.ID)
	_, err = pipe.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: []byte(domainSchema)})
	require.NoError(t, err)
	res, err := pipe.Commit(ctx, d.ID, "main", &commit.Request{Message: "m", Author: "t", Changes: []commit.Change{
		{Op: "put", Kind: "Doc", Key: "D-1", Values: []byte(`{"title": "x"}`)}}}, "")
	require.NoError(t, err)
	require.EqualValues(t, 2, res.Number, "the schema was Revision 1")
}
