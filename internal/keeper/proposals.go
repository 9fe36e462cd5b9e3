package keeper

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"

	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/internal/lberr"
)

// Limits of the merge routes.
const (
	maxProposalBody   = 32 << 10
	maxDiffLimit      = 1000
	defaultDiffLimit  = 100
	maxResolutionBody = 1 << 20
)

// conflictProblem is the 409 of a merge with unresolved conflicts.
type conflictProblem struct {
	Problem
	Conflicts []*merge.Conflict `json:"conflicts"`
}

// mergeError answers a merge with unresolved conflicts: the problem
// problemFor makes of its kind (409), with the conflicts. Other errors go
// on to writeError (a stale fingerprint is a conflict kind too).
func mergeError(w http.ResponseWriter, err error) error {
	var ce *merge.ConflictsError
	if !errors.As(err, &ce) {
		return err
	}
	p, _ := problemFor(err)
	p.Type = problemType("merge-conflicts")
	p.Title = "Unresolved conflicts"
	p.Detail = fmt.Sprintf("The merge has %d conflicts without a resolution; resolve each (or send a default) and retry.", len(ce.Conflicts))
	if p.Errors == nil {
		p.Errors = []lberr.Problem{}
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(conflictProblem{Problem: p, Conflicts: ce.Conflicts})
	return nil
}

// mustWrite answers 403 unless the principal may write to branch.
func mustWrite(p *principal, branch, what string) error {
	if p.canWrite(branch) {
		return nil
	}
	if !p.bootstrap && p.token.Role == RoleReader {
		return errForbidden("A reader token may not " + what + ".")
	}
	return errForbidden("This token may not " + what + ": it needs write access to the branch " + quote(branch) +
		" (its branches: " + strings.Join(p.token.Branches, ", ") + ").")
}

// proposalParam reads the {proposal} path parameter: a missing or
// malformed id answers 404 like a Proposal of another Domain.
func proposalParam(r *http.Request) (string, error) {
	id, err := pathParam(r, "proposal")
	if err != nil {
		return "", err
	}
	if !merge.ValidProposalID(id) {
		return "", newProblem(http.StatusNotFound, "not-found", "Not found", "No Proposal "+quote(id)+".")
	}
	return id, nil
}

// proposalRef is the Proposal the {proposal} path parameter names, in the
// request's Domain, with its source and target branches.
type proposalRef struct {
	domain         int32
	id             string
	source, target string
}

// proposalOf reads the {proposal} parameter and the Proposal's branches
// (404 for a malformed id or a Proposal of another Domain).
func (s *Server) proposalOf(r *http.Request) (proposalRef, error) {
	id, err := proposalParam(r)
	if err != nil {
		return proposalRef{}, err
	}
	ref := proposalRef{domain: domainFrom(r.Context()).ID, id: id}
	ref.source, ref.target, err = s.merges.Branches(r.Context(), ref.domain, id)
	return ref, err
}

// openProposal: POST /v1/domains/{d}/proposals {title, description?,
// source, target} → 201. Needs write access to the source.
func (s *Server) openProposal(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	var req merge.OpenRequest
	if err := s.decodeBounded(w, r, maxProposalBody, "A Proposal request", &req); err != nil {
		return err
	}
	if err := merge.CheckOpen(&req); err != nil {
		return err
	}
	p := principalFrom(r.Context())
	if err := mustWrite(p, req.Source, "propose from this branch"); err != nil {
		return err
	}
	prop, err := s.merges.Open(r.Context(), domainFrom(r.Context()).ID, &req, p.name())
	if err != nil {
		return mergeError(w, err)
	}
	w.Header().Set("Location", "/v1/domains/"+url.PathEscape(domainFrom(r.Context()).Name)+"/proposals/"+prop.ID)
	writeJSON(w, http.StatusCreated, prop)
	return nil
}

type proposalPage struct {
	Proposals []*merge.Proposal `json:"proposals"`
	Next      string            `json:"next,omitempty"`
}

// listProposals: GET /v1/domains/{d}/proposals?state=&limit=&after=.
func (s *Server) listProposals(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "state", "limit", "after"); err != nil {
		return err
	}
	state := r.URL.Query().Get("state")
	switch state {
	case "", merge.StateOpen, merge.StateMerged, merge.StateClosed, merge.StateMerging:
	default:
		return badRequest("state", "invalid_state", "state must be open, merging, merged or closed; got "+quote(state)+".")
	}
	limit, err := queryLimit(r, s.cfg.Read.Page.DefaultLimit, s.cfg.Read.Page.MaxLimit)
	if err != nil {
		return err
	}
	after, err := queryString(r, "after")
	if err != nil {
		return err
	}
	ps, err := s.merges.List(r.Context(), domainFrom(r.Context()).ID, state, after, limit+1)
	if err != nil {
		return err
	}
	var page proposalPage
	page.Proposals, page.Next = keysetPage(ps, limit, func(p *merge.Proposal) string { return p.ID })
	writeJSON(w, http.StatusOK, page)
	return nil
}

// showProposal: GET .../proposals/{id}: summary, conflict counts,
// mergeable and the heads they were computed at (recomputed when stale).
func (s *Server) showProposal(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	id, err := proposalParam(r)
	if err != nil {
		return err
	}
	p, _, err := s.merges.Show(r.Context(), domainFrom(r.Context()).ID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, p)
	return nil
}

// proposalDiff: GET .../proposals/{id}/diff?limit=&after=.
func (s *Server) proposalDiff(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "limit", "after"); err != nil {
		return err
	}
	id, err := proposalParam(r)
	if err != nil {
		return err
	}
	limit, err := queryLimit(r, defaultDiffLimit, maxDiffLimit)
	if err != nil {
		return err
	}
	after, err := queryString(r, "after")
	if err != nil {
		return err
	}
	d := domainFrom(r.Context()).ID
	src, tgt, err := s.merges.Branches(r.Context(), d, id)
	if err != nil {
		return err
	}
	diff, err := s.merges.DiffBranches(r.Context(), d, src, tgt, after, limit)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, diff)
	return nil
}

// proposalConflicts: GET .../proposals/{id}/conflicts.
func (s *Server) proposalConflicts(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	id, err := proposalParam(r)
	if err != nil {
		return err
	}
	_, ins, err := s.merges.Show(r.Context(), domainFrom(r.Context()).ID, id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, map[string]any{"conflicts": ins.Conflicts})
	return nil
}

// resolveConflict: PUT .../proposals/{id}/conflicts/{cid}/resolution
// {choice, value?, fingerprint} → 200; a stale fingerprint → 409. Needs
// write access to the target.
func (s *Server) resolveConflict(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	ref, err := s.proposalOf(r)
	if err != nil {
		return err
	}
	cid, err := pathParam(r, "conflict")
	if err != nil {
		return err
	}
	p := principalFrom(r.Context())
	if err := mustWrite(p, ref.target, "resolve conflicts of this Proposal"); err != nil {
		return err
	}
	var res merge.Resolution
	if err := s.decodeBounded(w, r, maxResolutionBody, "A resolution", &res); err != nil {
		return err
	}
	if res.Conflict != "" && res.Conflict != cid {
		return badRequest("conflict", "mismatch", "The body names another conflict than the path.")
	}
	c, err := s.merges.Resolve(r.Context(), ref.domain, ref.id, cid, res, p.name())
	if err != nil {
		return mergeError(w, err)
	}
	writeJSON(w, http.StatusOK, c)
	return nil
}

// clearResolution: DELETE .../proposals/{id}/conflicts/{cid}/resolution → 204.
func (s *Server) clearResolution(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	ref, err := s.proposalOf(r)
	if err != nil {
		return err
	}
	cid, err := pathParam(r, "conflict")
	if err != nil {
		return err
	}
	if err := mustWrite(principalFrom(r.Context()), ref.target, "resolve conflicts of this Proposal"); err != nil {
		return err
	}
	if err := s.merges.Unresolve(r.Context(), ref.domain, ref.id, cid); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// mergeBody is the body of a Proposal merge.
type mergeBody struct {
	ExpectedTargetHead *string `json:"expected_target_head,omitempty"`
	Default            string  `json:"default,omitempty"`
	Message            string  `json:"message,omitempty"`
}

func checkDefault(def string) error {
	if def != "" && def != merge.ChoiceTarget && def != merge.ChoiceSource {
		return badRequest("default", "invalid_choice", "default must be \"target\" or \"source\"; got "+quote(def)+".")
	}
	return nil
}

func checkMessage(msg string) error {
	if msg == "" {
		return nil
	}
	return checkText("message", msg, 10<<10)
}

// mergeProposal: POST .../proposals/{id}/merge → 201 {revision, parents,
// fast_forward}. Needs write access to the target.
func (s *Server) mergeProposal(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	ref, err := s.proposalOf(r)
	if err != nil {
		return err
	}
	d, id := ref.domain, ref.id
	p := principalFrom(r.Context())
	if err := mustWrite(p, ref.target, "merge this Proposal"); err != nil {
		return err
	}
	var body mergeBody
	if r.ContentLength != 0 {
		raw, err := s.readBody(w, r)
		if err != nil {
			return err
		}
		if err := decodeJSON(raw, &body); err != nil {
			return err
		}
	}
	if err := firstErr(checkDefault(body.Default), checkMessage(body.Message), checkHead("expected_target_head", body.ExpectedTargetHead)); err != nil {
		return err
	}
	trace, err := traceID(r)
	if err != nil {
		return err
	}
	// Under a trace, the merge Revision names it in its provenance, as a
	// commit does.
	res, err := s.merges.MergeProposal(r.Context(), d, id, &merge.MergeRequest{ExpectedTargetHead: body.ExpectedTargetHead,
		Default: body.Default, Message: body.Message, Trace: trace}, p.name())
	if err != nil {
		return mergeError(w, err)
	}
	if res.Queued {
		// A large merge runs as a job: the Proposal shows its progress.
		prop, _, err := s.merges.Show(r.Context(), d, id)
		if err != nil {
			return err
		}
		w.Header().Set("Location", "/v1/domains/"+url.PathEscape(domainFrom(r.Context()).Name)+"/proposals/"+id)
		writeJSON(w, http.StatusAccepted, prop)
		return nil
	}
	writeJSON(w, http.StatusCreated, res)
	return nil
}

// closeProposal: POST .../proposals/{id}/close → 200, state closed. Needs
// write access to the source or the target.
func (s *Server) closeProposal(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	ref, err := s.proposalOf(r)
	if err != nil {
		return err
	}
	p := principalFrom(r.Context())
	if !p.canWrite(ref.source) {
		if err := mustWrite(p, ref.target, "close this Proposal"); err != nil {
			return err
		}
	}
	prop, err := s.merges.Close(r.Context(), ref.domain, ref.id)
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, prop)
	return nil
}

// branchDiff: GET .../branches/{b}/diff?against=T&limit=&after= (the
// branch against T since their merge base), or ?from=REV&to=REV (two
// Revisions of the branch; to defaults to the head).
func (s *Server) branchDiff(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r, "against", "from", "to", "limit", "after"); err != nil {
		return err
	}
	name, err := branchParam(r)
	if err != nil {
		return err
	}
	q := r.URL.Query()
	against, from, to := q.Get("against"), q.Get("from"), q.Get("to")
	limit, err := queryLimit(r, defaultDiffLimit, maxDiffLimit)
	if err != nil {
		return err
	}
	after, err := queryString(r, "after")
	if err != nil {
		return err
	}
	d := domainFrom(r.Context()).ID
	var diff *merge.Diff
	switch {
	case against != "" && (from != "" || to != ""):
		return badRequest("against", "conflicting_parameters", "Send either against (another branch) or from/to (two Revisions), not both.")
	case against != "":
		if err := checkBranch("against", against); err != nil {
			return err
		}
		diff, err = s.merges.DiffBranches(r.Context(), d, name, against, after, limit)
	case from != "":
		for _, f := range []struct{ n, v string }{{"from", from}, {"to", to}} {
			if f.v != "" {
				if err := checkText(f.n, f.v, 256); err != nil {
					return err
				}
			}
		}
		diff, err = s.merges.DiffRevisions(r.Context(), d, name, from, to, after, limit)
	default:
		return badRequest("against", "required", "A diff needs against (the branch to compare with) or from (a Revision of this branch).")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, diff)
	return nil
}

// directMergeBody is the body of POST .../branches/{b}/merges.
type directMergeBody struct {
	From         string             `json:"from"`
	Message      string             `json:"message,omitempty"`
	Default      string             `json:"default,omitempty"`
	Resolutions  []merge.Resolution `json:"resolutions,omitempty"`
	ExpectedHead *string            `json:"expected_head,omitempty"`
}

// postMerge: POST .../branches/{b}/merges {from, ...} merges from into b
// without a Proposal → 201; unresolved conflicts → 409 {conflicts}. Needs
// write access to b.
func (s *Server) postMerge(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	name, err := branchParam(r)
	if err != nil {
		return err
	}
	p := principalFrom(r.Context())
	if err := mustWrite(p, name, "merge into this branch"); err != nil {
		return err
	}
	raw, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var body directMergeBody
	if err := decodeJSON(raw, &body); err != nil {
		return err
	}
	if body.From == "" {
		return badRequest("from", "required", "from is required: the branch to merge.")
	}
	if err := firstErr(checkBranch("from", body.From), checkDefault(body.Default), checkMessage(body.Message), checkHead("expected_head", body.ExpectedHead)); err != nil {
		return err
	}
	res := map[string]merge.Resolution{}
	for i, rs := range body.Resolutions {
		f := fmt.Sprintf("resolutions[%d].", i)
		switch {
		case rs.Conflict == "":
			return badRequest(f+"conflict", "required", "Each resolution names its conflict.")
		case !merge.ChoiceValid(rs.Choice):
			return badRequest(f+"choice", "invalid_choice", "choice must be \"target\", \"source\" or \"value\".")
		case rs.Fingerprint == "":
			return badRequest(f+"fingerprint", "required", "Each resolution carries the conflict's fingerprint.")
		}
		res[rs.Conflict] = rs
	}
	trace, err := traceID(r)
	if err != nil {
		return err
	}
	out, err := s.merges.Merge(r.Context(), domainFrom(r.Context()).ID, &merge.Request{Source: body.From, Target: name,
		Message: body.Message, Author: p.name(), Default: body.Default, Resolutions: res, ExpectedHead: body.ExpectedHead,
		Trace: trace})
	if err != nil {
		return mergeError(w, err)
	}
	writeJSON(w, http.StatusCreated, out)
	return nil
}

// checkHead checks an expected head: empty (a branch without commits) or a
// printable id.
func checkHead(field string, h *string) error {
	if h == nil || *h == "" {
		return nil
	}
	return checkText(field, *h, 64)
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
