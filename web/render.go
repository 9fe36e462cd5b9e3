package web

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"html/template"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/lorebase/lorebase/client"
)

// pageNames are the page templates; each defines "content" for layout.html.
var pageNames = []string{"signin", "error", "domains", "domain", "records", "record", "graph", "search",
	"revisions", "revision", "schema", "proposals", "proposal"}

func parsePages() map[string]*template.Template {
	funcs := template.FuncMap{
		"seg":      seg,
		"short":    shortID,
		"when":     when,
		"value":    displayValue,
		"pretty":   prettyJSON,
		"provSum":  provenanceSummary,
		"add":      func(a, b int) int { return a + b },
		"hasValue": func(raw json.RawMessage) bool { return len(raw) > 0 && string(raw) != "null" },
	}
	out := make(map[string]*template.Template, len(pageNames))
	for _, name := range pageNames {
		out[name] = template.Must(template.New("layout.html").Funcs(funcs).
			ParseFS(templateFS, "templates/layout.html", "templates/"+name+".html"))
	}
	return out
}

// view is what every page template gets: the session, where the person
// is (Domain, branch, at=) and the page's own data.
type view struct {
	Title string
	// Who is the signed-in token; CSRF the token forms carry.
	Who  *client.Whoami
	CSRF string
	// Domain, Branch and At locate the page; Branches feed the switcher.
	Domain   string
	Branch   string
	At       string
	Branches []string
	// Path is this page's path within the Domain ("records/KEY"), Keep the
	// query parameters the branch switcher keeps.
	Path string
	Keep map[string]string
	// AtIgnored says this page reads the branch head whatever at= says
	// (the API takes at= on records, Links and search only).
	AtIgnored bool
	Notice    string
	Data      any
	// branchInfos are the branches as the switcher read them.
	branchInfos []client.BranchInfo
}

// Href is a link within the Domain that keeps the branch and at=;
// kv are extra query parameters, name then value.
func (v *view) Href(path string, kv ...string) string { return v.href(path, true, kv...) }

// HeadHref is Href without at= (pages that read the head).
func (v *view) HeadHref(path string, kv ...string) string { return v.href(path, false, kv...) }

// RecordHref links to a Record on this page's branch and at=.
func (v *view) RecordHref(key string) string { return v.href("records/"+seg(key), true) }

func (v *view) href(path string, keepAt bool, kv ...string) string {
	q := url.Values{}
	if v.Branch != "" && v.Branch != "main" {
		q.Set("b", v.Branch)
	}
	if keepAt && v.At != "" {
		q.Set("at", v.At)
	}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	u := "/d/" + seg(v.Domain) + "/" + path
	if len(q) > 0 {
		u += "?" + q.Encode()
	}
	return u
}

// CanWrite reports whether the signed-in token may write to a branch, as
// the API answered for the branches this page asked about.
func (v *view) CanWrite(branch string) bool {
	return v.Who != nil && v.Who.Write[branch]
}

// render writes a page; a template failure is logged and becomes a plain
// 500 (the page was not written yet: it renders into a buffer first).
func (h *Handler) render(w http.ResponseWriter, r *http.Request, status int, name string, v *view) {
	if s := sessionFrom(r.Context()); s != nil {
		// A page that read nothing has not checked its token yet.
		if err := h.checkSession(r.Context(), s); err != nil && name != "error" {
			h.renderError(w, r, v, err)
			return
		}
		if v.Who == nil {
			v.Who = &s.who
		}
		v.CSRF = csrfToken(s.token)
	}
	var buf bytes.Buffer
	if err := h.pages[name].ExecuteTemplate(&buf, "layout.html", v); err != nil {
		h.log.ErrorContext(r.Context(), "render page", "page", name, "err", err)
		http.Error(w, "The page could not be rendered.", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// errorData is what the error page shows: what failed and what to do.
type errorData struct {
	Status int
	Title  string
	Detail string
	Errors []problemEntry
	Advice string
}

// renderError shows an error as a person can act on it. A 401 (the token
// was revoked or expired) sends them to sign in again.
func (h *Handler) renderError(w http.ResponseWriter, r *http.Request, v *view, err error) {
	if s := sessionFrom(r.Context()); s != nil && statusOf(h.checkSession(r.Context(), s)) == http.StatusUnauthorized {
		// Whatever else failed, a token the API no longer accepts means
		// signing in again.
		err = s.checkErr
	}
	var ae *apiError
	if !errors.As(err, &ae) {
		h.log.ErrorContext(r.Context(), "web page", "path", r.URL.Path, "err", err)
		ae = &apiError{Status: http.StatusInternalServerError, Title: "Something went wrong",
			Detail: "Keeper could not build this page. Try again; if it keeps failing, its log has the cause."}
	}
	if ae.Status == http.StatusUnauthorized {
		h.clearSession(w, r)
		h.toSignIn(w, r, "Your token is no longer accepted (revoked or expired). Sign in again.")
		return
	}
	if v == nil {
		v = &view{}
	}
	v.Title = ae.Title
	d := errorData{Status: ae.Status, Title: ae.Title, Detail: ae.Detail, Errors: ae.Errors}
	switch ae.Status {
	case http.StatusForbidden:
		d.Advice = "Your token does not allow this. Ask an admin of the Domain for a token whose role and branch patterns cover it."
	case http.StatusNotFound:
		d.Advice = "Check the name or key. It may exist on another branch or at another Revision: use the branch switcher above."
	case http.StatusConflict:
		d.Advice = "Something changed meanwhile. Reload the page to see the current state, then try again."
	case http.StatusBadRequest, http.StatusUnprocessableEntity:
		d.Advice = "Correct what is named above and submit again; nothing was written."
	}
	h.render(w, r, ae.Status, "error", &view{Title: v.Title, Domain: v.Domain, Branch: v.Branch, At: v.At,
		Branches: v.Branches, Path: v.Path, Keep: v.Keep, Data: d})
}

// shortID shortens a Revision id for display (the full id is in the link).
func shortID(id string) string {
	if len(id) > 10 {
		return id[len(id)-10:]
	}
	return id
}

func when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format("2006-01-02 15:04:05 UTC")
}

// displayValue shows a JSON value as a person reads it: strings without
// quotes, null as an empty mark, everything else as compact JSON.
func displayValue(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return "—"
	}
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return "yes"
		}
		return "no"
	}
	var n json.Number
	if json.Unmarshal(raw, &n) == nil {
		return n.String()
	}
	var buf bytes.Buffer
	if json.Compact(&buf, raw) == nil {
		return buf.String()
	}
	return string(raw)
}

func prettyJSON(raw json.RawMessage) string {
	if len(raw) == 0 {
		return ""
	}
	var buf bytes.Buffer
	if json.Indent(&buf, raw, "", "  ") == nil {
		return buf.String()
	}
	return string(raw)
}

// provenanceSummary is a one-line provenance: agent, tool, source,
// confidence, quote.
func provenanceSummary(raw json.RawMessage) string {
	if len(raw) == 0 || string(raw) == "null" {
		return ""
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return displayValue(raw)
	}
	var parts []string
	for _, k := range []string{"agent", "tool", "source", "confidence", "quote"} {
		if v, ok := m[k]; ok && v != nil {
			switch x := v.(type) {
			case float64:
				parts = append(parts, k+" "+strconv.FormatFloat(x, 'f', -1, 64))
			default:
				parts = append(parts, k+" "+fmt.Sprint(x))
			}
			delete(m, k)
		}
	}
	rest := make([]string, 0, len(m))
	for k := range m {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	for _, k := range rest {
		parts = append(parts, k+" "+fmt.Sprint(m[k]))
	}
	return strings.Join(parts, " · ")
}
