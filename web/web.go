package web

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"crypto/subtle"
	"embed"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"html/template"
	"io/fs"
	"log/slog"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"

	"github.com/lorebase/lorebase/client"
)

//go:embed templates/*.html
var templateFS embed.FS

//go:embed static
var staticFS embed.FS

// Cookie names.
const (
	sessionCookie = "lorebase_session"
	csrfField     = "csrf"
)

// Options configure the UI.
type Options struct {
	// API is Keeper's JSON API; every page reads and writes through it.
	API http.Handler
	// SecureCookies marks the session cookie Secure even on requests that
	// did not arrive over TLS (Keeper behind a TLS-terminating proxy).
	// Requests over TLS always get a Secure cookie.
	SecureCookies bool
	// Log receives errors the person cannot act on; nil discards them.
	Log *slog.Logger
}

// Handler serves the web UI.
type Handler struct {
	api    apiClient
	secure bool
	log    *slog.Logger
	pages  map[string]*template.Template
	static http.Handler
	mux    http.Handler
}

// New returns the UI's handler. It panics if the embedded templates do
// not parse (a build defect, caught by every test).
func New(opts Options) *Handler {
	log := opts.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	sub, err := fs.Sub(staticFS, "static")
	if err != nil {
		panic(fmt.Sprintf("web: static assets: %v", err))
	}
	h := &Handler{api: apiClient{h: opts.API}, secure: opts.SecureCookies, log: log, pages: parsePages(), static: http.FileServerFS(sub)}
	h.mux = h.routes()
	return h
}

func (h *Handler) ServeHTTP(w http.ResponseWriter, r *http.Request) { h.mux.ServeHTTP(w, r) }

func (h *Handler) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(securityHeaders)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "text/html") {
			// An API client that missed its route gets a problem document.
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusNotFound)
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "urn:lorebase:problem:not-found", "title": "Not found", "status": http.StatusNotFound,
				"detail": "No such route: " + r.Method + " " + r.URL.EscapedPath() + ". The API is under /v1; the web UI under /."})
			return
		}
		h.renderError(w, r, nil, &apiError{Status: http.StatusNotFound, Title: "Page not found",
			Detail: "There is no page at " + r.URL.Path + "."})
	})
	r.Handle("/static/*", http.StripPrefix("/static/", cacheStatic(h.static)))
	r.Get("/signin", h.signInForm)
	r.Post("/signin", h.signIn)
	r.Post("/signout", h.signOut)
	r.Group(func(r chi.Router) {
		r.Use(h.requireSession)
		r.Get("/", h.home)
		r.Get("/domains.json", h.domainsJSON)
		r.Post("/domains/delete", h.deleteDomain)
		r.Route("/d/{domain}", func(r chi.Router) {
			r.Get("/", h.domainPage)
			r.Get("/branches.json", h.branchesJSON)
			r.Post("/branches", h.createBranch)
			r.Post("/branches/delete", h.deleteBranch)
			r.Get("/records", h.recordsPage)
			r.Get("/records/{key}", h.recordPage)
			r.Get("/graph", h.graphPage)
			r.Get("/neighborhood.json", h.neighborhoodJSON)
			r.Get("/search", h.searchPage)
			r.Get("/revisions", h.revisionsPage)
			r.Get("/revisions/{id}", h.revisionPage)
			r.Get("/schema", h.schemaPage)
			r.Get("/proposals", h.proposalsPage)
			r.Post("/proposals", h.openProposal)
			r.Get("/proposals/{id}", h.proposalPage)
			r.Post("/proposals/{id}/conflicts/{cid}", h.resolveConflict)
			r.Post("/proposals/{id}/merge", h.mergeProposal)
			r.Post("/proposals/{id}/close", h.closeProposal)
		})
	})
	return r
}

// securityHeaders forbids framing, sniffing and any script or style not
// served by Keeper itself.
func securityHeaders(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hd := w.Header()
		hd.Set("Content-Security-Policy", "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'; form-action 'self'")
		hd.Set("X-Content-Type-Options", "nosniff")
		hd.Set("Referrer-Policy", "same-origin")
		next.ServeHTTP(w, r)
	})
}

func cacheStatic(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Cache-Control", "public, max-age=300")
		next.ServeHTTP(w, r)
	})
}

type sessionKey struct{}

// session is the signed-in person: their token and who it is. On a GET the
// token's check (GET /v1/whoami) is pending until checkSession: a page
// runs it alongside its own API reads (fetch), which authenticate the
// token again anyway.
type session struct {
	token    string
	who      client.Whoami
	pending  bool
	checkErr error
}

// checkSession checks the session's token once (GET /v1/whoami, filling
// who) and returns the check's error.
func (h *Handler) checkSession(ctx context.Context, s *session) error {
	if s.pending {
		s.pending = false
		s.checkErr = h.api.get(ctx, s.token, "/v1/whoami", nil, &s.who)
	}
	return s.checkErr
}

func sessionFrom(ctx context.Context) *session {
	s, _ := ctx.Value(sessionKey{}).(*session)
	return s
}

// requireSession reads the session cookie; without one (or with a token
// the API no longer accepts) the person is sent to sign in and brought
// back afterwards. A form post's token is checked before its handler runs;
// a GET's when the page reads (fetch) or renders (checkSession).
func (h *Handler) requireSession(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		c, err := r.Cookie(sessionCookie)
		if err != nil || c.Value == "" {
			h.toSignIn(w, r, "")
			return
		}
		s := &session{token: c.Value, pending: true}
		if r.Method == http.MethodGet || r.Method == http.MethodHead {
			next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
			return
		}
		if err := h.checkSession(r.Context(), s); err != nil {
			if statusOf(err) == http.StatusUnauthorized {
				h.clearSession(w, r)
				h.toSignIn(w, r, "Your token is no longer accepted (revoked or expired). Sign in again.")
				return
			}
			h.renderError(w, r, nil, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), sessionKey{}, s)))
	})
}

// toSignIn redirects to the sign-in page, remembering where the person was
// going (GET only; a form post is not replayed).
func (h *Handler) toSignIn(w http.ResponseWriter, r *http.Request, why string) {
	q := url.Values{}
	if r.Method == http.MethodGet {
		q.Set("next", r.URL.RequestURI())
	}
	if why != "" {
		q.Set("why", why)
	}
	http.Redirect(w, r, "/signin?"+q.Encode(), http.StatusSeeOther)
}

// csrfToken is the CSRF token of a session: an HMAC of a fixed label keyed
// by the session's token. Forms carry it; a cross-site page cannot read it,
// and any Keeper can check it without shared state.
func csrfToken(token string) string {
	m := hmac.New(sha256.New, []byte(token))
	m.Write([]byte("lorebase web csrf v1"))
	return base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}

// checkCSRF refuses a state-changing form without the session's CSRF
// token (403, nothing sent to the API).
func (h *Handler) checkCSRF(w http.ResponseWriter, r *http.Request) bool {
	s := sessionFrom(r.Context())
	if err := r.ParseForm(); err != nil {
		h.renderError(w, r, nil, &apiError{Status: http.StatusBadRequest, Title: "Bad form", Detail: "The form could not be read: " + err.Error()})
		return false
	}
	got := r.PostForm.Get(csrfField)
	if s == nil || got == "" || subtle.ConstantTimeCompare([]byte(got), []byte(csrfToken(s.token))) != 1 {
		h.renderError(w, r, nil, &apiError{Status: http.StatusForbidden, Title: "Form expired",
			Detail: "This form did not carry a valid CSRF token, so nothing was changed. Reload the page and submit it again."})
		return false
	}
	return true
}

func (h *Handler) setSession(w http.ResponseWriter, r *http.Request, token string) {
	//nolint:gosec // G124: HttpOnly and SameSite=Strict always; Secure whenever the connection is TLS (or Options.SecureCookies)
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: token, Path: "/", HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.secure || r.TLS != nil})
}

func (h *Handler) clearSession(w http.ResponseWriter, r *http.Request) {
	//nolint:gosec // G124: as setSession
	http.SetCookie(w, &http.Cookie{Name: sessionCookie, Value: "", Path: "/", MaxAge: -1, HttpOnly: true,
		SameSite: http.SameSiteStrictMode, Secure: h.secure || r.TLS != nil})
}

// safeNext keeps a post-sign-in redirect on this site.
func safeNext(next string) string {
	if next == "" || !strings.HasPrefix(next, "/") || strings.HasPrefix(next, "//") || strings.HasPrefix(next, "/\\") {
		return "/"
	}
	return next
}

func (h *Handler) signInForm(w http.ResponseWriter, r *http.Request) {
	h.render(w, r, http.StatusOK, "signin", &view{Title: "Sign in", Data: signInData{
		Next: safeNext(r.URL.Query().Get("next")), Why: r.URL.Query().Get("why")}})
}

type signInData struct {
	Next, Why, Error string
}

// signIn checks the token against the API and keeps it in the session
// cookie. The sign-in form needs no CSRF token: it changes nothing but the
// browser's own cookie, and SameSite=Strict plus the token it must carry
// keep another site from signing a person in as someone else.
func (h *Handler) signIn(w http.ResponseWriter, r *http.Request) {
	if err := r.ParseForm(); err != nil {
		h.renderError(w, r, nil, &apiError{Status: http.StatusBadRequest, Title: "Bad form", Detail: err.Error()})
		return
	}
	token := strings.TrimSpace(r.PostForm.Get("token"))
	next := safeNext(r.PostForm.Get("next"))
	fail := func(msg string) {
		h.render(w, r, http.StatusUnauthorized, "signin", &view{Title: "Sign in", Data: signInData{Next: next, Error: msg}})
	}
	if token == "" {
		fail("Enter a token.")
		return
	}
	var who client.Whoami
	if err := h.api.get(r.Context(), token, "/v1/whoami", nil, &who); err != nil {
		if statusOf(err) == http.StatusUnauthorized {
			fail("This token is not valid: it may be mistyped, revoked or expired.")
			return
		}
		h.renderError(w, r, nil, err)
		return
	}
	h.setSession(w, r, token)
	http.Redirect(w, r, next, http.StatusSeeOther) //nolint:gosec // G710: safeNext keeps next on this site
}

// signOut clears the cookie. It needs the CSRF token like every form that
// changes state (a cross-site sign-out is a nuisance attack).
func (h *Handler) signOut(w http.ResponseWriter, r *http.Request) {
	c, err := r.Cookie(sessionCookie)
	if err != nil || c.Value == "" {
		http.Redirect(w, r, "/signin", http.StatusSeeOther)
		return
	}
	r = r.WithContext(context.WithValue(r.Context(), sessionKey{}, &session{token: c.Value}))
	if !h.checkCSRF(w, r) {
		return
	}
	h.clearSession(w, r)
	http.Redirect(w, r, "/signin?why="+url.QueryEscape("You are signed out."), http.StatusSeeOther)
}
