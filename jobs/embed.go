package jobs

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/internal/embed"
	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// EmbedArgs asks for the vectors of the Records commit Seq wrote on a
// branch, for the Kinds that embed with an embedder (not "client").
type EmbedArgs struct {
	DomainID int32 `json:"domain_id" river:"unique"`
	BranchID int32 `json:"branch_id" river:"unique"`
	Seq      int64 `json:"seq" river:"unique"`
}

// Kind is the job kind, "semantic.embed".
func (EmbedArgs) Kind() string { return jobkind.Embed }

// InsertOpts makes the job unique by its arguments among unfinished jobs.
func (EmbedArgs) InsertOpts() river.InsertOpts { return uniqueOpts() }

// ReembedArgs asks for the vectors of every Record of a Kind of a branch
// under the Kind's embedding spec Spec.
type ReembedArgs struct {
	DomainID int32  `json:"domain_id" river:"unique"`
	BranchID int32  `json:"branch_id" river:"unique"`
	KindName string `json:"kind" river:"unique"`
	Spec     string `json:"spec" river:"unique"`
}

// Kind is the job kind, "semantic.reembed".
func (ReembedArgs) Kind() string { return jobkind.Reembed }

// InsertOpts makes the job unique by its arguments among unfinished jobs.
func (ReembedArgs) InsertOpts() river.InsertOpts { return uniqueOpts() }

// VectorIndexArgs asks for the HNSW index of a Domain's vectors of one
// spec (pgvector only; without it the job does nothing).
type VectorIndexArgs struct {
	DomainID int32  `json:"domain_id" river:"unique"`
	KindName string `json:"kind" river:"unique"`
	Spec     string `json:"spec" river:"unique"`
	Dims     int    `json:"dims" river:"unique"`
}

// Kind is the job kind, "semantic.index".
func (VectorIndexArgs) Kind() string { return jobkind.VectorIndex }

// InsertOpts makes the job unique by its arguments among unfinished jobs.
func (VectorIndexArgs) InsertOpts() river.InsertOpts { return uniqueOpts() }

// embedChunk is the Records embedded and written per statement batch.
const embedChunk = 256

// embedTimeout bounds one embedding job (an HTTP embedder is rate limited).
const embedTimeout = time.Hour

// Embedder runs the embedding jobs as the owner.
type Embedder struct {
	Store     *store.Store
	Embedders *embed.Set
	// BatchRows is the Records a re-embedding reads per step (0:
	// reembedBatch).
	BatchRows int
	// AfterBatch, when set, runs after each step of a re-embedding whose
	// progress is stored (Phase is the Kind; Rows the Records read,
	// Written the vectors written); its error stops the run as a crash
	// would, and the next run resumes from the stored progress.
	AfterBatch func(ctx context.Context, st BatchStats) error
}

// EmbedWorker runs semantic.embed.
type EmbedWorker struct {
	river.WorkerDefaults[EmbedArgs]
	e *Embedder
}

// Timeout bounds one run.
func (w *EmbedWorker) Timeout(*river.Job[EmbedArgs]) time.Duration { return embedTimeout }

// Work embeds the commit's Records.
func (w *EmbedWorker) Work(ctx context.Context, job *river.Job[EmbedArgs]) error {
	_, err := w.e.EmbedCommit(ctx, job.Args)
	return err
}

// ReembedWorker runs semantic.reembed.
type ReembedWorker struct {
	river.WorkerDefaults[ReembedArgs]
	e *Embedder
}

// Timeout bounds one run.
func (w *ReembedWorker) Timeout(*river.Job[ReembedArgs]) time.Duration { return embedTimeout }

// Work embeds the Kind's Records, then queues the HNSW index build.
func (w *ReembedWorker) Work(ctx context.Context, job *river.Job[ReembedArgs]) error {
	dims, err := w.e.Reembed(ctx, job.Args)
	if err != nil || dims == 0 {
		return err
	}
	client := river.ClientFromContext[pgx.Tx](ctx)
	if _, err := client.Insert(ctx, VectorIndexArgs{DomainID: job.Args.DomainID, KindName: job.Args.KindName,
		Spec: job.Args.Spec, Dims: dims}, nil); err != nil {
		return fmt.Errorf("queue vector index: %w", err)
	}
	return nil
}

// VectorIndexWorker runs semantic.index.
type VectorIndexWorker struct {
	river.WorkerDefaults[VectorIndexArgs]
	store *store.Store
}

// Timeout bounds one build.
func (w *VectorIndexWorker) Timeout(*river.Job[VectorIndexArgs]) time.Duration { return indexTimeout }

// Work builds the index.
func (w *VectorIndexWorker) Work(ctx context.Context, job *river.Job[VectorIndexArgs]) error {
	return BuildVectorIndex(ctx, w.store, job.Args)
}

// AddEmbedWorkers registers the embedding workers, embedding with set
// (nil: the hash embedder only).
func AddEmbedWorkers(w *river.Workers, s *store.Store, set *embed.Set) {
	if set == nil {
		set = embed.NewSet(nil)
	}
	e := &Embedder{Store: s, Embedders: set}
	river.AddWorker(w, &EmbedWorker{e: e})
	river.AddWorker(w, &ReembedWorker{e: e})
	river.AddWorker(w, &VectorIndexWorker{store: s})
}

// QueueEmbed returns the commit pipeline's EmbedJobs hook over client.
func QueueEmbed(client func() *river.Client[pgx.Tx]) func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, seq int64) error {
	return func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, seq int64) error {
		if _, err := client().InsertTx(ctx, tx, EmbedArgs{DomainID: domainID, BranchID: branchID, Seq: seq}, nil); err != nil {
			return fmt.Errorf("queue embedding of seq %d: %w", seq, err)
		}
		return nil
	}
}

// EnqueueReembeds queues, in tx, the re-embedding of every Kind whose
// embedding declaration a schema change of a branch added or changed.
func EnqueueReembeds(ctx context.Context, client *river.Client[pgx.Tx], tx pgx.Tx, domainID, branchID int32, old, new *schema.Schema) error {
	for _, name := range new.KindNames() {
		k := new.Kinds[name]
		if k.Embedding == nil {
			continue
		}
		if ok, found := old.Kind(name); found && ok.Embedding.Equal(k.Embedding) {
			continue
		}
		if _, err := client.InsertTx(ctx, tx, ReembedArgs{DomainID: domainID, BranchID: branchID, KindName: name,
			Spec: k.Embedding.Spec(name)}, nil); err != nil {
			return fmt.Errorf("queue re-embedding of kind %s: %w", name, err)
		}
		if _, err := setEmbedProgress(ctx, tx, domainID, branchID, embedProgress{Kind: name, Spec: k.Embedding.Spec(name),
			Model: k.Embedding.Model, State: "queued"}, false); err != nil {
			return err
		}
	}
	return nil
}

// embedProgress is the progress of the re-embedding of one Kind of a
// branch: refs.progress.embedding.<Kind>. Each Kind has its own entry,
// cursor included, so re-embeddings of several Kinds run side by side and
// each resumes from its own place.
type embedProgress struct {
	Kind     string     `json:"kind"`
	Spec     string     `json:"spec"`
	Model    string     `json:"model"`
	State    string     `json:"state"` // queued, running, done
	After    string     `json:"after,omitempty"`
	Embedded int64      `json:"embedded"`
	Total    int64      `json:"total_estimate"`
	Batches  int        `json:"batches"`
	Finished *time.Time `json:"finished_at,omitempty"`
}

// setEmbedProgress stores the progress of p.Kind. With own, it stores it
// only while the Kind's entry is of p.Spec (a later schema change queued
// another spec, whose entry a job of this one must not overwrite) and
// reports whether it did.
func setEmbedProgress(ctx context.Context, q interface {
	Exec(context.Context, string, ...any) (pgconn.CommandTag, error)
}, domainID, branchID int32, p embedProgress, own bool) (bool, error) {
	b, err := json.Marshal(p)
	if err != nil {
		return false, fmt.Errorf("encode embedding progress: %w", err)
	}
	tag, err := q.Exec(ctx, `UPDATE refs SET progress = jsonb_set(progress, '{embedding}',
		       coalesce(progress -> 'embedding', '{}') || jsonb_build_object($3::text, $4::jsonb))
		WHERE domain_id = $1 AND id = $2
		  AND (NOT $5 OR coalesce(progress -> 'embedding' -> $3 ->> 'spec', $6) = $6)`,
		domainID, branchID, p.Kind, string(b), own, p.Spec)
	if err != nil {
		return false, fmt.Errorf("record embedding progress of kind %s: %w", p.Kind, err)
	}
	return tag.RowsAffected() == 1, nil
}

// loadBranchSchema reads the compiled schema of a branch as the owner.
func loadBranchSchema(ctx context.Context, q pgx.Tx, domainID, branchID int32) (*schema.Schema, error) {
	var compiled []byte
	if err := q.QueryRow(ctx, `SELECT compiled FROM schemas WHERE domain_id = $1 AND branch_id = $2`, domainID, branchID).Scan(&compiled); err != nil {
		return nil, fmt.Errorf("load schema: %w", err)
	}
	sch := schema.Empty()
	if err := json.Unmarshal(compiled, sch); err != nil {
		return nil, fmt.Errorf("load schema: %w", err)
	}
	return sch, nil
}

// version is one Record version to embed.
type version struct {
	key    string
	seq    int64
	kind   string
	values map[string]any
}

// EmbedCommit embeds the Records commit a.Seq wrote on its branch whose
// Kind embeds with an embedder and which have no vector of that spec yet.
// It returns how many vectors it wrote. Idempotent.
func (e *Embedder) EmbedCommit(ctx context.Context, a EmbedArgs) (int, error) {
	var vs []version
	var sch *schema.Schema
	err := pgx.BeginFunc(ctx, e.Store.Pool, func(tx pgx.Tx) error {
		var err error
		if sch, err = loadBranchSchema(ctx, tx, a.DomainID, a.BranchID); err != nil {
			if errors.Is(err, pgx.ErrNoRows) {
				sch = nil // the branch is gone
				return nil
			}
			return err
		}
		rows, err := tx.Query(ctx, `SELECT DISTINCT ON (h.key) h.key, h.seq, h.kind, h."values"
			  FROM revisions v
			 CROSS JOIN LATERAL jsonb_array_elements(v.changes) c
			  JOIN mat_history h ON h.domain_id = v.domain_id AND h.branch_id = v.branch_id
			                    AND h.key = c ->> 'key' AND h.seq = v.seq
			 WHERE v.domain_id = $1 AND v.branch_id = $2 AND v.seq = $3
			   AND c ->> 'op' IN ('put', 'patch') AND h.op <> 'delete'
			 ORDER BY h.key`, a.DomainID, a.BranchID, a.Seq)
		if err != nil {
			return fmt.Errorf("read the commit's Records: %w", err)
		}
		vs, err = pgx.CollectRows(rows, scanVersion)
		return err
	})
	if err != nil || sch == nil {
		return 0, wrapEmbed(a.DomainID, a.BranchID, err)
	}
	n, err := e.embedVersions(ctx, a.DomainID, a.BranchID, sch, vs)
	return n, wrapEmbed(a.DomainID, a.BranchID, err)
}

func wrapEmbed(d, b int32, err error) error {
	if err == nil {
		return nil
	}
	return fmt.Errorf("embed records of domain %d branch %d: %w", d, b, err)
}

func scanVersion(r pgx.CollectableRow) (version, error) {
	var v version
	var raw []byte
	if err := r.Scan(&v.key, &v.seq, &v.kind, &raw); err != nil {
		return v, err
	}
	if len(raw) > 0 {
		if err := json.Unmarshal(raw, &v.values); err != nil {
			return v, fmt.Errorf("decode values of %s: %w", v.key, err)
		}
	}
	return v, nil
}

// embedVersions embeds the versions whose Kind (in sch) embeds with an
// embedder and writes their vectors, skipping those that have one.
func (e *Embedder) embedVersions(ctx context.Context, domainID, branchID int32, sch *schema.Schema, vs []version) (int, error) {
	byKind := map[string][]version{}
	for _, v := range vs {
		k, ok := sch.Kind(v.kind)
		if !ok || k.Embedding == nil || k.Embedding.Model == schema.ModelClient {
			continue
		}
		byKind[v.kind] = append(byKind[v.kind], v)
	}
	kinds := make([]string, 0, len(byKind))
	for k := range byKind {
		kinds = append(kinds, k)
	}
	sort.Strings(kinds)
	written := 0
	for _, kn := range kinds {
		emb := sch.Kinds[kn].Embedding
		em, err := e.Embedders.For(emb.Model)
		if err != nil {
			return written, fmt.Errorf("kind %s: %w", kn, err)
		}
		spec := emb.Spec(kn)
		list, err := e.withoutVector(ctx, domainID, spec, byKind[kn])
		if err != nil {
			return written, fmt.Errorf("kind %s: %w", kn, err)
		}
		for start := 0; start < len(list); start += embedChunk {
			chunk := list[start:min(start+embedChunk, len(list))]
			texts := make([]string, len(chunk))
			for i, v := range chunk {
				texts[i] = emb.Text(v.values)
			}
			vecs, err := em.Embed(ctx, texts, emb.Dims)
			if err != nil {
				return written, fmt.Errorf("kind %s: %w", kn, err)
			}
			batch := &pgx.Batch{}
			for i, v := range chunk {
				if vecs[i] == nil {
					continue // no text: no direction to compare
				}
				batch.Queue(`INSERT INTO mat_vectors (domain_id, key, seq, spec, branch_id, kind, embedding)
					VALUES ($1, $2, $3, $4, $5, $6, $7) ON CONFLICT DO NOTHING`,
					domainID, v.key, v.seq, spec, branchID, kn, vecs[i])
				written++
			}
			if batch.Len() > 0 {
				if err := e.Store.Pool.SendBatch(ctx, batch).Close(); err != nil {
					return written, fmt.Errorf("write vectors of kind %s: %w", kn, err)
				}
			}
		}
	}
	return written, nil
}

// withoutVector returns the versions of vs that have no vector of spec (a
// client's, one a merge carried over, or one a run before this wrote).
func (e *Embedder) withoutVector(ctx context.Context, domainID int32, spec string, vs []version) ([]version, error) {
	if len(vs) == 0 {
		return vs, nil
	}
	keys, seqs := make([]string, len(vs)), make([]int64, len(vs))
	for i, v := range vs {
		keys[i], seqs[i] = v.key, v.seq
	}
	rows, err := e.Store.Pool.Query(ctx, `SELECT c.key, c.seq FROM unnest($2::text[], $3::bigint[]) AS c(key, seq)
		 WHERE EXISTS (SELECT FROM mat_vectors v WHERE v.domain_id = $1 AND v.key = c.key AND v.seq = c.seq AND v.spec = $4)`,
		domainID, keys, seqs, spec)
	if err != nil {
		return nil, fmt.Errorf("read existing vectors: %w", err)
	}
	type ks struct {
		key string
		seq int64
	}
	have := map[ks]bool{}
	var k ks
	if _, err := pgx.ForEachRow(rows, []any{&k.key, &k.seq}, func() error {
		have[k] = true
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read existing vectors: %w", err)
	}
	if len(have) == 0 {
		return vs, nil
	}
	out := make([]version, 0, len(vs)-len(have))
	for _, v := range vs {
		if !have[ks{v.key, v.seq}] {
			out = append(out, v)
		}
	}
	return out, nil
}

// reembedBatch is the Records read per step of a re-embedding.
const reembedBatch = 1000

// Reembed embeds every current Record of a.KindName on the branch that has
// no vector of a.Spec, in keyset batches, recording progress on the
// branch. It returns the Kind's dims once done (0 when the Kind no longer
// has that spec: a later change queued its own job).
func (e *Embedder) Reembed(ctx context.Context, a ReembedArgs) (int, error) {
	var sch *schema.Schema
	var p embedProgress
	err := pgx.BeginFunc(ctx, e.Store.Pool, func(tx pgx.Tx) error {
		var err error
		sch, err = loadBranchSchema(ctx, tx, a.DomainID, a.BranchID)
		if errors.Is(err, pgx.ErrNoRows) {
			sch = nil
			return nil
		}
		if err != nil {
			return err
		}
		var raw []byte
		if err := tx.QueryRow(ctx, `SELECT progress -> 'embedding' -> $3 FROM refs WHERE domain_id = $1 AND id = $2`,
			a.DomainID, a.BranchID, a.KindName).Scan(&raw); err != nil {
			return fmt.Errorf("read embedding progress: %w", err)
		}
		if len(raw) > 0 {
			_ = json.Unmarshal(raw, &p) // unreadable progress starts over
		}
		return nil
	})
	if err != nil || sch == nil {
		return 0, wrapEmbed(a.DomainID, a.BranchID, err)
	}
	k, ok := sch.Kind(a.KindName)
	if !ok || k.Embedding == nil || k.Embedding.Spec(a.KindName) != a.Spec {
		return 0, nil
	}
	if p.Kind != a.KindName || p.Spec != a.Spec {
		p = embedProgress{Kind: a.KindName, Spec: a.Spec, Model: k.Embedding.Model}
	}
	if p.State == "done" {
		return k.Embedding.Dims, nil // a retry after the scan finished
	}
	p.State = "running"
	if err := e.Store.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND kind = $3 AND NOT deleted`,
		a.DomainID, a.BranchID, a.KindName).Scan(&p.Total); err != nil {
		return 0, wrapEmbed(a.DomainID, a.BranchID, err)
	}
	batchRows := e.BatchRows
	if batchRows <= 0 {
		batchRows = reembedBatch
	}
	for k.Embedding.Model != schema.ModelClient {
		var vs []version
		err := pgx.BeginFunc(ctx, e.Store.Pool, func(tx pgx.Tx) error {
			rows, err := tx.Query(ctx, `SELECT r.key, r.seq, r.kind, r."values" FROM mat_records r
				 WHERE r.domain_id = $1 AND r.branch_id = $2 AND r.kind = $3 AND NOT r.deleted AND r.key > $4
				 ORDER BY r.key LIMIT $5`, a.DomainID, a.BranchID, a.KindName, p.After, batchRows)
			if err != nil {
				return fmt.Errorf("read records: %w", err)
			}
			vs, err = pgx.CollectRows(rows, scanVersion)
			return err
		})
		if err != nil {
			return 0, wrapEmbed(a.DomainID, a.BranchID, err)
		}
		if len(vs) == 0 {
			break
		}
		n, err := e.embedVersions(ctx, a.DomainID, a.BranchID, sch, vs)
		if err != nil {
			return 0, wrapEmbed(a.DomainID, a.BranchID, err)
		}
		p.Embedded += int64(n)
		p.After = vs[len(vs)-1].key
		p.Batches++
		stored, err := setEmbedProgress(ctx, e.Store.Pool, a.DomainID, a.BranchID, p, true)
		if err != nil {
			return 0, wrapEmbed(a.DomainID, a.BranchID, err)
		}
		if !stored {
			return 0, nil // another spec of the Kind was queued meanwhile: its job takes over
		}
		if e.AfterBatch != nil {
			if err := e.AfterBatch(ctx, BatchStats{Batch: p.Batches, Phase: a.KindName, Rows: len(vs), Written: n, Limit: batchRows}); err != nil {
				return 0, wrapEmbed(a.DomainID, a.BranchID, err)
			}
		}
	}
	now := time.Now().UTC()
	p.State, p.After, p.Finished = "done", "", &now
	stored, err := setEmbedProgress(ctx, e.Store.Pool, a.DomainID, a.BranchID, p, true)
	if err != nil || !stored {
		return 0, wrapEmbed(a.DomainID, a.BranchID, err)
	}
	return k.Embedding.Dims, nil
}

// VectorIndexName is the name of the HNSW index of a Domain's vectors of
// one spec; lb_semantic looks it up by this name.
func VectorIndexName(domainID int32, spec string) string {
	return fmt.Sprintf("mv_hnsw_%d_%s", domainID, spec)
}

// BuildVectorIndex creates, concurrently and as the owner, the HNSW index
// of a Domain's vectors of one spec on the Domain's partition of
// mat_vectors. Without the vector extension it does nothing.
func BuildVectorIndex(ctx context.Context, s *store.Store, a VectorIndexArgs) error {
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("build vector index: %w", err)
	}
	defer conn.Release()
	path, err := store.VectorSearch(ctx, conn)
	if err != nil {
		return fmt.Errorf("build vector index: %w", err)
	}
	if path != store.VectorSearchHNSW {
		return nil
	}
	if a.Dims < 1 || a.Dims > schema.MaxDims {
		return fmt.Errorf("build vector index: dims %d out of range", a.Dims)
	}
	var partition string
	err = conn.QueryRow(ctx, `SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'mat_vectors'::regclass
		  AND satisfies_hash_partition('mat_vectors'::regclass,
		        substring(pg_get_expr(c.relpartbound, c.oid) from 'modulus (\d+)')::int,
		        substring(pg_get_expr(c.relpartbound, c.oid) from 'remainder (\d+)')::int, $1::int)`, a.DomainID).Scan(&partition)
	if err != nil {
		return fmt.Errorf("build vector index: find the partition of domain %d: %w", a.DomainID, err)
	}
	name := VectorIndexName(a.DomainID, a.Spec)
	// An invalid index left by an interrupted build is dropped first.
	var valid *bool
	_ = conn.QueryRow(ctx, `SELECT i.indisvalid FROM pg_index i WHERE i.indexrelid = to_regclass($1)`, name).Scan(&valid)
	if valid != nil && !*valid {
		if err := dropIndex(ctx, conn, name); err != nil {
			return fmt.Errorf("build vector index %s: drop invalid: %w", name, err)
		}
	}
	stmt := fmt.Sprintf(`CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON %s USING hnsw ((vec::vector(%d)) vector_cosine_ops) WHERE domain_id = %d AND spec = %s`,
		pgx.Identifier{name}.Sanitize(), pgx.Identifier{partition}.Sanitize(), a.Dims, a.DomainID, store.QuoteLiteral(a.Spec))
	if err := indexDDL(ctx, conn, stmt); err != nil {
		return fmt.Errorf("build vector index %s: %w", name, err)
	}
	return nil
}
