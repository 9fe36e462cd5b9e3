package jobs_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/pgvector/pgvector-go"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/embed"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/internal/pgtest/vectortest"
	"github.com/lorebase/lorebase/jobs"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

const vecSchema = `{"kinds": [{"name": "Doc", "title": "title", "attributes": [
	{"name": "title", "type": "text", "required": true}, {"name": "group", "type": "text"}],
	"embedding": {"attributes": ["title"], "dims": 32, "model": "hash"}}]}`

var vecWords = strings.Fields("steel bolt valve bracket copper housing pump bearing gasket flange nut washer rivet spring hinge cable hose clamp seal ring")

// TestEmbedJobWritesOneVectorPerVersion: the embedding job writes the
// hash vector of each Record version a commit wrote, once (a second run
// writes nothing), on any server.
func TestEmbedJobWritesOneVectorPerVersion(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, d, seq := vectorFixture(t, pgtest.NewDatabase(t), 50)
	e := &jobs.Embedder{Store: s, Embedders: embed.NewSet(nil)}
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d).Scan(&branch))
	n, err := e.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: d, BranchID: branch, Seq: seq})
	require.NoError(t, err)
	require.Equal(t, 50, n)
	var stored []float32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT embedding FROM mat_vectors WHERE domain_id = $1 AND key = 'D-0007'`, d).Scan(&stored))
	require.InDeltaSlice(t, embed.HashVector(docTitle(7), 32), stored, 1e-6)
	_, err = e.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: d, BranchID: branch, Seq: seq})
	require.NoError(t, err)
	var count int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_vectors WHERE domain_id = $1`, d).Scan(&count))
	require.Equal(t, 50, count)
}

// TestHNSWPath needs pgvector: the HNSW index of the Domain's spec is
// built by the job, read under the RLS role, and semantic search through
// it finds at least 90% of exact search's top 10.
func TestHNSWPath(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, d, seq := vectorFixture(t, vectortest.NewVectorDatabase(t), 2000)
	e := &jobs.Embedder{Store: s, Embedders: embed.NewSet(nil)}
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, d).Scan(&branch))
	_, err := e.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: d, BranchID: branch, Seq: seq})
	require.NoError(t, err)
	doc, ps := schema.Parse([]byte(vecSchema))
	require.Empty(t, ps)
	sch, ps := schema.Compile(doc)
	require.Empty(t, ps)
	spec := sch.Kinds["Doc"].Embedding.Spec("Doc")
	require.NoError(t, jobs.BuildVectorIndex(ctx, s, jobs.VectorIndexArgs{DomainID: d, KindName: "Doc", Spec: spec, Dims: 32}))

	// pgvector-go reads the generated vec column: the stored embedding.
	var v pgvector.Vector
	var emb []float32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT vec::text, embedding FROM mat_vectors WHERE domain_id = $1 AND key = 'D-0001'`, d).Scan(&v, &emb))
	require.InDeltaSlice(t, emb, v.Slice(), 1e-6)

	// The plan under the RLS role reads the index.
	q := embed.HashVector("steel bolt", 32)
	var plan []string
	require.NoError(t, pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL ROLE lorebase_app`); err != nil {
			return err
		}
		if err := store.Scope(ctx, tx, d); err != nil {
			return err
		}
		rows, err := tx.Query(ctx, fmt.Sprintf(`EXPLAIN SELECT key FROM mat_vectors v WHERE v.domain_id = %d AND v.spec = '%s'
			ORDER BY v.vec::vector(32) <=> '%s'::vector(32) LIMIT 10`, d, spec, pgvector.NewVector(q).String()))
		if err != nil {
			return err
		}
		plan, err = pgx.CollectRows(rows, pgx.RowTo[string])
		return err
	}))
	require.Contains(t, strings.Join(plan, "\n"), jobs.VectorIndexName(d, spec), "plan: %s", strings.Join(plan, "\n"))

	// Recall@10 against exact search, unfiltered and with a 10% Attribute filter.
	rd := reads.New(s, reads.Config{})
	for _, filter := range []string{"", "g0"} {
		var hit, total int
		for i := range 20 {
			text := vecWords[i%len(vecWords)] + " " + vecWords[(i*7+3)%len(vecWords)]
			sq := reads.SemanticQuery{Q: text, Kind: "Doc", Limit: 10}
			cond := ""
			if filter != "" {
				sq.Attribute, sq.Value = "group", filter
				cond = ` AND r."values" ->> 'group' = 'g0'`
			}
			got, err := rd.Semantic(ctx, d, "main", sq)
			require.NoError(t, err)
			require.Equal(t, reads.PathHNSW, got.Path)
			rows, err := s.Pool.Query(ctx, `SELECT v.key FROM mat_vectors v JOIN mat_records r ON r.domain_id = v.domain_id
				AND r.branch_id = $2 AND r.key = v.key AND r.seq = v.seq
				WHERE v.domain_id = $1 AND v.spec = $3`+cond+` ORDER BY lb_dot(v.embedding, $4::real[]) DESC, v.key LIMIT 10`,
				d, branch, spec, embed.HashVector(text, 32))
			require.NoError(t, err)
			truth, err := pgx.CollectRows(rows, pgx.RowTo[string])
			require.NoError(t, err)
			in := map[string]bool{}
			for _, k := range truth {
				in[k] = true
			}
			for _, x := range got.Results {
				if in[x.Key] {
					hit++
				}
			}
			total += len(truth)
		}
		recall := float64(hit) / float64(total)
		t.Logf("recall@10 (filter %q): %.3f", filter, recall)
		require.GreaterOrEqual(t, recall, 0.9)
	}
}

func docTitle(i int) string {
	return vecWords[i%len(vecWords)] + " " + vecWords[(i/len(vecWords))%len(vecWords)] + " " + vecWords[(i*13+5)%len(vecWords)]
}

// vectorFixture: a Domain whose Docs embed with the hash embedder (32
// dims) and one commit of n Docs; it returns the commit's seq.
func vectorFixture(t *testing.T, url string, n int) (*store.Store, int32, int64) {
	t.Helper()
	ctx := context.Background()
	s, err := store.Open(ctx, url, store.Config{})
	require.NoError(t, err)
	t.Cleanup(s.Close)
	dom, err := s.CreateDomain(ctx, "vec")
	require.NoError(t, err)
	pipe := commit.New(s, commit.Config{})
	_, err = pipe.PutSchema(ctx, dom.ID, "main", &commit.SchemaRequest{Document: []byte(vecSchema)})
	require.NoError(t, err)
	changes := make([]commit.Change, n)
	for i := range changes {
		changes[i] = commit.Change{Op: "put", Kind: "Doc", Key: fmt.Sprintf("D-%04d", i),
			Values: []byte(fmt.Sprintf(`{"title": %q, "group": "g%d"}`, docTitle(i), i%10))}
	}
	res, err := pipe.Commit(ctx, dom.ID, "main", &commit.Request{Message: "docs", Author: "t", Changes: changes}, "")
	require.NoError(t, err)
	return s, dom.ID, res.Seq
}

// TestDeleteRemovesTheBranchsVectors: the branch delete job removes the
// vectors of the versions the branch wrote, in batches, resuming after a
// stop; vectors of other branches stay, and those of versions a copy made
// from the branch still holds pass to the copy (and go with it).
func TestDeleteRemovesTheBranchsVectors(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s, d, seq := vectorFixture(t, pgtest.NewDatabase(t), 40)
	pipe := commit.New(s, commit.Config{})
	e := &jobs.Embedder{Store: s, Embedders: embed.NewSet(nil)}
	branchID := func(name string) int32 {
		var id int32
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = $2`, d, name).Scan(&id))
		return id
	}
	main := branchID("main")
	_, err := e.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: d, BranchID: main, Seq: seq})
	require.NoError(t, err)
	// retitle commits new titles of Docs from..to-1 on a branch and embeds them.
	retitle := func(branch string, from, to int, word string) {
		changes := []commit.Change{}
		for i := from; i < to; i++ {
			changes = append(changes, commit.Change{Op: "patch", Key: fmt.Sprintf("D-%04d", i), Values: []byte(fmt.Sprintf(`{"title": "%s %d"}`, word, i))})
		}
		res, err := pipe.Commit(ctx, d, branch, &commit.Request{Message: "m", Author: "t", Changes: changes}, "")
		require.NoError(t, err)
		n, err := e.EmbedCommit(ctx, jobs.EmbedArgs{DomainID: d, BranchID: branchID(branch), Seq: res.Seq})
		require.NoError(t, err)
		require.Equal(t, to-from, n)
	}
	vectors := func(b int32) int {
		var n int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_vectors WHERE domain_id = $1 AND branch_id = $2`, d, b).Scan(&n))
		return n
	}
	noQueue := store.BranchJobs{
		Copy:   func(context.Context, pgx.Tx, int32, int32, json.RawMessage) error { return nil },
		Delete: func(context.Context, pgx.Tx, int32, int32) error { return nil },
	}
	del := func(name string) {
		id := branchID(name)
		require.NoError(t, s.DeleteBranch(ctx, d, name, noQueue))
		stop := errors.New("stopped")
		dl := &jobs.Deleter{Store: s, BatchRows: 7, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
			if st.Phase == "vectors" && st.Batch%3 == 0 {
				return stop // killed mid-way: the next run resumes
			}
			return nil
		}}
		for {
			err := dl.Run(ctx, jobs.BranchDeleteArgs{DomainID: d, BranchID: id})
			if err == nil {
				break
			}
			require.ErrorIs(t, err, stop)
		}
		require.NoError(t, (&jobs.Deleter{Store: s}).Run(ctx, jobs.BranchDeleteArgs{DomainID: d, BranchID: id}))
	}

	// An overlay and a copy of main, each with vectors of its own.
	_, err = s.CreateBranch(ctx, d, store.CreateBranchRequest{Name: "agent/gone", From: "main", Mode: store.ModeOverlay}, noQueue)
	require.NoError(t, err)
	retitle("agent/gone", 0, 30, "valve")
	_, err = s.CreateBranch(ctx, d, store.CreateBranchRequest{Name: "agent/other", From: "main", Mode: store.ModeOverlay}, noQueue)
	require.NoError(t, err)
	retitle("agent/other", 10, 20, "pump")
	gone, other := branchID("agent/gone"), branchID("agent/other")
	require.Equal(t, 30, vectors(gone))
	mainBefore, otherBefore := vectors(main), vectors(other)
	require.Equal(t, 40, mainBefore)

	del("agent/gone")
	require.Zero(t, vectors(gone))
	require.Equal(t, mainBefore, vectors(main), "main's vectors stay")
	require.Equal(t, otherBefore, vectors(other), "another branch's vectors stay")

	// A copy made from a branch holds versions the branch wrote: their
	// vectors pass to the copy when the branch is deleted.
	_, err = s.CreateBranch(ctx, d, store.CreateBranchRequest{Name: "agent/base", From: "main", Mode: store.ModeOverlay}, noQueue)
	require.NoError(t, err)
	retitle("agent/base", 0, 12, "hinge")
	cp, err := s.CreateBranch(ctx, d, store.CreateBranchRequest{Name: "agent/copy", From: "agent/base", Mode: store.ModeCopy}, noQueue)
	require.NoError(t, err)
	require.NoError(t, (&jobs.Copier{Store: s}).Run(ctx, jobs.MaterializeArgs{DomainID: d, BranchID: cp.ID}))
	retitle("agent/base", 0, 5, "rivet") // versions the copy does not hold
	base := branchID("agent/base")
	require.Equal(t, 17, vectors(base))
	del("agent/base")
	require.Zero(t, vectors(base))
	require.Equal(t, 12, vectors(cp.ID), "the copy's versions keep their vectors")
	rd := reads.New(s, reads.Config{})
	r, err := rd.Semantic(ctx, d, "agent/copy", reads.SemanticQuery{Q: "hinge 3", Kind: "Doc", Limit: 1})
	require.NoError(t, err)
	require.Equal(t, "D-0003", r.Results[0].Key)
	del("agent/copy")
	require.Zero(t, vectors(cp.ID))
	require.Equal(t, mainBefore, vectors(main))
	require.Equal(t, otherBefore, vectors(other))
}
