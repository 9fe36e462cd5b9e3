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

// TestReembedKindsSideBySide: two Kinds of one branch re-embed at once,
// each with its own progress on the branch; a run stopped mid-scan resumes
// from its own cursor (it reads only the Records it had not reached) and
// writes each vector once; a retry after the scan finished reads nothing.
func TestReembedKindsSideBySide(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := pgtest.Store(t)
	dom, err := s.CreateDomain(ctx, "vec")
	require.NoError(t, err)
	pipe := commit.New(s, commit.Config{})
	_, err = pipe.PutSchema(ctx, dom.ID, "main", &commit.SchemaRequest{Document: []byte(`{"kinds": [
		{"name": "Doc", "title": "title", "attributes": [{"name": "title", "type": "text", "required": true}],
		 "embedding": {"attributes": ["title"], "dims": 16, "model": "hash"}},
		{"name": "Note", "title": "text", "attributes": [{"name": "text", "type": "text", "required": true}],
		 "embedding": {"attributes": ["text"], "dims": 8, "model": "hash"}}]}`)})
	require.NoError(t, err)
	want := map[string]int{"Doc": 25, "Note": 18}
	var changes []commit.Change
	for i := range want["Doc"] {
		changes = append(changes, commit.Change{Op: "put", Kind: "Doc", Key: fmt.Sprintf("D-%03d", i), Values: []byte(fmt.Sprintf(`{"title": %q}`, docTitle(i)))})
	}
	for i := range want["Note"] {
		changes = append(changes, commit.Change{Op: "put", Kind: "Note", Key: fmt.Sprintf("N-%03d", i), Values: []byte(fmt.Sprintf(`{"text": %q}`, docTitle(i+7)))})
	}
	_, err = pipe.Commit(ctx, dom.ID, "main", &commit.Request{Message: "m", Author: "t", Changes: changes}, "")
	require.NoError(t, err)
	var branch int32
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT id FROM refs WHERE domain_id = $1 AND name = 'main'`, dom.ID).Scan(&branch))
	specs := map[string]string{}
	require.NoError(t, pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		var compiled []byte
		if err := tx.QueryRow(ctx, `SELECT compiled FROM schemas WHERE domain_id = $1 AND branch_id = $2`, dom.ID, branch).Scan(&compiled); err != nil {
			return err
		}
		c := schema.Empty()
		if err := json.Unmarshal(compiled, c); err != nil {
			return err
		}
		for k := range want {
			specs[k] = c.Kinds[k].Embedding.Spec(k)
		}
		return nil
	}))

	stop := errors.New("stopped")
	type step struct{ batch, rows int }
	seen := map[string][]step{}
	stopAt := map[string]int{}
	e := &jobs.Embedder{Store: s, Embedders: embed.NewSet(nil), BatchRows: 5, AfterBatch: func(_ context.Context, st jobs.BatchStats) error {
		seen[st.Phase] = append(seen[st.Phase], step{st.Batch, st.Rows})
		if st.Batch == stopAt[st.Phase] {
			return stop // killed mid-scan
		}
		return nil
	}}
	reembed := func(kind string) (int, error) {
		return e.Reembed(ctx, jobs.ReembedArgs{DomainID: dom.ID, BranchID: branch, KindName: kind, Spec: specs[kind]})
	}
	progress := func() map[string]map[string]any {
		b, err := s.GetBranch(ctx, dom.ID, "main")
		require.NoError(t, err)
		var p struct {
			Embedding map[string]map[string]any `json:"embedding"`
		}
		require.NoError(t, json.Unmarshal(b.Progress, &p))
		return p.Embedding
	}

	// Both Kinds stopped mid-scan, one after the other started.
	stopAt["Doc"], stopAt["Note"] = 2, 1
	_, err = reembed("Doc")
	require.ErrorIs(t, err, stop)
	_, err = reembed("Note")
	require.ErrorIs(t, err, stop)
	p := progress()
	require.Len(t, p, 2, "each running re-embedding shows: %v", p)
	for kind, embedded := range map[string]float64{"Doc": 10, "Note": 5} {
		require.Equal(t, kind, p[kind]["kind"])
		require.Equal(t, "running", p[kind]["state"])
		require.Equal(t, "hash", p[kind]["model"])
		require.Equal(t, embedded, p[kind]["embedded"], kind)
		require.EqualValues(t, want[kind], p[kind]["total_estimate"], kind)
	}

	// Each resumes from its own cursor: the finished batches are not read again.
	for kind, done := range map[string]int{"Doc": 2, "Note": 1} {
		stopAt[kind] = 0
		seen[kind] = nil
		dims, err := reembed(kind)
		require.NoError(t, err)
		require.Positive(t, dims)
		rows := 0
		for _, st := range seen[kind] {
			rows += st.rows
		}
		require.Equal(t, done+1, seen[kind][0].batch, "%s resumes after its last finished batch", kind)
		require.Equal(t, want[kind]-done*5, rows, "%s reads only the Records it had not reached", kind)
	}
	p = progress()
	for kind, n := range want {
		require.Equal(t, "done", p[kind]["state"], kind)
		require.EqualValues(t, n, p[kind]["embedded"], kind)
		var vectors, distinct int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*), count(DISTINCT (key, seq)) FROM mat_vectors WHERE domain_id = $1 AND spec = $2`,
			dom.ID, specs[kind]).Scan(&vectors, &distinct))
		require.Equal(t, n, vectors, kind)
		require.Equal(t, n, distinct, kind)
	}

	// A retry after the scan finished reads nothing and changes nothing.
	seen = map[string][]step{}
	dims, err := reembed("Doc")
	require.NoError(t, err)
	require.Equal(t, 16, dims)
	require.Empty(t, seen["Doc"])
	require.Equal(t, p, progress())

	// A schema change of Note while its job runs replaces Note's entry (a
	// job of the new embedding is queued with it): the running job of the
	// old one stops at its next batch and leaves the new entry alone.
	_, err = s.Pool.Exec(ctx, `UPDATE refs SET progress = progress #- '{embedding,Note}' WHERE domain_id = $1 AND id = $2`, dom.ID, branch)
	require.NoError(t, err)
	replaced := map[string]any{"kind": "Note", "spec": "0123456789abcdef", "model": "hash", "state": "queued", "embedded": float64(0), "total_estimate": float64(0), "batches": float64(0)}
	seen = map[string][]step{}
	e.AfterBatch = func(ctx context.Context, st jobs.BatchStats) error {
		seen[st.Phase] = append(seen[st.Phase], step{st.Batch, st.Rows})
		raw, err := json.Marshal(replaced)
		if err != nil {
			return err
		}
		_, err = s.Pool.Exec(ctx, `UPDATE refs SET progress = jsonb_set(progress, '{embedding,Note}', $3::jsonb) WHERE domain_id = $1 AND id = $2`, dom.ID, branch, string(raw))
		return err
	}
	dims, err = reembed("Note")
	require.NoError(t, err)
	require.Zero(t, dims, "the replaced embedding's job stops")
	require.Len(t, seen["Note"], 1, "it stops at the batch after the change")
	require.Equal(t, replaced, progress()["Note"])
}
