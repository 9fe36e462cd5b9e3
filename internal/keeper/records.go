package keeper

import (
	"net/http"

	"github.com/lorebase/lorebase/reads"
)

// getRecord: GET .../branches/{branch}/records/{key}?at=REV.
func (s *Server) getRecord(w http.ResponseWriter, r *http.Request) error {
	branch, err := branchParam(r)
	if err != nil {
		return err
	}
	key, err := pathParam(r, "key")
	if err != nil {
		return err
	}
	if err := checkKey("key", key); err != nil {
		return err
	}
	if err := checkQuery(r, "at"); err != nil {
		return err
	}
	at, err := queryString(r, "at")
	if err != nil {
		return err
	}
	rec, err := s.reads.Get(r.Context(), domainFrom(r.Context()).ID, branch, key, at)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rec)
	return nil
}

// listRecords: GET .../branches/{branch}/records?kind=K&limit=&after=KEY
// [&attribute=A&value=V][&at=REV][&count=true], a keyset page (with
// count=true, the number of Records of the listing, capped).
func (s *Server) listRecords(w http.ResponseWriter, r *http.Request) error {
	branch, err := branchParam(r)
	if err != nil {
		return err
	}
	if err := checkQuery(r, "kind", "limit", "after", "attribute", "value", "at", "count"); err != nil {
		return err
	}
	q := reads.PageQuery{}
	switch v := r.URL.Query().Get("count"); v {
	case "", "false":
	case "true":
		q.Count = true
	default:
		return badRequest("count", "invalid", "count must be true or false.")
	}
	if q.Limit, err = queryLimit(r, s.cfg.Read.Page.DefaultLimit, s.cfg.Read.Page.MaxLimit); err != nil {
		return err
	}
	if q.Kind, err = queryString(r, "kind"); err != nil {
		return err
	}
	if q.Kind != "" {
		if err := checkName("kind", q.Kind); err != nil {
			return err
		}
	}
	if q.After, err = queryString(r, "after"); err != nil {
		return err
	}
	if q.Attribute, err = queryString(r, "attribute"); err != nil {
		return err
	}
	if q.Attribute != "" {
		if err := checkName("attribute", q.Attribute); err != nil {
			return err
		}
	}
	_, hasValue := r.URL.Query()["value"]
	if q.Value, err = queryString(r, "value"); err != nil {
		return err
	}
	switch {
	case q.Attribute != "" && !hasValue:
		return badRequest("value", "required", "attribute needs value: ?attribute=A&value=V.")
	case q.Attribute == "" && hasValue:
		return badRequest("attribute", "required", "value needs attribute: ?attribute=A&value=V.")
	case q.Attribute != "" && q.Kind == "":
		return badRequest("kind", "required", "A query by attribute needs kind: ?kind=K&attribute=A&value=V.")
	case q.Attribute != "" && q.Count:
		return badRequest("count", "unsupported", "count is for listings by Kind, not queries by attribute.")
	}
	if q.At, err = queryString(r, "at"); err != nil {
		return err
	}
	page, err := s.reads.Page(r.Context(), domainFrom(r.Context()).ID, branch, q)
	if err != nil {
		return err
	}
	if page.Records == nil {
		page.Records = []reads.Record{}
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// listRevisions: GET .../branches/{branch}/revisions?limit=&before=REV,
// newest first.
func (s *Server) listRevisions(w http.ResponseWriter, r *http.Request) error {
	branch, err := branchParam(r)
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
	page, err := s.reads.Revisions(r.Context(), domainFrom(r.Context()).ID, branch, limit, before)
	if err != nil {
		return err
	}
	if page.Revisions == nil {
		page.Revisions = []reads.RevisionSummary{}
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// getRevision: GET /v1/domains/{domain}/revisions/{id}?limit=&after=, the
// Revision with a keyset page of its changes.
func (s *Server) getRevision(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "id")
	if err != nil {
		return err
	}
	if err := checkText("id", id, maxParamBytes); err != nil {
		return err
	}
	if err := checkQuery(r, "limit", "after"); err != nil {
		return err
	}
	limit, err := queryLimit(r, s.cfg.Read.Page.DefaultLimit, s.cfg.Read.Page.MaxLimit)
	if err != nil {
		return err
	}
	after, err := queryString(r, "after")
	if err != nil {
		return err
	}
	rev, err := s.reads.Revision(r.Context(), domainFrom(r.Context()).ID, id, limit, after)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, rev)
	return nil
}
