package keeper

import (
	"fmt"
	"math"
	"net/http"
	"strconv"
	"strings"

	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/schema"
)

// recordPath reads the branch and the key of a .../records/{key}/... path.
func recordPath(r *http.Request) (branch, key string, err error) {
	if branch, err = branchParam(r); err != nil {
		return "", "", err
	}
	if key, err = pathParam(r, "key"); err != nil {
		return "", "", err
	}
	if err = checkKey("key", key); err != nil {
		return "", "", err
	}
	return branch, key, nil
}

// queryInt reads an optional integer parameter within [min, max].
func queryInt(r *http.Request, name string, def, min, max int) (int, error) {
	s, err := queryString(r, name)
	if err != nil {
		return 0, err
	}
	if s == "" {
		return def, nil
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < min || n > max {
		return 0, badRequest(name, "invalid", name+" must be an integer from "+strconv.Itoa(min)+" to "+strconv.Itoa(max)+".")
	}
	return n, nil
}

// getLinks: GET .../records/{key}/links?direction=out|in|both&relation=R&at=REV.
func (s *Server) getLinks(w http.ResponseWriter, r *http.Request) error {
	branch, key, err := recordPath(r)
	if err != nil {
		return err
	}
	if err := checkQuery(r, "direction", "relation", "at"); err != nil {
		return err
	}
	var q reads.LinksQuery
	if q.Direction, err = queryString(r, "direction"); err != nil {
		return err
	}
	switch q.Direction {
	case "", "out", "in", "both":
	default:
		return badRequest("direction", "invalid", "direction must be out, in or both.")
	}
	if q.Relation, err = queryString(r, "relation"); err != nil {
		return err
	}
	if q.Relation != "" {
		if err := checkName("relation", q.Relation); err != nil {
			return err
		}
	}
	if q.At, err = queryString(r, "at"); err != nil {
		return err
	}
	out, err := s.reads.Links(r.Context(), domainFrom(r.Context()).ID, branch, key, q)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getNeighborhood: GET .../records/{key}/neighborhood?depth=2&limit=200.
func (s *Server) getNeighborhood(w http.ResponseWriter, r *http.Request) error {
	branch, key, err := recordPath(r)
	if err != nil {
		return err
	}
	if err := checkQuery(r, "depth", "limit"); err != nil {
		return err
	}
	depth, err := queryInt(r, "depth", 2, 1, s.cfg.Read.Neighborhood.MaxDepth)
	if err != nil {
		return err
	}
	limit, err := queryInt(r, "limit", 200, 1, s.cfg.Read.Neighborhood.MaxLimit)
	if err != nil {
		return err
	}
	out, err := s.reads.Neighborhood(r.Context(), domainFrom(r.Context()).ID, branch, key, depth, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getHistory: GET .../records/{key}/history?limit=20&before=REV.
func (s *Server) getHistory(w http.ResponseWriter, r *http.Request) error {
	branch, key, err := recordPath(r)
	if err != nil {
		return err
	}
	if err := checkQuery(r, "limit", "before"); err != nil {
		return err
	}
	limit, err := queryLimit(r, s.cfg.Read.History.DefaultLimit, s.cfg.Read.Page.MaxLimit)
	if err != nil {
		return err
	}
	before, err := queryString(r, "before")
	if err != nil {
		return err
	}
	out, err := s.reads.History(r.Context(), domainFrom(r.Context()).ID, branch, key, limit, before)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// getLineage: GET .../records/{key}/lineage.
func (s *Server) getLineage(w http.ResponseWriter, r *http.Request) error {
	branch, key, err := recordPath(r)
	if err != nil {
		return err
	}
	if err := checkQuery(r); err != nil {
		return err
	}
	out, err := s.reads.Lineage(r.Context(), domainFrom(r.Context()).ID, branch, key)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// search: GET .../branches/{branch}/search?q=..&kind=K&limit=20&at=REV
// &mode=text|semantic|hybrid, with vector=0.1,0.2,.. (semantic),
// attribute=A&value=V (semantic) and text_weight/semantic_weight (hybrid).
func (s *Server) search(w http.ResponseWriter, r *http.Request) error {
	branch, err := branchParam(r)
	if err != nil {
		return err
	}
	if err := checkQuery(r, "q", "kind", "limit", "at", "mode", "vector", "attribute", "value", "text_weight", "semantic_weight"); err != nil {
		return err
	}
	mode, err := queryString(r, "mode")
	if err != nil {
		return err
	}
	var sq reads.SemanticQuery
	if sq.Q, err = queryString(r, "q"); err != nil {
		return err
	}
	if sq.Kind, err = queryString(r, "kind"); err != nil {
		return err
	}
	if sq.Kind != "" {
		if err := checkName("kind", sq.Kind); err != nil {
			return err
		}
	}
	if sq.Limit, err = queryInt(r, "limit", 20, 1, s.cfg.Read.Page.MaxLimit); err != nil {
		return err
	}
	if sq.At, err = queryString(r, "at"); err != nil {
		return err
	}
	extra := []string{"vector", "attribute", "value", "text_weight", "semantic_weight"}
	switch mode {
	case "", reads.ModeText:
		for _, p := range extra {
			if r.URL.Query().Has(p) {
				return badRequest(p, "not_allowed", fmt.Sprintf("%s applies to mode=semantic or mode=hybrid, not to full-text search.", p))
			}
		}
		if sq.Q == "" {
			return badRequest("q", "required", "q is the text to search for: ?q=hex+bolt.")
		}
		out, err := s.reads.Search(r.Context(), domainFrom(r.Context()).ID, branch,
			reads.SearchQuery{Q: sq.Q, Kind: sq.Kind, Limit: sq.Limit, At: sq.At})
		if err != nil {
			return err
		}
		writeJSON(w, http.StatusOK, out)
		return nil
	case reads.ModeSemantic, reads.ModeHybrid:
	default:
		return badRequest("mode", "invalid_value", "mode is text (the default), semantic or hybrid.")
	}
	if sq.Attribute, err = queryString(r, "attribute"); err != nil {
		return err
	}
	if sq.Value, err = queryString(r, "value"); err != nil {
		return err
	}
	if sq.TextWeight, err = queryInt(r, "text_weight", -1, 0, 100); err != nil {
		return err
	}
	if sq.SemanticWeight, err = queryInt(r, "semantic_weight", -1, 0, 100); err != nil {
		return err
	}
	if r.URL.Query().Has("vector") {
		raw, err := queryString(r, "vector")
		if err != nil {
			return err
		}
		if sq.Vector, err = parseVectorParam(raw); err != nil {
			return err
		}
	}
	if mode == reads.ModeSemantic && sq.Q == "" && sq.Vector == nil {
		return badRequest("q", "required", "mode=semantic needs q (text, embedded by the kind's embedder) or vector (comma-separated numbers).")
	}
	var out *reads.SearchResults
	if mode == reads.ModeSemantic {
		out, err = s.reads.Semantic(r.Context(), domainFrom(r.Context()).ID, branch, sq)
	} else {
		out, err = s.reads.Hybrid(r.Context(), domainFrom(r.Context()).ID, branch, sq)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// parseVectorParam reads vector=: comma-separated finite numbers, at most
// schema.MaxDims of them.
func parseVectorParam(raw string) ([]float32, error) {
	parts := strings.Split(raw, ",")
	if raw == "" || len(parts) > schema.MaxDims {
		return nil, badRequest("vector", "invalid_vector", fmt.Sprintf("vector is 1 to %d comma-separated numbers: ?vector=0.12,-0.5,0.33.", schema.MaxDims))
	}
	out := make([]float32, len(parts))
	for i, p := range parts {
		f, err := strconv.ParseFloat(strings.TrimSpace(p), 32)
		if err != nil || math.IsInf(f, 0) || math.IsNaN(f) {
			return nil, badRequest("vector", "invalid_vector", fmt.Sprintf("entry %d of vector (%.40q) is not a finite number.", i, p))
		}
		out[i] = float32(f)
	}
	return out, nil
}

// resolve: GET .../branches/{branch}/resolve?mention=..&kind=K&limit=10.
func (s *Server) resolve(w http.ResponseWriter, r *http.Request) error {
	branch, err := branchParam(r)
	if err != nil {
		return err
	}
	if err := checkQuery(r, "mention", "kind", "limit", "semantic"); err != nil {
		return err
	}
	mention, err := queryString(r, "mention")
	if err != nil {
		return err
	}
	if mention == "" {
		return badRequest("mention", "required", "mention is the name or key to resolve: ?mention=Acme.")
	}
	kind, err := queryString(r, "kind")
	if err != nil {
		return err
	}
	if kind != "" {
		if err := checkName("kind", kind); err != nil {
			return err
		}
	}
	limit, err := queryInt(r, "limit", 10, 1, 100)
	if err != nil {
		return err
	}
	sem, err := queryString(r, "semantic")
	if err != nil {
		return err
	}
	if sem != "" && sem != "true" && sem != "false" {
		return badRequest("semantic", "invalid_value", "semantic is true or false.")
	}
	out, err := s.reads.ResolveWith(r.Context(), domainFrom(r.Context()).ID, branch, mention, kind, limit, sem == "true")
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}
