package web

import (
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"

	"github.com/go-chi/chi/v5"

	"github.com/lorebase/lorebase/client"
)

// pageSize is how many rows a list page shows.
const pageSize = 50

// urlParam is a path parameter, unescaped (keys may hold an escaped /).
func urlParam(r *http.Request, name string) string {
	v := chi.URLParam(r, name)
	if u, err := url.PathUnescape(v); err == nil {
		return u
	}
	return v
}

// domainPath is the API path of the page's Domain.
func domainPath(d string) string { return "/v1/domains/" + seg(d) }

// branchPath is the API path of a branch of the page's Domain.
func branchPath(d, b string) string { return domainPath(d) + "/branches/" + seg(b) }

// newView is the view every Domain page starts from: the Domain, the
// branch (?b=, main by default), at= and the query parameters the branch
// switcher keeps. It calls nothing.
func newView(r *http.Request, title, path string, keep ...string) *view {
	s := sessionFrom(r.Context())
	q := r.URL.Query()
	v := &view{Title: title, Who: &s.who, Domain: urlParam(r, "domain"), Branch: q.Get("b"), At: q.Get("at"),
		Path: path, Keep: map[string]string{}}
	if v.Branch == "" {
		v.Branch = "main"
	}
	for _, k := range keep {
		if q.Get(k) != "" {
			v.Keep[k] = q.Get(k)
		}
	}
	return v
}

// base is newView with the branches for the switcher.
func (h *Handler) base(r *http.Request, title, path string, keep ...string) (*view, error) {
	v := newView(r, title, path, keep...)
	return v, h.fetch(r, v)
}

// fetch checks the session's token if that is pending, reads the branches
// for the switcher and runs the page's own API reads, all at once (each is
// a request of its own to the API). The first failing read, in order, is
// the error: the token's check, the page's reads, the switcher's.
func (h *Handler) fetch(r *http.Request, v *view, reads ...func() error) error {
	var fns []func() error
	if s := sessionFrom(r.Context()); s != nil && s.pending {
		fns = append(fns, func() error { return h.checkSession(r.Context(), s) })
	}
	fns = append(fns, reads...)
	fns = append(fns, func() error { return h.switcher(r, v) })
	errs := make([]error, len(fns))
	var wg sync.WaitGroup
	for i, f := range fns {
		wg.Go(func() { errs[i] = f() })
	}
	wg.Wait()
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// branchesQuery lists the first 100 branches without their own-row counts,
// which no page shows (each reads up to 2,000 index entries per branch).
func branchesQuery() url.Values { return url.Values{"limit": {"100"}, "own": {"false"}} }

// switcher lists the Domain's branches (the first 100, and the page's).
func (h *Handler) switcher(r *http.Request, v *view) error {
	s := sessionFrom(r.Context())
	var bl branchList
	if err := h.api.get(r.Context(), s.token, domainPath(v.Domain)+"/branches", branchesQuery(), &bl); err != nil {
		return err
	}
	v.branchInfos = bl.Branches
	seen := false
	for _, b := range bl.Branches {
		v.Branches = append(v.Branches, b.Name)
		seen = seen || b.Name == v.Branch
	}
	if !seen {
		v.Branches = append(v.Branches, v.Branch)
	}
	return nil
}

// withWrites asks the API which of the branches the token may write to.
func (h *Handler) withWrites(r *http.Request, v *view, branches ...string) error {
	s := sessionFrom(r.Context())
	q := url.Values{"branch": branches}
	var who client.Whoami
	if err := h.api.get(r.Context(), s.token, "/v1/whoami", q, &who); err != nil {
		return err
	}
	v.Who = &who
	return nil
}

// atQuery is the at= parameter for the API, when the page reads as of a
// Revision.
func atQuery(v *view, q url.Values) url.Values {
	if v.At != "" {
		q.Set("at", v.At)
	}
	return q
}

func (h *Handler) home(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	if err := h.checkSession(r.Context(), s); err != nil {
		h.renderError(w, r, nil, err)
		return
	}
	if !s.who.Bootstrap {
		http.Redirect(w, r, "/d/"+seg(s.who.Domain)+"/", http.StatusSeeOther)
		return
	}
	h.domainsPage(w, r, http.StatusOK, domainsData{}, r.URL.Query().Get("notice"))
}

// domainsData is the Domains page: every Domain, those being deleted with
// their deletion's progress; Error and Confirm say why a deletion was
// refused and whose form to show open.
type domainsData struct {
	Domains []client.DomainInfo
	Error   string
	Confirm string
}

// domainsQuery lists the Domains being deleted too.
func domainsQuery() url.Values { return url.Values{"deleting": {"true"}} }

// domainsPage renders the bootstrap admin's Domains page.
func (h *Handler) domainsPage(w http.ResponseWriter, r *http.Request, status int, d domainsData, notice string) {
	s := sessionFrom(r.Context())
	var out struct {
		Domains []client.DomainInfo `json:"domains"`
	}
	if err := h.api.get(r.Context(), s.token, "/v1/domains", domainsQuery(), &out); err != nil {
		h.renderError(w, r, nil, err)
		return
	}
	d.Domains = out.Domains
	h.render(w, r, status, "domains", &view{Title: "Domains", Notice: notice, Data: d})
}

// domainsJSON feeds the live deletion progress on the Domains page.
func (h *Handler) domainsJSON(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	var out json.RawMessage
	if err := h.api.get(r.Context(), s.token, "/v1/domains", domainsQuery(), &out); err != nil {
		writeJSONError(w, err)
		return
	}
	writeJSON(w, out)
}

// deleteDomain deletes a Domain (bootstrap admin only) once the person has
// typed its name: a name that does not match deletes nothing and shows
// the page again saying so (422). The API then hides the Domain at once
// and queues its deletion; the Domains page shows its progress.
func (h *Handler) deleteDomain(w http.ResponseWriter, r *http.Request) {
	if !h.checkCSRF(w, r) {
		return
	}
	s := sessionFrom(r.Context())
	if !s.who.Bootstrap {
		h.renderError(w, r, nil, &apiError{Status: http.StatusForbidden, Title: "Forbidden",
			Detail: "Only the bootstrap admin may delete a Domain; nothing was deleted."})
		return
	}
	name := r.PostForm.Get("name")
	typed := strings.TrimSpace(r.PostForm.Get("confirm"))
	if name == "" {
		h.renderError(w, r, nil, &apiError{Status: http.StatusBadRequest, Title: "No Domain",
			Detail: "The form named no Domain to delete; nothing was deleted."})
		return
	}
	if typed != name {
		msg := fmt.Sprintf("To delete the Domain %q, type its name exactly; you typed %q. Nothing was deleted.", name, typed)
		if typed == "" {
			msg = fmt.Sprintf("To delete the Domain %q, type its name in the box; nothing was deleted.", name)
		}
		h.domainsPage(w, r, http.StatusUnprocessableEntity, domainsData{Error: msg, Confirm: name}, "")
		return
	}
	next := "/?notice=" + url.QueryEscape("Domain "+name+" is being deleted.")
	h.postForm(w, r, http.MethodDelete, domainPath(name), nil, next)
}

type domainData struct {
	Branches []client.BranchInfo
	Kinds    []client.KindDef
	CanAdd   bool
}

func (h *Handler) domainPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	v := newView(r, "", "")
	v.Title = v.Domain
	v.AtIgnored = v.At != ""
	var sc schemaRead
	if err := h.fetch(r, v, func() error {
		return h.api.schema(r.Context(), s.token, branchPath(v.Domain, v.Branch), &sc)
	}); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	names := make([]string, 0, len(v.branchInfos))
	for _, b := range v.branchInfos {
		names = append(names, b.Name)
	}
	if err := h.withWrites(r, v, names...); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	d := domainData{Branches: v.branchInfos, Kinds: sc.Doc.Kinds, CanAdd: v.Who.Role == "writer" || v.Who.Role == "admin"}
	v.Notice, v.Data = r.URL.Query().Get("notice"), d
	h.render(w, r, http.StatusOK, "domain", v)
}

// branchesJSON feeds the live job progress on the Domain page.
func (h *Handler) branchesJSON(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	var bl branchList
	if err := h.api.get(r.Context(), s.token, domainPath(urlParam(r, "domain"))+"/branches", branchesQuery(), &bl); err != nil {
		writeJSONError(w, err)
		return
	}
	writeJSON(w, bl)
}

func (h *Handler) neighborhoodJSON(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	q := r.URL.Query()
	b := q.Get("b")
	if b == "" {
		b = "main"
	}
	aq := url.Values{}
	for _, k := range []string{"depth", "limit"} {
		if q.Get(k) != "" {
			aq.Set(k, q.Get(k))
		}
	}
	var out json.RawMessage
	if err := h.api.get(r.Context(), s.token, branchPath(urlParam(r, "domain"), b)+"/records/"+seg(q.Get("key"))+"/neighborhood", aq, &out); err != nil {
		writeJSONError(w, err)
		return
	}
	writeJSON(w, out)
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "no-store")
	_ = json.NewEncoder(w).Encode(v)
}

func writeJSONError(w http.ResponseWriter, err error) {
	status := statusOf(err)
	msg := err.Error()
	if status == 0 {
		status = http.StatusInternalServerError
		msg = "Keeper could not answer."
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]any{"status": status, "detail": msg})
}

// postForm checks CSRF and sends one write to the API; on success the
// person is sent to next, on failure shown what to correct.
func (h *Handler) postForm(w http.ResponseWriter, r *http.Request, method, path string, body any, next string) bool {
	s := sessionFrom(r.Context())
	if err := h.api.call(r.Context(), s.token, method, path, nil, body, nil); err != nil {
		v := &view{Domain: urlParam(r, "domain"), Branch: "main"}
		h.renderError(w, r, v, err)
		return false
	}
	http.Redirect(w, r, next, http.StatusSeeOther) //nolint:gosec // G710: next is a path of this site built with seg()
	return true
}

func (h *Handler) createBranch(w http.ResponseWriter, r *http.Request) {
	if !h.checkCSRF(w, r) {
		return
	}
	d := urlParam(r, "domain")
	f := r.PostForm
	body := map[string]any{"name": strings.TrimSpace(f.Get("name")), "from": f.Get("from"), "mode": f.Get("mode")}
	if at := strings.TrimSpace(f.Get("at")); at != "" {
		body["at"] = at
	}
	next := "/d/" + seg(d) + "/?notice=" + url.QueryEscape("Branch "+f.Get("name")+" created.")
	h.postForm(w, r, http.MethodPost, domainPath(d)+"/branches", body, next)
}

func (h *Handler) deleteBranch(w http.ResponseWriter, r *http.Request) {
	if !h.checkCSRF(w, r) {
		return
	}
	d, name := urlParam(r, "domain"), r.PostForm.Get("name")
	next := "/d/" + seg(d) + "/?notice=" + url.QueryEscape("Branch "+name+" is being deleted.")
	h.postForm(w, r, http.MethodDelete, branchPath(d, name), nil, next)
}

type recordsData struct {
	Kind  string
	Kinds []client.KindDef
	Page  client.RecordPage
	After string
}

func (h *Handler) recordsPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	v := newView(r, "Records", "records", "kind")
	q := r.URL.Query()
	d := recordsData{Kind: q.Get("kind"), After: q.Get("after")}
	if d.Kind != "" {
		v.Title = d.Kind
	}
	aq := atQuery(v, url.Values{"limit": {strconv.Itoa(pageSize)}, "count": {"true"}})
	if d.Kind != "" {
		aq.Set("kind", d.Kind)
	}
	if d.After != "" {
		aq.Set("after", d.After)
	}
	var sc schemaRead
	err := h.fetch(r, v,
		func() error {
			return h.api.get(r.Context(), s.token, branchPath(v.Domain, v.Branch)+"/records", aq, &d.Page)
		},
		func() error { return h.api.schema(r.Context(), s.token, branchPath(v.Domain, v.Branch), &sc) })
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	d.Kinds = sc.Doc.Kinds
	v.Data = d
	h.render(w, r, http.StatusOK, "records", v)
}

// valueRow is one Attribute of a Record, shown by its schema type.
type valueRow struct {
	Name     string
	Type     string
	Display  string
	Ref      string // the key a ref points to
	Block    bool   // json: shown as a block
	Missing  bool
	Lineage  *client.Origin
	Unknown  bool // a value the schema does not declare
	Required bool
}

type linkRow struct {
	Relation string
	Other    string
	Out      bool
	Origin   string
}

type recordData struct {
	Record   client.Record
	Values   []valueRow
	Links    []linkRow
	History  client.HistoryPage
	Lineage  *client.Lineage
	Before   string
	KindDef  *client.KindDef
	NoSchema bool
}

func (h *Handler) recordPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	key := urlParam(r, "key")
	v := newView(r, key, "records/"+seg(key))
	ctx := r.Context()
	bp := branchPath(v.Domain, v.Branch)
	rp := bp + "/records/" + seg(key)
	d := recordData{Before: r.URL.Query().Get("before")}
	hq := url.Values{"limit": {"20"}}
	if d.Before != "" {
		hq.Set("before", d.Before)
	}
	var (
		links linkList
		lin   client.Lineage
		hasLn bool
		sc    schemaRead
	)
	err := h.fetch(r, v,
		func() error { return h.api.get(ctx, s.token, rp, atQuery(v, url.Values{}), &d.Record) },
		func() error {
			return h.api.get(ctx, s.token, rp+"/links", atQuery(v, url.Values{"direction": {"both"}}), &links)
		},
		func() error { return h.api.get(ctx, s.token, rp+"/history", hq, &d.History) },
		func() error {
			// A Record read at= a Revision may have no lineage today.
			err := h.api.get(ctx, s.token, rp+"/lineage", nil, &lin)
			hasLn = err == nil
			if statusOf(err) == http.StatusNotFound {
				return nil
			}
			return err
		},
		func() error { return h.api.schema(ctx, s.token, bp, &sc) })
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	v.Title = d.Record.Title
	if v.Title == "" {
		v.Title = key
	}
	for _, l := range links.Links {
		if l.From == key {
			d.Links = append(d.Links, linkRow{Relation: l.Relation, Other: l.To, Out: true, Origin: l.Origin})
		}
		if l.To == key {
			d.Links = append(d.Links, linkRow{Relation: l.Relation, Other: l.From, Origin: l.Origin})
		}
	}
	if hasLn {
		d.Lineage = &lin
	}
	d.KindDef = sc.Doc.Kind(d.Record.Kind)
	values, err := d.Record.ValueMap()
	if err != nil {
		h.renderError(w, r, v, err)
		return
	}
	d.Values = valueRows(d.KindDef, values, d.Lineage)
	v.Data = d
	h.render(w, r, http.StatusOK, "record", v)
}

// valueRows orders a Record's values by its Kind's Attributes, typed by
// the schema; values the schema does not declare come last.
func valueRows(k *client.KindDef, values map[string]json.RawMessage, lin *client.Lineage) []valueRow {
	var rows []valueRow
	seen := map[string]bool{}
	row := func(name, typ string, required bool) valueRow {
		raw, ok := values[name]
		vr := valueRow{Name: name, Type: typ, Required: required, Missing: !ok || string(raw) == "null"}
		if !vr.Missing {
			vr.Display = displayValue(raw)
			switch typ {
			case "ref":
				vr.Ref = vr.Display
			case "json":
				vr.Display, vr.Block = prettyJSON(raw), true
			}
		}
		if lin != nil {
			if o, ok := lin.Values[name]; ok {
				vr.Lineage = &o
			}
		}
		return vr
	}
	if k != nil {
		for _, a := range k.Attributes {
			seen[a.Name] = true
			rows = append(rows, row(a.Name, a.Type, a.Required))
		}
	}
	var rest []string
	for name := range values {
		if !seen[name] {
			rest = append(rest, name)
		}
	}
	sort.Strings(rest)
	for _, name := range rest {
		vr := row(name, "", false)
		vr.Unknown = true
		rows = append(rows, vr)
	}
	return rows
}

type graphData struct {
	// JSON is the neighborhood as the API answered it, embedded in the
	// page so the graph draws without a second request.
	JSON  json.RawMessage
	Key   string
	Depth string
	Limit string
	Hood  client.Neighborhood
}

func (h *Handler) graphPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	v := newView(r, "Graph", "graph", "key", "depth", "limit")
	v.AtIgnored = v.At != ""
	q := r.URL.Query()
	d := graphData{Key: q.Get("key"), Depth: q.Get("depth"), Limit: q.Get("limit")}
	if d.Depth == "" {
		d.Depth = "1"
	}
	if d.Limit == "" {
		d.Limit = "200"
	}
	if d.Key == "" {
		_ = h.fetch(r, v)
		h.renderError(w, r, v, &apiError{Status: http.StatusBadRequest, Title: "No Record", Detail: "The graph starts from a Record: open a Record and follow its graph link."})
		return
	}
	v.Title = "Graph of " + d.Key
	aq := url.Values{"depth": {d.Depth}, "limit": {d.Limit}}
	if err := h.fetch(r, v, func() error {
		return h.api.get(r.Context(), s.token, branchPath(v.Domain, v.Branch)+"/records/"+seg(d.Key)+"/neighborhood", aq, &d.JSON)
	}); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	if err := json.Unmarshal(d.JSON, &d.Hood); err != nil {
		h.renderError(w, r, v, fmt.Errorf("decode neighborhood: %w", err))
		return
	}
	v.Data = d
	h.render(w, r, http.StatusOK, "graph", v)
}

type searchData struct {
	Q, Kind     string
	Kinds       []client.KindDef
	Answer      client.SearchResults
	Corrections []string
}

func (h *Handler) searchPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	v := newView(r, "Search", "search", "q", "kind")
	q := r.URL.Query()
	d := searchData{Q: strings.TrimSpace(q.Get("q")), Kind: q.Get("kind")}
	var sc schemaRead
	reads := []func() error{func() error { return h.api.schema(r.Context(), s.token, branchPath(v.Domain, v.Branch), &sc) }}
	if d.Q != "" {
		v.Title = "Search: " + d.Q
		aq := atQuery(v, url.Values{"q": {d.Q}, "limit": {"50"}})
		if d.Kind != "" {
			aq.Set("kind", d.Kind)
		}
		reads = append(reads, func() error {
			return h.api.get(r.Context(), s.token, branchPath(v.Domain, v.Branch)+"/search", aq, &d.Answer)
		})
	}
	if err := h.fetch(r, v, reads...); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	d.Kinds = sc.Doc.Kinds
	words := make([]string, 0, len(d.Answer.Corrections))
	for w := range d.Answer.Corrections {
		words = append(words, w)
	}
	sort.Strings(words)
	for _, w := range words {
		d.Corrections = append(d.Corrections, w+" → "+strings.Join(d.Answer.Corrections[w], ", "))
	}
	v.Data = d
	h.render(w, r, http.StatusOK, "search", v)
}

func (h *Handler) revisionsPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	v := newView(r, "Revisions", "revisions")
	v.AtIgnored = v.At != ""
	aq := url.Values{"limit": {strconv.Itoa(pageSize)}}
	if b := r.URL.Query().Get("before"); b != "" {
		aq.Set("before", b)
	}
	var page client.RevisionPage
	if err := h.fetch(r, v, func() error {
		return h.api.get(r.Context(), s.token, branchPath(v.Domain, v.Branch)+"/revisions", aq, &page)
	}); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	v.Data = page
	h.render(w, r, http.StatusOK, "revisions", v)
}

// changesPerPage bounds the changes one Revision page lists.
const changesPerPage = 200

type revisionData struct {
	Rev     client.Revision
	Changes []client.StoredChange
	Raw     string
	// Total is the number of changes; From the first one listed; Next
	// the first of the next page (0: none).
	Total, From, Next int
}

func (h *Handler) revisionPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	id := urlParam(r, "id")
	v := newView(r, "Revision "+id, "revisions/"+seg(id))
	var d revisionData
	// from is the position of the first change listed; the API pages by
	// the position of the last change read, the same number.
	if from, err := strconv.Atoi(r.URL.Query().Get("from")); err == nil && from > 0 {
		d.From = from
	}
	q := url.Values{"limit": {strconv.Itoa(changesPerPage)}}
	if d.From > 0 {
		q.Set("after", strconv.Itoa(d.From))
	}
	if err := h.fetch(r, v, func() error {
		return h.api.get(r.Context(), s.token, domainPath(v.Domain)+"/revisions/"+seg(id), q, &d.Rev)
	}); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	if changes, err := d.Rev.ChangeList(); err == nil {
		d.Changes = changes
	} else {
		d.Raw = prettyJSON(d.Rev.Changes)
	}
	d.Total = d.Rev.ChangesTotal
	if d.Rev.Next != "" {
		d.Next = d.From + len(d.Changes)
	}
	v.Data = d
	h.render(w, r, http.StatusOK, "revision", v)
}

func (h *Handler) schemaPage(w http.ResponseWriter, r *http.Request) {
	s := sessionFrom(r.Context())
	v := newView(r, "Schema", "schema")
	v.AtIgnored = v.At != ""
	var sc schemaRead
	if err := h.fetch(r, v, func() error {
		return h.api.schema(r.Context(), s.token, branchPath(v.Domain, v.Branch), &sc)
	}); err != nil {
		h.renderError(w, r, v, err)
		return
	}
	v.Data = sc
	h.render(w, r, http.StatusOK, "schema", v)
}
