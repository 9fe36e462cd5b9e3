package keeper

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"

	"github.com/lorebase/lorebase/store"
)

// maxTokenLifetime bounds expires_in.
const maxTokenLifetime = 10 * 365 * 24 * time.Hour

// parseExpiresIn reads expires_in: a positive number of seconds or a Go
// duration string.
func parseExpiresIn(raw json.RawMessage) (time.Duration, error) {
	var d time.Duration
	var secs float64
	var text string
	switch {
	case json.Unmarshal(raw, &secs) == nil:
		d = time.Duration(secs * float64(time.Second))
	case json.Unmarshal(raw, &text) == nil:
		var err error
		if d, err = time.ParseDuration(text); err != nil {
			return 0, fmt.Errorf("expires_in %s is not a duration: give seconds (3600) or a duration (\"24h\", \"90m\")", quote(text))
		}
	default:
		return 0, errors.New("expires_in must be seconds (3600) or a duration (\"24h\", \"90m\")")
	}
	if d < time.Second || d > maxTokenLifetime {
		return 0, fmt.Errorf("expires_in must be between 1 second and %d days", int(maxTokenLifetime/(24*time.Hour)))
	}
	return d, nil
}

type tokenPage struct {
	Tokens []store.Token `json:"tokens"`
	Next   string        `json:"next,omitempty"`
}

// listTokens: GET /v1/domains/{domain}/tokens?limit=&after=ID (admin): the
// Domain's tokens by id, revoked and expired ones included, never a secret.
func (s *Server) listTokens(w http.ResponseWriter, r *http.Request) error {
	if !principalFrom(r.Context()).isAdmin() {
		return errForbidden("Only an admin token may list tokens.")
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
	ts, err := s.store.Tokens(r.Context(), domainFrom(r.Context()).ID, after, limit+1)
	if err != nil {
		return err
	}
	var page tokenPage
	page.Tokens, page.Next = keysetPage(ts, limit, func(t store.Token) string { return t.ID })
	writeJSON(w, http.StatusOK, page)
	return nil
}

// revokeToken: DELETE /v1/domains/{domain}/tokens/{id} (admin) → 200 with
// the revoked token. This Keeper refuses it at once; others within
// auth.token_cache_ms. Revoking twice changes nothing.
func (s *Server) revokeToken(w http.ResponseWriter, r *http.Request) error {
	if !principalFrom(r.Context()).isAdmin() {
		return errForbidden("Only an admin token may revoke tokens.")
	}
	if err := checkQuery(r); err != nil {
		return err
	}
	id, err := pathParam(r, "id")
	if err != nil {
		return err
	}
	if len(id) > 64 || !printableASCII(id) {
		return newProblem(http.StatusNotFound, "not-found", "Not found", "No token with id "+quote(id)+".")
	}
	t, err := s.store.RevokeToken(r.Context(), domainFrom(r.Context()).ID, id, false)
	if errors.Is(err, store.ErrNotFound) {
		return newProblem(http.StatusNotFound, "not-found", "Not found", "No token with id "+quote(id)+".")
	}
	if err != nil {
		return err
	}
	s.forgetToken(t.ID)
	writeJSON(w, http.StatusOK, t)
	return nil
}

// forgetToken drops a token from this Keeper's cache.
func (s *Server) forgetToken(id string) {
	s.forgetTokens(func(t *store.Token) bool { return t.ID == id })
}

// forgetDomainTokens drops every token of a Domain from this Keeper's cache.
func (s *Server) forgetDomainTokens(domainID int32) {
	s.forgetTokens(func(t *store.Token) bool { return t.DomainID == domainID })
}

// forgetTokens drops the cached tokens that match.
func (s *Server) forgetTokens(match func(*store.Token) bool) {
	if s.tokens == nil {
		return
	}
	for _, k := range s.tokens.Keys() {
		if t, ok := s.tokens.Peek(k); ok && match(t) {
			s.tokens.Remove(k)
		}
	}
}
