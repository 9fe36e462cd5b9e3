package commit

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"math"
	"strconv"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/schema"
)

// parseVector decodes a change's vector: a JSON array of at most
// schema.MaxDims numbers, each finite as a 32-bit float. Its length is
// checked against the Kind's dims once the Kind is known.
func parseVector(raw json.RawMessage, idx int, field string, ps *problemSet) []float32 {
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	var arr []any
	if err := dec.Decode(&arr); err != nil {
		ps.add(idx, field, "invalid_vector", "vector must be an array of numbers.")
		return nil
	}
	if len(arr) == 0 || len(arr) > schema.MaxDims {
		ps.add(idx, field, "invalid_vector", "vector must hold between 1 and %d numbers; it holds %d.", schema.MaxDims, len(arr))
		return nil
	}
	out := make([]float32, len(arr))
	for j, e := range arr {
		n, ok := e.(json.Number)
		if !ok {
			ps.add(idx, fmt.Sprintf("%s[%d]", field, j), "invalid_vector", "Each entry of vector must be a number.")
			return nil
		}
		f, err := strconv.ParseFloat(string(n), 32)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			ps.add(idx, fmt.Sprintf("%s[%d]", field, j), "invalid_vector", "Entry %s of vector is not a finite 32-bit number.", n)
			return nil
		}
		out[j] = float32(f)
	}
	var norm float64
	for _, x := range out {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		ps.add(idx, field, "invalid_vector", "vector is all zeros: it has no direction to compare.")
		return nil
	}
	return out
}

// clientVector is a vector a commit's changes give a Record.
type clientVector struct {
	key  string
	kind string
	spec string
	vec  []float32
}

// checkVectors checks each change's vector against the Kind its Record
// has after the commit and returns, per Record, the last vector given.
func checkVectors(st *state, changes []*change, ps *problemSet) []clientVector {
	last := map[string]int{}
	var out []clientVector
	for _, c := range changes {
		if c.vector == nil {
			continue
		}
		f := fmt.Sprintf("changes[%d].vector", c.idx)
		r := st.records[c.key]
		if r == nil || r.kind == nil || !r.exists {
			continue // the change itself has a problem already
		}
		e := r.kind.Embedding
		switch {
		case e == nil:
			ps.add(c.idx, f, "no_embedding", "Kind %s declares no embedding; declare one in the schema to store vectors.", r.kindName)
			continue
		case len(c.vector) != e.Dims:
			ps.add(c.idx, f, "dims", "Kind %s embeds %d dimensions; this vector has %d.", r.kindName, e.Dims, len(c.vector))
			continue
		}
		cv := clientVector{key: c.key, kind: r.kindName, spec: e.Spec(r.kindName), vec: c.vector}
		if i, ok := last[c.key]; ok {
			out[i] = cv
		} else {
			last[c.key] = len(out)
			out = append(out, cv)
		}
	}
	return out
}

// writeVectors stores the client's vectors of the Records commit seq wrote
// (normalized to unit length), gives the new version of a put naming
// VectorFrom that version's vector of the Kind's spec, and queues the
// embedding of the others whose Kind has an embedder (the job skips the
// versions that have a vector).
func (p *Pipeline) writeVectors(ctx context.Context, tx pgx.Tx, domainID, branchID int32, seq int64, st *state, changes []*change, vecs []clientVector) error {
	given := map[string]bool{}
	// One round trip for every client vector of the commit.
	var batch pgx.Batch
	var keys []string
	for _, v := range vecs {
		r := st.records[v.key]
		if r == nil || !r.exists {
			continue
		}
		given[v.key] = true
		keys = append(keys, v.key)
		batch.Queue(`INSERT INTO mat_vectors (domain_id, key, seq, spec, branch_id, kind, embedding)
			VALUES (lb_domain(), $1, $2, $3, $4, $5, lb_unit($6::real[]))
			ON CONFLICT (domain_id, key, seq, spec) DO UPDATE SET embedding = EXCLUDED.embedding`,
			v.key, seq, v.spec, branchID, v.kind, v.vec)
	}
	if len(keys) > 0 {
		res := tx.SendBatch(ctx, &batch)
		for _, k := range keys {
			if _, err := res.Exec(); err != nil {
				_ = res.Close()
				return fmt.Errorf("store vector of %s: %w", k, err)
			}
		}
		if err := res.Close(); err != nil {
			return fmt.Errorf("store vectors: %w", err)
		}
	}
	if err := carryVectors(ctx, tx, domainID, seq, branchID, st, changes, given); err != nil {
		return err
	}
	if p.cfg.EmbedJobs == nil {
		return nil
	}
	for _, r := range st.records {
		if !r.touched || !r.exists || r.kind == nil || r.kind.Embedding == nil || r.kind.Embedding.Model == schema.ModelClient {
			continue
		}
		if err := p.cfg.EmbedJobs(ctx, tx, domainID, branchID, seq); err != nil {
			return fmt.Errorf("queue embedding: %w", err)
		}
		return nil
	}
	return nil
}

// carryVectors gives the versions seq wrote by a put naming VectorFrom (its
// Record's last change, without a vector of its own) the vector of the
// Kind's current spec that the named version has.
func carryVectors(ctx context.Context, tx pgx.Tx, domainID int32, seq int64, branchID int32, st *state, changes []*change, given map[string]bool) error {
	var keys, specs []string
	var froms []int64
	for _, c := range changes {
		if c.vecFrom <= 0 || given[c.key] {
			continue
		}
		r := st.records[c.key]
		if r == nil || !r.exists || r.kind == nil || r.kind.Embedding == nil || r.lastIdx != c.idx {
			continue
		}
		keys = append(keys, c.key)
		froms = append(froms, c.vecFrom)
		specs = append(specs, r.kind.Embedding.Spec(r.kindName))
	}
	if len(keys) == 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `INSERT INTO mat_vectors (domain_id, key, seq, spec, branch_id, kind, embedding)
		SELECT v.domain_id, v.key, $2, v.spec, $3, v.kind, v.embedding
		  FROM unnest($4::text[], $5::bigint[], $6::text[]) AS c(key, seq, spec)
		  JOIN mat_vectors v ON v.domain_id = $1 AND v.key = c.key AND v.seq = c.seq AND v.spec = c.spec
		ON CONFLICT (domain_id, key, seq, spec) DO NOTHING`, domainID, seq, branchID, keys, froms, specs); err != nil {
		return fmt.Errorf("carry vectors of %d records: %w", len(keys), err)
	}
	return nil
}

// checkModels refuses a schema whose embeddings name a model no embedder
// serves.
func (p *Pipeline) checkModels(doc *schema.Document, ps *problemSet) {
	for i, kd := range doc.Kinds {
		if kd.Embedding == nil {
			continue
		}
		m := kd.Embedding.Model
		known := m == schema.ModelHash || m == schema.ModelClient
		if !known && p.cfg.KnownModel != nil {
			known = p.cfg.KnownModel(m)
		}
		if !known {
			ps.add(-1, fmt.Sprintf("kinds[%d].embedding.model", i), "unknown_model",
				"No embedder serves model %q: use %q, %q or the model of the configured HTTP embedder (embeddings.model).",
				m, schema.ModelHash, schema.ModelClient)
		}
	}
}
