package keeper_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/embed"
)

// semanticSchema: Parts embedded by the hash embedder (name and
// description), Notes with client vectors of 3 dimensions, Suppliers not
// embedded.
const semanticSchema = `{"kinds": [
  {"name": "Supplier", "title": "name", "attributes": [
     {"name": "name", "type": "text", "required": true, "search": true}]},
  {"name": "Part", "title": "name", "attributes": [
     {"name": "name", "type": "text", "required": true, "search": true},
     {"name": "description", "type": "text"},
     {"name": "country", "type": "text"},
     {"name": "weight", "type": "number"}],
   "embedding": {"attributes": ["name", "description"], "dims": 128, "model": "hash"}},
  {"name": "Note", "title": "text", "attributes": [
     {"name": "text", "type": "text", "required": true}],
   "embedding": {"attributes": ["text"], "dims": 3, "model": "client"}}]}`

// searchAnswer is the body of GET .../search.
type searchAnswer struct {
	Mode           string `json:"mode"`
	Path           string `json:"path"`
	FewerThanLimit bool   `json:"fewer_than_limit"`
	Results        []struct {
		Key   string  `json:"key"`
		Kind  string  `json:"kind"`
		Title string  `json:"title"`
		Score float64 `json:"score"`
		Match string  `json:"match"`
	} `json:"results"`
}

// score is the score of key in the answer, -2 when absent.
func (a searchAnswer) score(key string) float64 {
	for _, r := range a.Results {
		if r.Key == key {
			return r.Score
		}
	}
	return -2
}

func (a searchAnswer) keys() []string {
	out := make([]string, len(a.Results))
	for i, r := range a.Results {
		out[i] = r.Key
	}
	return out
}

// search runs GET .../search with the query parameters and requires 200.
func (e *env) search(domain, branch, token string, params url.Values) searchAnswer {
	e.t.Helper()
	var a searchAnswer
	e.must(http.StatusOK, "GET", branchPath(domain, branch)+"/search?"+params.Encode(), token, nil).Decode(e.t, &a)
	return a
}

// vectorCount counts the vectors of a Domain (owner).
func (e *env) vectorCount(domain string) int {
	e.t.Helper()
	var n int
	require.NoError(e.t, e.Store.Pool.QueryRow(context.Background(), `SELECT count(*) FROM mat_vectors v
		JOIN domains d ON d.id = v.domain_id WHERE d.name = $1`, domain).Scan(&n))
	return n
}

// waitVectors waits until a Domain holds n vectors.
func (e *env) waitVectors(domain string, n int) {
	e.t.Helper()
	e.waitFor(fmt.Sprintf("%d vectors in %s", n, domain), func() bool { return e.vectorCount(domain) >= n })
}

var parts = []struct{ key, name, desc, country string }{
	{"P-1", "Hex bolt M8", "zinc plated steel hex bolt", "DE"},
	{"P-2", "Hex nut M8", "steel hex nut for bolts", "FR"},
	{"P-3", "Ball bearing 608", "deep groove ball bearing for skateboards", "DE"},
	{"P-4", "Copper wire", "insulated copper wire, 2 mm", "FR"},
	{"P-5", "Rubber gasket", "oil resistant rubber seal ring", "IT"},
	{"P-6", "Aluminium sheet", "brushed aluminium plate 1 mm", "IT"},
}

func seedParts(e *env, domain, token string) string {
	changes := []map[string]any{}
	for _, p := range parts {
		changes = append(changes, map[string]any{"op": "put", "kind": "Part", "key": p.key,
			"values": map[string]any{"name": p.name, "description": p.desc, "country": p.country}})
	}
	changes = append(changes, map[string]any{"op": "put", "kind": "Supplier", "key": "S-1", "values": map[string]any{"name": "Hex bolt works"}})
	rev := e.commit(domain, "main", token, map[string]any{"message": "parts", "author": "t", "changes": changes})
	e.waitVectors(domain, len(parts))
	return rev
}

func TestSemanticSearchWithTheHashEmbedder(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	e.putSchema("acme", "main", admin, semanticSchema)
	rev1 := seedParts(e, "acme", admin)

	ready := e.must(http.StatusOK, "GET", "/readyz", "", nil).JSON(t)
	require.Equal(t, "exact", ready["vector_search"])
	require.Equal(t, "exact", e.must(http.StatusOK, "GET", branchPath("acme", "main")+"/schema", admin, nil).JSON(t)["vector_search"])

	// Nearest first; only embedded Kinds (the Supplier matching by words is not a candidate).
	a := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"hex bolt"}, "limit": {"3"}})
	require.Equal(t, "semantic", a.Mode)
	require.Equal(t, "exact", a.Path)
	require.Equal(t, []string{"P-1", "P-2"}, a.keys()[:2])
	require.False(t, a.FewerThanLimit)
	for i, r := range a.Results {
		require.Equal(t, "Part", r.Kind)
		require.Equal(t, "semantic", r.Match)
		if i > 0 {
			require.LessOrEqual(t, r.Score, a.Results[i-1].Score)
		}
	}
	require.InDelta(t, 1, a.Results[0].Score, 0.5)

	// The Attribute filter applies before the limit: the DE Parts, both,
	// even though P-2 is nearer than P-3.
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"hex bolt"}, "kind": {"Part"},
		"attribute": {"country"}, "value": {"DE"}, "limit": {"2"}})
	require.Equal(t, []string{"P-1", "P-3"}, a.keys())
	// Fewer than asked: said so.
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"hex bolt"}, "kind": {"Part"},
		"attribute": {"country"}, "value": {"DE"}, "limit": {"10"}})
	require.Len(t, a.Results, 2)
	require.True(t, a.FewerThanLimit)

	// A change is searchable by meaning once its vector lands; at= reads the
	// version current at that Revision.
	e.commit("acme", "main", admin, map[string]any{"message": "rename", "author": "t", "changes": []map[string]any{
		{"op": "patch", "key": "P-5", "values": map[string]any{"name": "Hex bolt M10", "description": "stainless hex bolt"}}}})
	e.waitVectors("acme", len(parts)+1)
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"stainless hex bolt M10"}, "limit": {"1"}})
	require.Equal(t, []string{"P-5"}, a.keys())
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"stainless hex bolt M10"}, "limit": {"1"}, "at": {rev1}})
	require.NotEqual(t, []string{"P-5"}, a.keys())
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"oil resistant rubber seal"}, "limit": {"1"}, "at": {rev1}})
	require.Equal(t, []string{"P-5"}, a.keys())
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"oil resistant rubber seal"}, "limit": {"6"}})
	old := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"oil resistant rubber seal"}, "limit": {"6"}, "at": {rev1}})
	require.Greater(t, old.score("P-5"), 0.6)
	require.Less(t, a.score("P-5"), 0.4, "the head's version of P-5 no longer says rubber seal")

	// Hybrid: words and meaning fused; a Record found only by meaning is
	// marked semantic.
	h := e.search("acme", "main", admin, url.Values{"mode": {"hybrid"}, "q": {"bolt"}, "kind": {"Part"}, "limit": {"6"}})
	require.Equal(t, "hybrid", h.Mode)
	require.Contains(t, h.keys()[:2], "P-1")
	var sawSemantic bool
	for _, r := range h.Results {
		sawSemantic = sawSemantic || r.Match == "semantic"
	}
	require.True(t, sawSemantic, "hybrid adds Records found by meaning only: %v", h.Results)
	// Weights: only the text ranking counts with semantic_weight=0.
	h = e.search("acme", "main", admin, url.Values{"mode": {"hybrid"}, "q": {"bolt"}, "kind": {"Part"}, "semantic_weight": {"0"}})
	for _, r := range h.Results {
		require.NotEqual(t, "semantic", r.Match)
	}
	// Deleted Records are not found.
	e.commit("acme", "main", admin, map[string]any{"message": "del", "author": "t", "changes": []map[string]any{{"op": "delete", "key": "P-1"}}})
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"hex bolt M8 zinc plated"}, "limit": {"6"}})
	require.NotContains(t, a.keys(), "P-1")
}

// TestHybridWeights: a weight may be 0, in the configuration and in the
// request (that ranking is left out), but not both once the request's are
// laid over the configured ones: that is 400 naming both fields.
func TestHybridWeights(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name          string
		text, sem     int // configured
		query         url.Values
		status        int
		semanticMatch *bool // whether some result is found by meaning only
		likeSemantic  bool  // the results are those of mode=semantic
	}{
		{name: "configured semantic 0", text: 1, sem: 0, status: 200, semanticMatch: ptr(false)},
		{name: "configured semantic 0, request 1", text: 1, sem: 0, query: url.Values{"semantic_weight": {"1"}}, status: 200, semanticMatch: ptr(true)},
		{name: "configured text 0", text: 0, sem: 1, status: 200, likeSemantic: true},
		{name: "configured semantic 0, request text 0", text: 1, sem: 0, query: url.Values{"text_weight": {"0"}}, status: 400},
		{name: "request both 0", text: 1, sem: 1, query: url.Values{"text_weight": {"0"}, "semantic_weight": {"0"}}, status: 400},
		{name: "request text 0", text: 1, sem: 1, query: url.Values{"text_weight": {"0"}}, status: 200, likeSemantic: true},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			e := testServer(t, func(cfg *config.Config) {
				cfg.Search.Hybrid.TextWeight, cfg.Search.Hybrid.SemanticWeight = c.text, c.sem
			})
			e.createDomain("acme")
			admin := e.token("acme", "admin", "admin")
			e.putSchema("acme", "main", admin, semanticSchema)
			seedParts(e, "acme", admin)
			q := url.Values{"mode": {"hybrid"}, "q": {"bolt"}, "kind": {"Part"}, "limit": {"6"}}
			for k, v := range c.query {
				q[k] = v
			}
			r := e.do("GET", branchPath("acme", "main")+"/search?"+q.Encode(), admin, nil)
			require.Equal(t, c.status, r.Status, r.String())
			if c.status != 200 {
				require.Contains(t, r.String(), `"field":"text_weight"`)
				require.Contains(t, r.String(), `"field":"semantic_weight"`)
				return
			}
			var a searchAnswer
			r.Decode(t, &a)
			require.NotEmpty(t, a.Results)
			if c.semanticMatch != nil {
				saw := false
				for _, x := range a.Results {
					saw = saw || x.Match == "semantic"
				}
				require.Equal(t, *c.semanticMatch, saw, "%v", a.Results)
			}
			if c.likeSemantic {
				sem := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"bolt"}, "kind": {"Part"}, "limit": {"6"}})
				require.Equal(t, sem.keys(), a.keys(), "only the semantic ranking counts")
			}
		})
	}
}

func ptr[T any](v T) *T { return &v }

func TestSemanticSearchBadInput(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	e.putSchema("acme", "main", admin, semanticSchema)
	seedParts(e, "acme", admin)
	p := branchPath("acme", "main") + "/search?"
	for _, c := range []struct {
		query  string
		status int
		field  string
	}{
		{"mode=fuzzy&q=x", 400, "mode"},
		{"mode=semantic", 400, "q"},
		{"q=x&vector=1,2,3", 400, "vector"},
		{"mode=semantic&vector=1,abc,3", 400, "vector"},
		{"mode=semantic&vector=1,1e39,3", 400, "vector"},
		{"mode=semantic&vector=0,0,0", 400, "vector"},
		{"mode=semantic&q=x&vector=1,2,3", 400, "vector"},
		{"mode=semantic&q=x&attribute=country", 400, "attribute"},
		{"mode=semantic&q=x&attribute=country&value=DE", 400, "kind"},
		{"mode=semantic&q=x&kind=Supplier", 422, "kind"},
		{"mode=semantic&q=x&kind=Nope", 422, "kind"},
		{"mode=semantic&q=x&kind=Part&attribute=colour&value=red", 422, "attribute"},
		{"mode=semantic&q=x&kind=Note", 422, ""},
		{"mode=semantic&vector=1,2&kind=Note", 422, "vector"},
		{"mode=semantic&vector=1,2,3,4,5", 422, "kind"},
		{"mode=hybrid&q=x&vector=1,2,3", 400, "vector"},
		{"mode=hybrid&q=x&text_weight=101", 400, "text_weight"},
		{"mode=semantic&q=x&kind=Part&attribute=x%27%3B+drop+table+mat_vectors--&value=1", 400, "attribute"},
	} {
		r := e.do("GET", p+c.query, admin, nil)
		require.Equal(t, c.status, r.Status, "%s: %s", c.query, r.Body)
		require.Contains(t, r.Header.Get("Content-Type"), "application/problem+json", c.query)
		if c.field != "" {
			require.Contains(t, r.String(), `"`+c.field+`"`, "%s names the field: %s", c.query, r.Body)
		}
	}
	// A hostile value is a value, not SQL.
	a := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"bolt"}, "kind": {"Part"},
		"attribute": {"country"}, "value": {"DE' OR 1=1 --"}})
	require.Empty(t, a.Results)
	require.Equal(t, len(parts), e.vectorCount("acme"))
}

func TestClientVectors(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	e.putSchema("acme", "main", admin, semanticSchema)
	note := func(key string, v any) map[string]any {
		c := map[string]any{"op": "put", "kind": "Note", "key": key, "values": map[string]any{"text": key}}
		if v != nil {
			c["vector"] = v
		}
		return c
	}
	e.commit("acme", "main", admin, map[string]any{"message": "notes", "author": "t", "changes": []map[string]any{
		note("N-x", []float64{1, 0, 0}), note("N-y", []float64{0, 2, 0}), note("N-xy", []float64{1, 1, 0.1})}})
	// Written with the commit, no job needed.
	require.Equal(t, 3, e.vectorCount("acme"))
	a := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "vector": {"0.9,0.1,0"}, "kind": {"Note"}})
	require.Equal(t, []string{"N-x", "N-xy", "N-y"}, a.keys())
	require.InDelta(t, 0.99, a.Results[0].Score, 0.01)
	// Without kind: every Kind of those dimensions.
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "vector": {"0,1,0"}, "limit": {"1"}})
	require.Equal(t, []string{"N-y"}, a.keys())

	before := e.rowCounts()
	for _, c := range []struct {
		change map[string]any
		code   string
	}{
		{note("N-1", []float64{1, 2}), "dims"},
		{note("N-1", []any{1, "2", 3}), "invalid_vector"},
		{note("N-1", []float64{1, 1e39, 3}), "invalid_vector"},
		{note("N-1", []float64{0, 0, 0}), "invalid_vector"},
		{note("N-1", "1,2,3"), "invalid_vector"},
		{map[string]any{"op": "put", "kind": "Supplier", "key": "S-1", "values": map[string]any{"name": "x"}, "vector": []float64{1, 2, 3}}, "no_embedding"},
	} {
		r := e.do("POST", branchPath("acme", "main")+"/commits", admin, map[string]any{"message": "bad", "author": "t",
			"changes": []map[string]any{note("N-ok", []float64{1, 1, 1}), c.change}})
		require.Equal(t, http.StatusUnprocessableEntity, r.Status, "%v: %s", c.change, r.Body)
		var p struct {
			Errors []struct {
				Index *int   `json:"index"`
				Field string `json:"field"`
				Code  string `json:"code"`
			} `json:"errors"`
		}
		r.Decode(t, &p)
		require.Len(t, p.Errors, 1, "%s", r.Body)
		require.Equal(t, 1, *p.Errors[0].Index)
		require.Equal(t, c.code, p.Errors[0].Code)
		require.True(t, strings.HasPrefix(p.Errors[0].Field, "changes[1].vector"), p.Errors[0].Field)
	}
	r := e.do("POST", branchPath("acme", "main")+"/commits", admin, map[string]any{"message": "bad", "author": "t",
		"changes": []map[string]any{{"op": "delete", "key": "N-x", "vector": []float64{1, 2, 3}}}})
	require.Equal(t, http.StatusBadRequest, r.Status, "%s", r.Body)
	require.Equal(t, before, e.rowCounts(), "a refused commit writes nothing")
}

func TestEmbeddingSchemaValidation(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	kind := func(emb string) string {
		return `{"kinds": [{"name": "Part", "title": "name", "attributes": [
			{"name": "name", "type": "text"}, {"name": "weight", "type": "number"}], "embedding": ` + emb + `}]}`
	}
	for _, c := range []struct{ emb, field, code string }{
		{`{"attributes": [], "dims": 8, "model": "hash"}`, "kinds[0].embedding.attributes", "required"},
		{`{"attributes": ["nope"], "dims": 8, "model": "hash"}`, "kinds[0].embedding.attributes[0]", "unknown_attribute"},
		{`{"attributes": ["weight"], "dims": 8, "model": "hash"}`, "kinds[0].embedding.attributes[0]", "not_allowed"},
		{`{"attributes": ["name", "name"], "dims": 8, "model": "hash"}`, "kinds[0].embedding.attributes[1]", "duplicate"},
		{`{"attributes": ["name"], "dims": 0, "model": "hash"}`, "kinds[0].embedding.dims", "invalid_value"},
		{`{"attributes": ["name"], "dims": 2001, "model": "hash"}`, "kinds[0].embedding.dims", "invalid_value"},
		{`{"attributes": ["name"], "dims": 8, "model": ""}`, "kinds[0].embedding.model", "required"},
		{`{"attributes": ["name"], "dims": 8, "model": "text-embedding-3-small"}`, "kinds[0].embedding.model", "unknown_model"},
		{`{"attributes": ["name"], "dims": 8.5, "model": "hash"}`, "kinds[0].embedding.dims", "invalid_json"},
		{`{"attributes": ["name"], "dims": 8, "model": "hash", "colour": 1}`, "kinds[0].embedding.colour", "invalid_json"},
	} {
		r := e.do("PUT", branchPath("acme", "main")+"/schema", admin, kind(c.emb))
		require.Contains(t, []int{400, 422}, r.Status, "%s: %s", c.emb, r.Body)
		require.Contains(t, r.String(), `"field":"`+c.field+`"`, "%s: %s", c.emb, r.Body)
		require.Contains(t, r.String(), `"code":"`+c.code+`"`, "%s: %s", c.emb, r.Body)
	}
}

func TestReembedOnSchemaChangeAndOverlays(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	e.putSchema("acme", "main", admin, semanticSchema)
	seedParts(e, "acme", admin)

	// An overlay's own change masks the base's vector; the base is unchanged.
	e.createBranchReq("acme", admin, map[string]any{"name": "agent/a", "from": "main", "mode": "overlay"})
	e.commit("acme", "agent/a", admin, map[string]any{"message": "m", "author": "t", "changes": []map[string]any{
		{"op": "patch", "key": "P-6", "values": map[string]any{"name": "Titanium screw", "description": "titanium screw"}}}})
	e.waitVectors("acme", len(parts)+1)
	q := url.Values{"mode": {"semantic"}, "q": {"brushed aluminium plate"}, "kind": {"Part"}, "limit": {"6"}}
	require.Equal(t, "P-6", e.search("acme", "main", admin, q).keys()[0])
	require.Greater(t, e.search("acme", "main", admin, q).score("P-6"), 0.6)
	require.Less(t, e.search("acme", "agent/a", admin, q).score("P-6"), 0.4, "the overlay's version masks the base's vector")
	q.Set("q", "titanium screw")
	q.Set("limit", "6")
	require.Equal(t, "P-6", e.search("acme", "agent/a", admin, q).keys()[0])
	require.Greater(t, e.search("acme", "agent/a", admin, q).score("P-6"), 0.9)
	require.Less(t, e.search("acme", "main", admin, q).score("P-6"), 0.4, "main keeps its own version's vector")
	q.Set("limit", "1")
	// The overlay's other Records are the base's versions, with their vectors.
	q.Set("q", "copper wire")
	require.Equal(t, []string{"P-4"}, e.search("acme", "agent/a", admin, q).keys())

	// Embedding the description only: the schema change queues a
	// re-embedding (the request does not embed), progress on the branch.
	doc := strings.Replace(semanticSchema, `"attributes": ["name", "description"], "dims": 128`, `"attributes": ["description"], "dims": 64`, 1)
	require.NotEqual(t, semanticSchema, doc)
	e.putSchema("acme", "main", admin, doc)
	var b struct {
		Progress map[string]any `json:"progress"`
	}
	e.waitFor("re-embedding", func() bool {
		e.must(http.StatusOK, "GET", branchPath("acme", "main"), admin, nil).Decode(t, &b)
		kinds, _ := b.Progress["embedding"].(map[string]any)
		p, _ := kinds["Part"].(map[string]any)
		return p != nil && p["state"] == "done"
	})
	p := b.Progress["embedding"].(map[string]any)["Part"].(map[string]any)
	require.Equal(t, "Part", p["kind"])
	require.EqualValues(t, len(parts), p["embedded"])
	// "M8" is in names only: the new vectors no longer see it.
	a := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"deep groove ball bearing skateboards"}, "kind": {"Part"}, "limit": {"1"}})
	require.Equal(t, []string{"P-3"}, a.keys())
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "vector": {strings.Repeat("0.1,", 63) + "0.1"}, "kind": {"Part"}})
	require.Len(t, a.Results, len(parts))
}

// fakeEmbeddings is an OpenAI-compatible embeddings server on loopback: it
// answers the hash embedding of each input (so results are checkable),
// refuses the first request with 429, and records what it was sent.
type fakeEmbeddings struct {
	mu       sync.Mutex
	calls    atomic.Int32
	batches  []int
	auth     []string
	model    []string
	failNext atomic.Bool
}

func (f *fakeEmbeddings) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	f.calls.Add(1)
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Model      string   `json:"model"`
		Input      []string `json:"input"`
		Dimensions int      `json:"dimensions"`
	}
	if err := json.Unmarshal(body, &req); err != nil {
		http.Error(w, "bad json", http.StatusBadRequest)
		return
	}
	if f.failNext.CompareAndSwap(true, false) {
		w.Header().Set("Retry-After", "0")
		http.Error(w, "slow down", http.StatusTooManyRequests)
		return
	}
	f.mu.Lock()
	f.batches = append(f.batches, len(req.Input))
	f.auth = append(f.auth, r.Header.Get("Authorization"))
	f.model = append(f.model, req.Model)
	f.mu.Unlock()
	type item struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	}
	out := struct {
		Data []item `json:"data"`
	}{}
	for i, in := range req.Input {
		out.Data = append(out.Data, item{Index: i, Embedding: embed.HashVector(in, req.Dimensions)})
	}
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(out)
}

// waitReembedded waits until the branch shows the re-embedding of kind done.
func (e *env) waitReembedded(domain, branch, token, kind string) {
	e.t.Helper()
	e.waitFor("the re-embedding of "+kind, func() bool {
		var b struct {
			Progress struct {
				Embedding map[string]struct {
					State string `json:"state"`
				} `json:"embedding"`
			} `json:"progress"`
		}
		e.must(http.StatusOK, "GET", branchPath(domain, branch), token, nil).Decode(e.t, &b)
		return b.Progress.Embedding[kind].State == "done"
	})
}

func TestHTTPEmbedder(t *testing.T) {
	t.Parallel()
	fake := &fakeEmbeddings{}
	fake.failNext.Store(true)
	hs := httptest.NewServer(fake)
	t.Cleanup(hs.Close)
	e := testServer(t, func(c *config.Config) {
		c.Embeddings.URL = hs.URL + "/v1/embeddings"
		c.Embeddings.Model = "fake-embed-1"
		c.Embeddings.APIKey = "sk-test"
		c.Embeddings.BatchSize = 4
		c.Embeddings.RequestsPerSecond = 1000
	})
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	e.putSchema("acme", "main", admin, strings.Replace(semanticSchema, `"model": "hash"`, `"model": "fake-embed-1"`, 1))
	// The schema's re-embedding (of no Records yet) ends before the Parts
	// land, so only their commit's job embeds them.
	e.waitReembedded("acme", "main", admin, "Part")
	rev := seedParts(e, "acme", admin)
	require.NotEmpty(t, rev)
	fake.mu.Lock()
	require.Equal(t, []int{4, 2}, fake.batches, "batches of embeddings.batch_size after one 429")
	require.Equal(t, "Bearer sk-test", fake.auth[0])
	require.Equal(t, "fake-embed-1", fake.model[0])
	fake.mu.Unlock()
	require.EqualValues(t, 3, fake.calls.Load())
	// The query is embedded by the same model.
	a := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {"copper wire"}, "limit": {"1"}})
	require.Equal(t, []string{"P-4"}, a.keys())
}

// TestSemanticIsolation: two Domains hold identical Records under
// different keys, with identical vectors; 16 concurrent clients search
// each their own Domain by text, vector and hybrid and never see the
// other's Records; a token never reaches the other Domain's vectors, not
// through its URL, nor through a Revision id of it; a writer limited to
// agent/* stores no vectors on main.
func TestSemanticIsolation(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	tokens := map[string]string{}
	for _, d := range []string{"alpha", "beta"} {
		e.createDomain(d)
		tokens[d] = e.token(d, "admin", "admin")
		e.putSchema(d, "main", tokens[d], semanticSchema)
	}
	revs := map[string]string{}
	for _, d := range []string{"alpha", "beta"} {
		prefix := strings.ToUpper(d[:1]) + "-"
		changes := []map[string]any{}
		for i, p := range parts {
			changes = append(changes,
				map[string]any{"op": "put", "kind": "Part", "key": prefix + p.key, "values": map[string]any{"name": p.name, "description": p.desc, "country": p.country}},
				map[string]any{"op": "put", "kind": "Note", "key": prefix + "N" + p.key, "values": map[string]any{"text": p.name}, "vector": []float64{float64(i), 1, 0.5}})
		}
		revs[d] = e.commit(d, "main", tokens[d], map[string]any{"message": "seed", "author": "t", "changes": changes})
		e.waitVectors(d, 2*len(parts))
	}
	queries := []url.Values{
		{"mode": {"semantic"}, "q": {"hex bolt"}, "limit": {"50"}},
		{"mode": {"semantic"}, "vector": {"1,1,0.5"}, "limit": {"50"}},
		{"mode": {"semantic"}, "vector": {"2,1,0.5"}, "kind": {"Note"}, "limit": {"3"}},
		{"mode": {"hybrid"}, "q": {"steel"}, "limit": {"50"}},
		{"mode": {"semantic"}, "q": {"rubber"}, "kind": {"Part"}, "attribute": {"country"}, "value": {"IT"}},
	}
	var wg sync.WaitGroup
	var searched, checked, leaked atomic.Int64
	errs := make(chan string, 16)
	for c := range 16 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			d := []string{"alpha", "beta"}[c%2]
			prefix := strings.ToUpper(d[:1]) + "-"
			for i := range 15 {
				q := queries[(c+i)%len(queries)]
				r := e.doNoFail("GET", branchPath(d, "main")+"/search?"+q.Encode(), tokens[d], nil)
				if r.Status != http.StatusOK {
					errs <- fmt.Sprintf("%s %v: %d %s", d, q, r.Status, r.Body)
					return
				}
				var a searchAnswer
				if err := json.Unmarshal(r.Body, &a); err != nil || len(a.Results) == 0 {
					errs <- fmt.Sprintf("%s %v: no results (%v) %s", d, q, err, r.Body)
					return
				}
				searched.Add(1)
				for _, x := range a.Results {
					checked.Add(1)
					if !strings.HasPrefix(x.Key, prefix) {
						leaked.Add(1)
					}
				}
			}
		}()
	}
	wg.Wait()
	close(errs)
	for msg := range errs {
		t.Error(msg)
	}
	require.EqualValues(t, 16*15, searched.Load())
	require.Positive(t, checked.Load())
	require.Zero(t, leaked.Load(), "results of the other Domain")

	// Hostile: the other Domain's URL, its Revision, its branch id.
	r := e.do("GET", branchPath("beta", "main")+"/search?mode=semantic&q=hex", tokens["alpha"], nil)
	require.Equal(t, http.StatusNotFound, r.Status, "another Domain does not exist for the token: %s", r.Body)
	r = e.do("GET", branchPath("alpha", "main")+"/search?mode=semantic&q=hex&at="+revs["beta"], tokens["alpha"], nil)
	require.Equal(t, http.StatusNotFound, r.Status, "%s", r.Body)
	// A writer of agent/* stores no vector on main.
	w := e.token("alpha", "scout", "writer", "agent/*")
	before := e.vectorCount("alpha")
	r = e.do("POST", branchPath("alpha", "main")+"/commits", w, map[string]any{"message": "m", "author": "t", "changes": []map[string]any{
		{"op": "put", "kind": "Note", "key": "A-evil", "values": map[string]any{"text": "x"}, "vector": []float64{1, 1, 1}}}})
	require.Equal(t, http.StatusForbidden, r.Status, "%s", r.Body)
	require.Equal(t, before, e.vectorCount("alpha"))
}

func TestResolveSemanticReason(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	e.putSchema("acme", "main", admin, semanticSchema)
	seedParts(e, "acme", admin)
	var c struct {
		Candidates []struct {
			Key    string  `json:"key"`
			Score  float64 `json:"score"`
			Reason string  `json:"reason"`
		} `json:"candidates"`
	}
	p := branchPath("acme", "main") + "/resolve?"
	// Only P-3's description (embedded, not searched) holds these words.
	q := url.Values{"mention": {"deep groove for skateboards"}, "kind": {"Part"}}
	e.must(http.StatusOK, "GET", p+q.Encode(), admin, nil).Decode(t, &c)
	for _, x := range c.Candidates {
		require.NotEqual(t, "semantic", x.Reason, "only when asked")
	}
	q.Set("semantic", "true")
	e.must(http.StatusOK, "GET", p+q.Encode(), admin, nil).Decode(t, &c)
	var found bool
	for _, x := range c.Candidates {
		if x.Reason == "semantic" {
			require.GreaterOrEqual(t, x.Score, 0.5)
			found = found || x.Key == "P-3"
		}
	}
	require.True(t, found, "%+v", c.Candidates)
	// A Kind without embedding adds nothing; a bad flag is 400.
	q.Set("kind", "Supplier")
	e.must(http.StatusOK, "GET", p+q.Encode(), admin, nil)
	q.Set("semantic", "yes")
	e.must(http.StatusBadRequest, "GET", p+q.Encode(), admin, nil)
}

// A merge gives the Records of embedded Kinds it changes on the target
// their vectors as a commit does: a Proposal merged at once, one merged by
// the merge job, a direct merge, each as a fast-forward and over a target
// that moved. A Record taken whole from the source keeps the source's
// vector (a client vector included); one whose values the merge combined
// from both sides is embedded anew.
func TestMergesEmbed(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Merge.JobThreshold = 8 })
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	e.putSchema("acme", "main", admin, semanticSchema)
	seedParts(e, "acme", admin)
	patch := func(key string, values map[string]any) map[string]any {
		return map[string]any{"op": "patch", "key": key, "values": values}
	}
	for i, c := range []struct {
		name   string
		extra  int  // more Parts the source writes (past merge.job_threshold: the job merges)
		direct bool // POST .../merges, no Proposal
		moved  bool // the target changed since the fork: not a fast-forward
	}{
		{"proposal", 0, false, false},
		{"proposal over a moved target", 0, false, true},
		{"proposal merged by the job", 10, false, false},
		{"proposal merged by the job over a moved target", 10, false, true},
		{"direct merge", 0, true, false},
		{"direct merge over a moved target", 0, true, true},
	} {
		branch := fmt.Sprintf("agent/m%d", i)
		word := []string{"titanium", "graphite", "ceramic", "bamboo", "quartz", "cobalt"}[i]
		note := fmt.Sprintf("N-%d", i)
		noteVec := []float64{0, 0, 0}
		noteVec[i%3] = 1
		noteVec[(i+1)%3] = 0.01 * float64(i+1)
		e.createBranchReq("acme", admin, map[string]any{"name": branch, "from": "main"})
		changes := []map[string]any{
			// Taken whole by the merge.
			patch("P-6", map[string]any{"name": word + " plate", "description": word + " plate brushed " + word}),
			// Combined with the target's change of country (when the target moved).
			patch("P-4", map[string]any{"description": word + " wire insulated " + word}),
			{"op": "put", "kind": "Note", "key": note, "values": map[string]any{"text": word}, "vector": noteVec},
		}
		for j := range c.extra {
			changes = append(changes, put("Part", fmt.Sprintf("P-%d-%d", i, j), map[string]any{"name": fmt.Sprintf("%s extra %d", word, j)}))
		}
		e.commit("acme", branch, admin, commitBody("source", changes...))
		// The source's vectors land first, so that the merge has them to
		// carry (otherwise the target embeds its own, and the count of
		// carried vectors below depends on which job ran first).
		e.waitFor(c.name+": the source's vectors", func() bool {
			var n int
			require.NoError(t, e.Store.Pool.QueryRow(context.Background(), `SELECT count(*)
				  FROM mat_vectors v JOIN refs r ON r.domain_id = v.domain_id AND r.id = v.branch_id
				  JOIN domains d ON d.id = v.domain_id
				 WHERE d.name = 'acme' AND r.name = $1
				   AND v.seq = (SELECT max(seq) FROM revisions x WHERE x.domain_id = v.domain_id AND x.branch_id = v.branch_id)`,
				branch).Scan(&n))
			return n == 3+c.extra
		})
		if c.moved {
			e.commit("acme", "main", admin, commitBody("target", patch("P-4", map[string]any{"name": word + " coil"})))
		}
		var fastForward bool
		if c.direct {
			var res struct {
				FastForward bool `json:"fast_forward"`
			}
			e.must(http.StatusCreated, "POST", branchPath("acme", "main")+"/merges", admin, map[string]any{"from": branch}).Decode(t, &res)
			fastForward = res.FastForward
		} else {
			var p struct {
				proposalView
				FastForward bool `json:"fast_forward"`
			}
			e.must(http.StatusCreated, "POST", proposalsPath("acme"), admin, map[string]any{"title": c.name, "source": branch, "target": "main"}).Decode(t, &p)
			fastForward = p.FastForward
			status := http.StatusCreated
			if c.extra > 0 {
				status = http.StatusAccepted
			}
			e.must(status, "POST", proposalsPath("acme")+"/"+p.ID+"/merge", admin, nil)
			e.waitFor("the merge of "+c.name, func() bool {
				var now proposalView
				e.must(http.StatusOK, "GET", proposalsPath("acme")+"/"+p.ID, admin, nil).Decode(t, &now)
				return now.State == "merged"
			})
		}
		require.Equal(t, !c.moved, fastForward, c.name)

		// Searchable by meaning on the target once the embedding jobs ran.
		p4 := e.must(http.StatusOK, "GET", branchPath("acme", "main")+"/records/P-4", admin, nil).JSON(t)["values"].(map[string]any)
		require.Equal(t, word+" wire insulated "+word, p4["description"], c.name)
		if c.moved {
			require.Equal(t, word+" coil", p4["name"], "%s: the target's name and the source's description", c.name)
		}
		for _, w := range []struct{ key, q string }{
			{"P-6", word + " plate brushed " + word},
			{"P-4", p4["name"].(string) + " " + p4["description"].(string)},
		} {
			q := url.Values{"mode": {"semantic"}, "q": {w.q}, "kind": {"Part"}, "limit": {"1"}}
			e.waitFor(c.name+": "+w.key+" found by its merged text", func() bool {
				a := e.search("acme", "main", admin, q)
				return len(a.Results) == 1 && a.Results[0].Key == w.key && a.Results[0].Score > 0.9
			})
		}
		for j := range c.extra {
			key := fmt.Sprintf("P-%d-%d", i, j)
			e.waitFor(c.name+": "+key, func() bool {
				a := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "q": {fmt.Sprintf("%s extra %d", word, j)}, "kind": {"Part"}, "limit": {"1"}})
				return len(a.Results) == 1 && a.Results[0].Key == key
			})
		}
		// The client vector came with the merge: found at once.
		a := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "vector": {fmt.Sprintf("%g,%g,%g", noteVec[0], noteVec[1], noteVec[2])}, "kind": {"Note"}, "limit": {"1"}})
		require.Equal(t, []string{note}, a.keys(), c.name)
		require.InDelta(t, 1, a.Results[0].Score, 1e-4, c.name)
		// Each merged version got exactly one vector: the ones taken whole
		// share the source's, the combined one its own.
		var merged, carried int
		require.NoError(t, e.Store.Pool.QueryRow(context.Background(), `SELECT count(*),
			count(*) FILTER (WHERE EXISTS (SELECT FROM mat_vectors s WHERE s.domain_id = v.domain_id AND s.key = v.key
			                               AND s.spec = v.spec AND s.branch_id <> v.branch_id AND s.embedding = v.embedding))
			  FROM mat_vectors v JOIN refs r ON r.domain_id = v.domain_id AND r.id = v.branch_id
			  JOIN domains d ON d.id = v.domain_id
			 WHERE d.name = 'acme' AND r.name = 'main' AND v.seq = (SELECT max(seq) FROM revisions x WHERE x.domain_id = v.domain_id AND x.branch_id = v.branch_id)`).
			Scan(&merged, &carried))
		require.Equal(t, 3+c.extra, merged, "%s: P-6, P-4, the Note and the extra Parts", c.name)
		if c.moved {
			require.Equal(t, 2+c.extra, carried, "%s: all but the combined P-4 carried over", c.name)
		} else {
			require.Equal(t, 3+c.extra, carried, "%s: a fast-forward carries every vector", c.name)
		}
	}
}

// An answer that reads vectors is never served from the response cache:
// vectors land after the commit without moving the head.
func TestSemanticAnswersNotCachedPastVectors(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.createDomain("acme")
	admin := e.token("acme", "admin", "admin")
	e.putSchema("acme", "main", admin, semanticSchema)
	e.commit("acme", "main", admin, commitBody("notes",
		map[string]any{"op": "put", "kind": "Note", "key": "N-1", "values": map[string]any{"text": "one"}, "vector": []float64{1, 0, 0}},
		map[string]any{"op": "put", "kind": "Note", "key": "N-2", "values": map[string]any{"text": "two"}}))
	for _, path := range []string{
		"/search?" + url.Values{"mode": {"semantic"}, "vector": {"0,1,0"}, "kind": {"Note"}}.Encode(),
		"/resolve?" + url.Values{"mention": {"two"}, "semantic": {"true"}}.Encode(),
	} {
		first := e.must(http.StatusOK, "GET", branchPath("acme", "main")+path, admin, nil)
		require.Empty(t, first.Header.Get("ETag"), path)
	}
	a := e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "vector": {"0,1,0"}, "kind": {"Note"}})
	require.Equal(t, []string{"N-1"}, a.keys())
	// N-2's vector lands (as a job would write it); the head does not move.
	_, err := e.Store.Pool.Exec(context.Background(), `INSERT INTO mat_vectors (domain_id, key, seq, spec, branch_id, kind, embedding)
		SELECT domain_id, 'N-2', seq, spec, branch_id, kind, '{0,1,0}' FROM mat_vectors WHERE key = 'N-1'`)
	require.NoError(t, err)
	a = e.search("acme", "main", admin, url.Values{"mode": {"semantic"}, "vector": {"0,1,0"}, "kind": {"Note"}})
	require.Equal(t, []string{"N-2", "N-1"}, a.keys())
	// Text search answers are still cached and tagged.
	require.NotEmpty(t, e.must(http.StatusOK, "GET", branchPath("acme", "main")+"/search?q=two", admin, nil).Header.Get("ETag"))
}
