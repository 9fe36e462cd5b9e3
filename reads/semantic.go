package reads

import (
	"context"
	"encoding/json"
	"fmt"
	"sort"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/embed"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// Search modes.
const (
	ModeText     = "text"
	ModeSemantic = "semantic"
	ModeHybrid   = "hybrid"
)

// Search paths of semantic search.
const (
	PathExact = "exact" // every vector of the filtered Records compared
	PathHNSW  = "hnsw"  // pgvector's HNSW index, scanned iteratively (approximate)
)

// SemanticQuery is a semantic or hybrid search.
type SemanticQuery struct {
	Q      string    // embedded by the Kind's embedder (semantic: Q or Vector; hybrid: Q)
	Vector []float32 // a query vector of the Kind's dims
	Kind   string    // "" for every Kind that embeds alike
	// Attribute and Value (both or neither) keep the Records whose
	// Attribute has that value; they need Kind.
	Attribute string
	Value     string
	Limit     int
	At        string
	// TextWeight and SemanticWeight weigh the two rankings of a hybrid
	// search, 0 to 100 (negative: the configured weight); with both
	// resolved to 0 the search is Invalid, naming both.
	TextWeight, SemanticWeight int
}

// target is one Kind searched, with its embedding.
type target struct {
	kind string
	emb  *schema.Embedding
}

// Semantic ranks the branch's Records by the cosine similarity of their
// current version's vector to the query's: the vector given, or Q embedded
// by the Kind's embedder. The Kind and Attribute filters apply before the
// limit. Results are complete (FewerThanLimit: fewer than the limit matched
// the filters and had vectors), and Path says whether they came from exact
// search or the HNSW index.
func (r *Reader) Semantic(ctx context.Context, domainID int32, branch string, q SemanticQuery) (*SearchResults, error) {
	n, err := limit("limit", q.Limit, r.cfg.SearchDefaultLimit, r.cfg.SearchMaxLimit)
	if err != nil {
		return nil, err
	}
	if err := r.checkSemantic(branch, q, q.Vector == nil); err != nil {
		return nil, err
	}
	sch, err := r.branchSchema(ctx, domainID, branch)
	if err != nil {
		return nil, err
	}
	res, err := r.semantic(ctx, domainID, branch, sch, q, n)
	if err != nil {
		return nil, err
	}
	res.Mode = ModeSemantic
	return res, nil
}

func (r *Reader) checkSemantic(branch string, q SemanticQuery, needQ bool) error {
	if err := firstErr(checkBranch(branch), checkText("q", q.Q, maxTextChars, needQ), checkName("kind", q.Kind, false),
		checkName("attribute", q.Attribute, false), checkRevision("at", q.At)); err != nil {
		return err
	}
	if q.Q != "" && q.Vector != nil {
		return store.Invalid("vector", "conflict", "give q or vector, not both: vector is the query already embedded")
	}
	if (q.Attribute == "") != (q.Value == "") {
		return store.Invalid("attribute", "required", "attribute and value go together: ?attribute=country&value=DE")
	}
	if q.Attribute != "" && q.Kind == "" {
		return store.Invalid("kind", "required", "an attribute filter needs the kind whose attribute it is")
	}
	if len(q.Value) > maxValueBytes {
		return store.Invalid("value", "too_long", fmt.Sprintf("value is longer than %d bytes", maxValueBytes))
	}
	return checkChars("value", q.Value)
}

// semantic runs the semantic ranking of n Records under sch, the
// branch's schema the caller read.
func (r *Reader) semantic(ctx context.Context, domainID int32, branch string, sch *schema.Schema, q SemanticQuery, n int) (*SearchResults, error) {
	targets, err := semanticTargets(sch, q)
	if err != nil {
		return nil, err
	}
	vec := q.Vector
	if vec == nil {
		em, err := r.cfg.Embedders.For(targets[0].emb.Model)
		if err != nil {
			return nil, err
		}
		vs, err := em.Embed(ctx, []string{q.Q}, targets[0].emb.Dims)
		if err != nil {
			return nil, fmt.Errorf("embed the query: %w", err)
		}
		vec = vs[0]
	} else {
		vec = append([]float32(nil), vec...)
		if !embed.Unit(vec) {
			return nil, store.Invalid("vector", "invalid_vector", "vector is all zeros: it has no direction to compare")
		}
	}
	out := &SearchResults{Results: []SearchResult{}, Corrections: map[string][]string{}, Path: PathExact}
	if vec == nil {
		// The query has no word to embed: nothing is near it.
		out.FewerThanLimit = true
		return out, nil
	}
	kinds := make([]string, len(targets))
	specs := make([]string, len(targets))
	dims := make([]int32, len(targets))
	for i, t := range targets {
		kinds[i], specs[i], dims[i] = t.kind, t.emb.Spec(t.kind), int32(t.emb.Dims)
	}
	var attr, val any
	if q.Attribute != "" {
		attr, val = q.Attribute, q.Value
	}
	err = r.store.Read(ctx, domainID, `SELECT key, kind, title, score, path
		FROM lb_semantic($1, $2, $3, $4, $5, $6, lb_at_seq($1, $7), $8, $9, $10)`,
		[]any{branch, kinds, specs, dims, vec, n, q.At, attr, val, r.cfg.EfSearch},
		func(rows pgx.Rows) error {
			for rows.Next() {
				x := SearchResult{Match: ModeSemantic}
				var path string
				if err := rows.Scan(&x.Key, &x.Kind, &x.Title, &x.Score, &path); err != nil {
					return err
				}
				if path == PathHNSW {
					out.Path = PathHNSW
				}
				out.Results = append(out.Results, x)
			}
			return nil
		})
	if err != nil {
		return nil, translate("semantic search", err)
	}
	out.FewerThanLimit = len(out.Results) < n
	return out, nil
}

// semanticTargets are the Kinds a semantic query searches: its Kind, or
// every Kind whose embedding compares with the query (the vector's dims;
// for a text query one model and dims, which must be unambiguous).
func semanticTargets(sch *schema.Schema, q SemanticQuery) ([]target, error) {
	if q.Kind != "" {
		k, ok := sch.Kind(q.Kind)
		if !ok {
			return nil, lberr.Fields(lberr.Unprocessable, "unknown kind", lberr.Problem{Field: "kind", Code: "unknown_kind",
				Message: fmt.Sprintf("The schema has no kind named %s.", q.Kind)})
		}
		if k.Embedding == nil {
			return nil, lberr.Fields(lberr.Unprocessable, "kind not embedded", lberr.Problem{Field: "kind", Code: "no_embedding",
				Message: fmt.Sprintf("Kind %s declares no embedding; declare one in the schema to search it by meaning.", q.Kind)})
		}
		if q.Attribute != "" {
			if _, ok := k.Attr(q.Attribute); !ok {
				return nil, lberr.Fields(lberr.Unprocessable, "unknown attribute", lberr.Problem{Field: "attribute", Code: "unknown_attribute",
					Message: fmt.Sprintf("Kind %s has no attribute %s.", q.Kind, q.Attribute)})
			}
		}
		if q.Vector != nil && len(q.Vector) != k.Embedding.Dims {
			return nil, lberr.Fields(lberr.Unprocessable, "wrong dimensions", lberr.Problem{Field: "vector", Code: "dims",
				Message: fmt.Sprintf("Kind %s embeds %d dimensions; vector has %d.", q.Kind, k.Embedding.Dims, len(q.Vector))})
		}
		return []target{{kind: q.Kind, emb: k.Embedding}}, nil
	}
	var ts []target
	models := map[string]bool{}
	for _, name := range sch.KindNames() {
		e := sch.Kinds[name].Embedding
		switch {
		case e == nil:
			continue
		case q.Vector != nil && len(q.Vector) != e.Dims:
			continue
		case q.Vector == nil && e.Model == schema.ModelClient:
			continue
		}
		ts = append(ts, target{kind: name, emb: e})
		models[fmt.Sprintf("%s/%d", e.Model, e.Dims)] = true
	}
	if len(ts) == 0 {
		what := "no kind declares an embedding with an embedder"
		if q.Vector != nil {
			what = fmt.Sprintf("no kind declares an embedding of %d dimensions", len(q.Vector))
		}
		return nil, lberr.Fields(lberr.Unprocessable, "nothing to search by meaning", lberr.Problem{Field: "kind", Code: "no_embedding",
			Message: "The schema has nothing to search by meaning: " + what + "."})
	}
	if q.Vector == nil && len(models) > 1 {
		names := make([]string, 0, len(models))
		for m := range models {
			names = append(names, m)
		}
		sort.Strings(names)
		return nil, lberr.Fields(lberr.Unprocessable, "kind required", lberr.Problem{Field: "kind", Code: "required",
			Message: fmt.Sprintf("Kinds embed with different models (%v): name the kind to search.", names)})
	}
	return ts, nil
}

// branchSchema reads the compiled schema of a branch of the Domain.
func (r *Reader) branchSchema(ctx context.Context, domainID int32, branch string) (*schema.Schema, error) {
	var compiled []byte
	err := r.store.Read(ctx, domainID, `SELECT s.compiled FROM refs b
		JOIN schemas s ON s.domain_id = b.domain_id AND s.branch_id = b.id
		WHERE b.domain_id = lb_domain() AND b.name = $1 AND b.state <> 'deleting'`, []any{branch},
		func(rows pgx.Rows) error {
			for rows.Next() {
				if err := rows.Scan(&compiled); err != nil {
					return err
				}
			}
			return nil
		})
	if err != nil {
		return nil, translate("read schema", err)
	}
	if compiled == nil {
		return nil, fmt.Errorf("branch %q: %w", branch, store.ErrNotFound)
	}
	sch := schema.Empty()
	if err := json.Unmarshal(compiled, sch); err != nil {
		return nil, fmt.Errorf("decode schema of branch %q: %w", branch, err)
	}
	return sch, nil
}

// Hybrid fuses the full-text and the semantic rankings of Q by reciprocal
// rank fusion: a Record ranked r by a search adds weight/(k+r), k being
// search.hybrid.rrf_k. Each ranking contributes up to Limit×3 candidates
// (at most SearchMaxLimit). A Record found only by meaning has match
// "semantic"; one found by words keeps its text match.
func (r *Reader) Hybrid(ctx context.Context, domainID int32, branch string, q SemanticQuery) (*SearchResults, error) {
	n, err := limit("limit", q.Limit, r.cfg.SearchDefaultLimit, r.cfg.SearchMaxLimit)
	if err != nil {
		return nil, err
	}
	if q.Vector != nil {
		return nil, store.Invalid("vector", "not_allowed", "mode=hybrid embeds q; send q, or use mode=semantic with vector")
	}
	if q.Attribute != "" {
		return nil, store.Invalid("attribute", "not_allowed", "the attribute filter applies to mode=semantic; full-text search has none")
	}
	if err := r.checkSemantic(branch, q, true); err != nil {
		return nil, err
	}
	wt, ws := r.cfg.HybridTextWeight, r.cfg.HybridSemanticWeight
	if q.TextWeight >= 0 {
		wt = q.TextWeight
	}
	if q.SemanticWeight >= 0 {
		ws = q.SemanticWeight
	}
	if wt == 0 && ws == 0 {
		msg := "text_weight and semantic_weight are both 0 (counting the configured search.hybrid weights): at least one ranking must count"
		return nil, lberr.Fields(lberr.Invalid, "invalid request",
			lberr.Problem{Field: "text_weight", Code: "invalid_value", Message: msg},
			lberr.Problem{Field: "semantic_weight", Code: "invalid_value", Message: msg})
	}
	cands := min(n*3, r.cfg.SearchMaxLimit)
	text, err := r.Search(ctx, domainID, branch, SearchQuery{Q: q.Q, Kind: q.Kind, Limit: cands, At: q.At})
	if err != nil {
		return nil, err
	}
	sch, err := r.branchSchema(ctx, domainID, branch)
	if err != nil {
		return nil, err
	}
	sem, err := r.semantic(ctx, domainID, branch, sch, q, cands)
	if err != nil {
		return nil, err
	}
	type fused struct {
		x     SearchResult
		score float64
	}
	byKey := map[string]*fused{}
	var order []*fused
	add := func(rs []SearchResult, w int) {
		for i, x := range rs {
			f := byKey[x.Key]
			if f == nil {
				f = &fused{x: x}
				byKey[x.Key] = f
				order = append(order, f)
			}
			f.score += float64(w) / float64(r.cfg.RRFK+i+1)
		}
	}
	add(text.Results, wt)
	add(sem.Results, ws)
	sort.SliceStable(order, func(i, j int) bool {
		if order[i].score != order[j].score {
			return order[i].score > order[j].score
		}
		return order[i].x.Key < order[j].x.Key
	})
	out := &SearchResults{Results: []SearchResult{}, Corrections: text.Corrections, Mode: ModeHybrid, Path: sem.Path,
		Ranked: text.Ranked, Truncated: text.Truncated}
	for _, f := range order {
		if len(out.Results) == n {
			break
		}
		if f.score <= 0 {
			continue
		}
		f.x.Score = float32(f.score)
		out.Results = append(out.Results, f.x)
	}
	out.FewerThanLimit = len(out.Results) < n
	return out, nil
}
