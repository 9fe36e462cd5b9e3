package keeper

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/store"
)

// branchParam reads and validates the {branch} path parameter.
func branchParam(r *http.Request) (string, error) {
	b, err := pathParam(r, "branch")
	if err != nil {
		return "", err
	}
	if err := checkBranch("branch", b); err != nil {
		return "", err
	}
	return b, nil
}

type branchPage struct {
	Branches []store.BranchInfo `json:"branches"`
	Next     string             `json:"next,omitempty"`
}

// listBranches: GET /v1/domains/{domain}/branches?limit=&after=NAME&own=,
// by name, with each branch's own-row counts (capped) unless own=false.
func (s *Server) listBranches(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "limit", "after", "own"); err != nil {
		return err
	}
	own := true
	switch v := r.URL.Query().Get("own"); v {
	case "", "true":
	case "false":
		own = false
	default:
		return badRequest("own", "invalid", "own must be true or false.")
	}
	limit, err := queryLimit(r, s.cfg.Read.Page.DefaultLimit, s.cfg.Read.Page.MaxLimit)
	if err != nil {
		return err
	}
	after, err := queryString(r, "after")
	if err != nil {
		return err
	}
	bs, err := s.store.ListBranches(r.Context(), domainFrom(r.Context()).ID, after, limit+1, own)
	if err != nil {
		return err
	}
	var page branchPage
	page.Branches, page.Next = keysetPage(bs, limit, func(b store.BranchInfo) string { return b.Name })
	writeJSON(w, http.StatusOK, page)
	return nil
}

// showBranch: GET /v1/domains/{domain}/branches/{branch}: state, progress
// of its background job, own-row counts.
func (s *Server) showBranch(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	name, err := branchParam(r)
	if err != nil {
		return err
	}
	b, err := s.store.GetBranch(r.Context(), domainFrom(r.Context()).ID, name)
	if errors.Is(err, store.ErrNotFound) {
		return errBranchNotFound(name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, b)
	return nil
}

// maxBranchBody bounds the body of a branch creation.
const maxBranchBody = 4096

// createBranch: POST /v1/domains/{domain}/branches {name, from, mode, at?}
// → 201 {name, mode, base, fork_revision, head, state}. A writer may
// create branches its patterns match; any token of the Domain may read the
// base.
func (s *Server) createBranch(w http.ResponseWriter, r *http.Request) error {
	p := principalFrom(r.Context())
	if !p.bootstrap && p.token.Role == RoleReader {
		return errForbidden("A reader token may not create branches.")
	}
	if err := checkQuery(r); err != nil {
		return err
	}
	var req store.CreateBranchRequest
	if err := s.decodeBounded(w, r, maxBranchBody, "A branch request", &req); err != nil {
		return err
	}
	if req.Name != "" && store.ValidBranchName(req.Name) && !p.canWrite(req.Name) {
		return errForbidden("This token may not create the branch " + quote(req.Name) + " (its branches: " + strings.Join(p.token.Branches, ", ") + ").")
	}
	req.MaxBranches, req.MaxCopies = s.cfg.Quota.Branches, s.cfg.Quota.CopiesInFlight
	b, err := s.store.CreateBranch(r.Context(), domainFrom(r.Context()).ID, req, s.branchJobs)
	if err != nil {
		return err
	}
	w.Header().Set("Location", "/v1/domains/"+url.PathEscape(domainFrom(r.Context()).Name)+"/branches/"+url.PathEscape(b.Name))
	writeJSON(w, http.StatusCreated, b)
	return nil
}

// deleteBranch: DELETE /v1/domains/{domain}/branches/{branch} → 202: the
// branch is gone for reads and commits at once; a job removes its rows.
func (s *Server) deleteBranch(w http.ResponseWriter, r *http.Request) error {
	name, err := branchParam(r)
	if err != nil {
		return err
	}
	p := principalFrom(r.Context())
	if !p.bootstrap && p.token.Role == RoleReader {
		return errForbidden("A reader token may not delete branches.")
	}
	if !p.canWrite(name) {
		return errForbidden("This token may not delete the branch " + quote(name) + " (its branches: " + strings.Join(p.token.Branches, ", ") + ").")
	}
	if err := checkQuery(r); err != nil {
		return err
	}
	err = s.store.DeleteBranch(r.Context(), domainFrom(r.Context()).ID, name, s.branchJobs)
	if errors.Is(err, store.ErrNotFound) {
		return errBranchNotFound(name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusAccepted, map[string]string{"name": name, "state": store.StateDeleting})
	return nil
}

func errBranchNotFound(name string) error {
	return newProblem(http.StatusNotFound, "not-found", "Not found", "No branch named "+quote(name)+".")
}

type schemaView struct {
	Document json.RawMessage `json:"document"`
	Compiled json.RawMessage `json:"compiled"`
	Revision *string         `json:"revision"`
	// VectorSearch is how semantic search finds vectors here: exact, or
	// hnsw where pgvector is installed.
	VectorSearch string `json:"vector_search"`
}

// getSchema: GET .../branches/{branch}/schema → {document, compiled, revision}.
func (s *Server) getSchema(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	name, err := branchParam(r)
	if err != nil {
		return err
	}
	var out *schemaView
	err = s.store.Read(r.Context(), domainFrom(r.Context()).ID, `SELECT s.document, s.compiled,
			(SELECT v.id FROM revisions v WHERE v.domain_id = lb_domain() AND v.seq = s.seq AND s.seq > 0),
			lb_vector_search()
		FROM refs r JOIN schemas s ON s.domain_id = r.domain_id AND s.branch_id = r.id
		WHERE r.domain_id = lb_domain() AND r.name = $1 AND r.state <> 'deleting'`, []any{name},
		func(rows pgx.Rows) error {
			for rows.Next() {
				var v schemaView
				if err := rows.Scan(&v.Document, &v.Compiled, &v.Revision, &v.VectorSearch); err != nil {
					return fmt.Errorf("scan schema: %w", err)
				}
				out = &v
			}
			return nil
		})
	if err != nil {
		return fmt.Errorf("read schema: %w", err)
	}
	if out == nil {
		return errBranchNotFound(name)
	}
	writeJSON(w, http.StatusOK, out)
	return nil
}

// putSchema: PUT .../branches/{branch}/schema (admin). The body is the
// schema document; author and message come from the query (author,
// message) or the headers Lorebase-Author and Lorebase-Message; If-Match
// carries the expected head.
func (s *Server) putSchema(w http.ResponseWriter, r *http.Request) error {
	name, err := branchParam(r)
	if err != nil {
		return err
	}
	p := principalFrom(r.Context())
	if !p.isAdmin() {
		return errForbidden("Only an admin token may change the schema.")
	}
	if err := checkQuery(r, "author", "message"); err != nil {
		return err
	}
	author, err := textFrom(r, "author", "Lorebase-Author", 200)
	if err != nil {
		return err
	}
	if author == "" {
		author = p.name()
	}
	message, err := textFrom(r, "message", "Lorebase-Message", 4000)
	if err != nil {
		return err
	}
	if message == "" {
		message = "Update schema"
	}
	expected, err := ifMatch(r)
	if err != nil {
		return err
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if err := checkJSON(body); err != nil {
		return err
	}
	res, err := s.commits.PutSchema(r.Context(), domainFrom(r.Context()).ID, name, &commit.SchemaRequest{
		Document: body, Author: author, Message: message, ExpectedHead: expected,
	})
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]string{"revision": res.Revision})
	return nil
}

// textFrom reads a free-text value from a query parameter or, failing
// that, a header.
func textFrom(r *http.Request, param, header string, max int) (string, error) {
	if v := r.URL.Query().Get(param); v != "" {
		return v, checkText(param, v, max)
	}
	v := r.Header.Get(header)
	return v, checkText(header, v, max)
}

// ifMatch reads the If-Match header as an expected head Revision id
// (quotes, as for an entity tag, are allowed).
func ifMatch(r *http.Request) (*string, error) {
	v := strings.TrimSpace(r.Header.Get("If-Match"))
	if v == "" {
		return nil, nil
	}
	v = strings.TrimPrefix(v, "W/")
	if len(v) >= 2 && v[0] == '"' && v[len(v)-1] == '"' {
		v = v[1 : len(v)-1]
	}
	if v == "" || !printableASCII(v) || len(v) > maxParamBytes {
		return nil, badRequest("If-Match", "invalid_header", "If-Match must hold the expected head Revision id.")
	}
	return &v, nil
}

func printableASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 0x20 || s[i] > 0x7e {
			return false
		}
	}
	return true
}

// maxIdempotencyKey bounds the Idempotency-Key header.
const maxIdempotencyKey = 200

type commitResponse struct {
	Revision string   `json:"revision"`
	Parents  []string `json:"parents"`
	Changes  int      `json:"changes"`
}

// postCommit: POST .../branches/{branch}/commits. A replay of an
// Idempotency-Key answers the first answer again with Idempotent-Replayed.
func (s *Server) postCommit(w http.ResponseWriter, r *http.Request) error {
	name, err := branchParam(r)
	if err != nil {
		return err
	}
	p := principalFrom(r.Context())
	if !p.canWrite(name) {
		if p.token.Role == RoleReader {
			return errForbidden("A reader token may not commit.")
		}
		return errForbidden("This token may not write to the branch " + quote(name) + " (its branches: " + strings.Join(p.token.Branches, ", ") + ").")
	}
	if err := checkQuery(r); err != nil {
		return err
	}
	idem := r.Header.Get("Idempotency-Key")
	if _, sent := r.Header["Idempotency-Key"]; sent && (idem == "" || len(idem) > maxIdempotencyKey || !printableASCII(idem)) {
		return badRequest("Idempotency-Key", "invalid_header",
			fmt.Sprintf("Idempotency-Key must be 1 to %d printable ASCII characters.", maxIdempotencyKey))
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var req commit.Request
	if err := decodeJSON(body, &req); err != nil {
		return err
	}
	if req.Author == "" {
		req.Author = p.name()
	}
	req.IdempotencyScope = p.scope()
	if trace, err := traceID(r); err != nil {
		return err
	} else if trace != "" {
		// The commit names its trace; so does each change with provenance
		// of its own, so lineage leads from every value to the trace.
		req.Provenance = withTrace(req.Provenance, trace)
		for i := range req.Changes {
			if len(req.Changes[i].Provenance) > 0 {
				req.Changes[i].Provenance = withTrace(req.Changes[i].Provenance, trace)
			}
		}
	}
	res, err := s.commits.Commit(r.Context(), domainFrom(r.Context()).ID, name, &req, idem)
	if err != nil {
		return err
	}
	if res.Replayed {
		w.Header().Set("Idempotent-Replayed", "true")
	}
	parents := res.Parents
	if parents == nil {
		parents = []string{}
	}
	writeJSON(w, http.StatusCreated, commitResponse{Revision: res.Revision, Parents: parents, Changes: res.Changes})
	return nil
}
