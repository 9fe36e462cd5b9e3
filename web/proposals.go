package web

import (
	"encoding/json"
	"errors"
	"net/http"
	"net/url"
	"strings"

	"github.com/lorebase/lorebase/client"
)

// proposalsPath is the API path of a Domain's Proposals.
func proposalsPath(d string) string { return domainPath(d) + "/proposals" }

type proposalsData struct {
	State     string
	Proposals []client.Proposal
	Next      string
}

func (h *Handler) proposalsPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	v, err := h.base(r, "Proposals", "proposals", "state")
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	v.AtIgnored = v.At != ""
	d := proposalsData{State: r.URL.Query().Get("state")}
	if d.State == "" {
		d.State = "open"
	}
	var pl proposalList
	if err := h.api.get(r.Context(), s.token, proposalsPath(v.Domain), url.Values{"state": {d.State}}, &pl); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	d.Proposals, d.Next = pl.Proposals, pl.Next
	v.Data = d
	v.Notice = r.URL.Query().Get("notice")
	h.render(w, r, http.StatusOK, "proposals", v)
}

func (h *Handler) openProposal(w http.ResponseWriter, r *http.Request) {
	if !h.checkCSRF(w, r) {
		return
	}
	s := sessionFrom(r.Context())
	d := urlParam(r, "domain")
	f := r.PostForm
	body := map[string]any{"title": strings.TrimSpace(f.Get("title")), "source": f.Get("source"), "target": f.Get("target")}
	if desc := strings.TrimSpace(f.Get("description")); desc != "" {
		body["description"] = desc
	}
	var p client.Proposal
	if err := h.api.call(r.Context(), s.token, http.MethodPost, proposalsPath(d), nil, body, &p); err != nil {
		h.renderError(w, r, &view{Domain: d, Branch: "main"}, err)
		return
	}
	http.Redirect(w, r, "/d/"+seg(d)+"/proposals/"+seg(p.ID), http.StatusSeeOther) //nolint:gosec // G710: a path of this site, segments escaped
}

type proposalData struct {
	P         client.Proposal
	Diff      client.Diff
	After     string
	Conflicts []client.Conflict
	// Unresolved counts conflicts without a resolution.
	Unresolved int
	CanMerge   bool
	CanClose   bool
	// MergeError is the 409 or 422 of a merge just tried, shown above the
	// conflicts it names.
	MergeError *apiError
}

// proposalView loads a Proposal with its diff page and conflicts.
func (h *Handler) proposalView(r *http.Request) (*view, *proposalData, error) {
	s := sessionFrom(r.Context())
	id := urlParam(r, "id")
	v := newView(r, "Proposal", "proposals/"+seg(id))
	v.AtIgnored = v.At != ""
	d := &proposalData{After: r.URL.Query().Get("after")}
	pp := proposalsPath(v.Domain) + "/" + seg(id)
	dq := url.Values{"limit": {"100"}}
	if d.After != "" {
		dq.Set("after", d.After)
	}
	var cl conflictList
	err := h.fetch(r, v,
		func() error { return h.api.get(r.Context(), s.token, pp, nil, &d.P) },
		func() error { return h.api.get(r.Context(), s.token, pp+"/diff", dq, &d.Diff) },
		func() error { return h.api.get(r.Context(), s.token, pp+"/conflicts", nil, &cl) })
	if err != nil {
		return v, nil, err
	}
	v.Title = d.P.Title
	d.Conflicts = cl.Conflicts
	for _, c := range cl.Conflicts {
		if c.Resolution == nil {
			d.Unresolved++
		}
	}
	if err := h.withWrites(r, v, d.P.Target, d.P.Source); err != nil {
		return v, nil, err
	}
	d.CanMerge = d.P.State == "open" && v.Who.Write[d.P.Target]
	d.CanClose = d.P.State == "open" && (v.Who.Write[d.P.Target] || v.Who.Write[d.P.Source])
	v.Data = d
	return v, d, nil
}

func (h *Handler) proposalPage(w http.ResponseWriter, r *http.Request) {
	v, _, err := h.proposalView(r)
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	v.Notice = r.URL.Query().Get("notice")
	h.render(w, r, http.StatusOK, "proposal", v)
}

// proposalURL is the web page of a Proposal, with a notice.
func proposalURL(d, id, notice string) string {
	u := "/d/" + seg(d) + "/proposals/" + seg(id)
	if notice != "" {
		u += "?notice=" + url.QueryEscape(notice)
	}
	return u
}

// resolutionValue reads the value a person typed: JSON when it parses,
// otherwise the text as a JSON string.
func resolutionValue(s string) json.RawMessage {
	t := strings.TrimSpace(s)
	if t != "" && json.Valid([]byte(t)) {
		return json.RawMessage(t)
	}
	b, _ := json.Marshal(s)
	return b
}

func (h *Handler) resolveConflict(w http.ResponseWriter, r *http.Request) {
	if !h.checkCSRF(w, r) {
		return
	}
	s := sessionFrom(r.Context())
	d, id, cid := urlParam(r, "domain"), urlParam(r, "id"), urlParam(r, "cid")
	path := proposalsPath(d) + "/" + seg(id) + "/conflicts/" + seg(cid) + "/resolution"
	f := r.PostForm
	var err error
	notice := "Resolution saved."
	if f.Get("clear") != "" {
		err = h.api.call(r.Context(), s.token, http.MethodDelete, path, nil, nil, nil)
		notice = "Resolution cleared."
	} else {
		body := map[string]any{"choice": f.Get("choice"), "fingerprint": f.Get("fingerprint")}
		if f.Get("choice") == "value" {
			body["value"] = resolutionValue(f.Get("value"))
		}
		err = h.api.call(r.Context(), s.token, http.MethodPut, path, nil, body, nil)
	}
	if statusOf(err) == http.StatusConflict {
		notice = "That conflict changed since the page was loaded (a side changed again): look at it anew below."
		err = nil
	}
	if err != nil {
		h.renderError(w, r, &view{Domain: d, Branch: "main"}, err)
		return
	}
	http.Redirect(w, r, proposalURL(d, id, notice), http.StatusSeeOther) //nolint:gosec // G710: proposalURL is a path of this site
}

func (h *Handler) mergeProposal(w http.ResponseWriter, r *http.Request) {
	if !h.checkCSRF(w, r) {
		return
	}
	s := sessionFrom(r.Context())
	d, id := urlParam(r, "domain"), urlParam(r, "id")
	f := r.PostForm
	body := map[string]any{}
	if head := f.Get("expected_target_head"); head != "" {
		body["expected_target_head"] = head
	}
	if m := strings.TrimSpace(f.Get("message")); m != "" {
		body["message"] = m
	}
	if def := f.Get("default"); def == "target" || def == "source" {
		body["default"] = def
	}
	var out struct {
		Revision string `json:"revision"`
	}
	err := h.api.call(r.Context(), s.token, http.MethodPost, proposalsPath(d)+"/"+seg(id)+"/merge", nil, body, &out)
	if err == nil {
		http.Redirect(w, r, proposalURL(d, id, "Merged as Revision "+out.Revision+"."), http.StatusSeeOther) //nolint:gosec // G710: proposalURL is a path of this site
		return
	}
	var ae *apiError
	if errors.As(err, &ae) && (ae.Status == http.StatusConflict || ae.Status == http.StatusUnprocessableEntity) {
		// Show the Proposal as it is now, with what blocked the merge.
		v, pd, verr := h.proposalView(r)
		if verr != nil {
			h.renderError(w, r, v, verr)
			return
		}
		pd.MergeError = ae
		h.render(w, r, ae.Status, "proposal", v)
		return
	}
	h.renderError(w, r, &view{Domain: d, Branch: "main"}, err)
}

func (h *Handler) closeProposal(w http.ResponseWriter, r *http.Request) {
	if !h.checkCSRF(w, r) {
		return
	}
	d, id := urlParam(r, "domain"), urlParam(r, "id")
	h.postForm(w, r, http.MethodPost, proposalsPath(d)+"/"+seg(id)+"/close", map[string]any{}, proposalURL(d, id, "Proposal closed."))
}
