package keeper

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/store"
)

type createDomainRequest struct {
	Name string `json:"name"`
}

// createDomain: POST /v1/domains (bootstrap admin only).
func (s *Server) createDomain(w http.ResponseWriter, r *http.Request) error {
	if err := requireBootstrap(r); err != nil {
		return err
	}
	if err := checkQuery(r); err != nil {
		return err
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var req createDomainRequest
	if err := decodeJSON(body, &req); err != nil {
		return err
	}
	if !validDomainName(req.Name) {
		return badRequest("name", "invalid_name",
			fmt.Sprintf("%s is not a Domain name: a letter or digit, then letters, digits, . _ or - (at most 63).", quote(req.Name)))
	}
	d, err := s.store.CreateDomain(r.Context(), req.Name)
	if errors.Is(err, store.ErrConflict) {
		return newProblem(http.StatusConflict, "conflict", "Conflict", "A Domain named "+quote(req.Name)+" exists already.")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, d)
	return nil
}

// listDomains: GET /v1/domains?deleting= (bootstrap admin only): every
// Domain by name with its state; deleting=true adds those being deleted,
// each with its deletion's progress and job.
func (s *Server) listDomains(w http.ResponseWriter, r *http.Request) error {
	if err := requireBootstrap(r); err != nil {
		return err
	}
	if err := checkQuery(r, "deleting"); err != nil {
		return err
	}
	deleting := false
	switch v := r.URL.Query().Get("deleting"); v {
	case "", "false":
	case "true":
		deleting = true
	default:
		return badRequest("deleting", "invalid", "deleting must be true or false.")
	}
	ds, err := s.store.DomainStatuses(r.Context(), deleting)
	if err != nil {
		return err
	}
	if ds == nil {
		ds = []store.DomainStatus{}
	}
	writeJSON(w, http.StatusOK, map[string]any{"domains": ds})
	return nil
}

// showDomain: GET /v1/domains/{domain}.
func (s *Server) showDomain(w http.ResponseWriter, r *http.Request) error {
	if err := checkQuery(r); err != nil {
		return err
	}
	d, err := s.store.DomainByName(r.Context(), domainFrom(r.Context()).Name)
	if errors.Is(err, store.ErrNotFound) {
		return errDomainNotFound(domainFrom(r.Context()).Name)
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusOK, d)
	return nil
}

// deleteDomain: DELETE /v1/domains/{domain} (bootstrap admin only) → 202:
// the Domain is gone for every request at once and its tokens are revoked;
// the store.domain_delete job removes its rows, indexes and Revision-number
// sequence, then the Domain (its name is free again once it has).
func (s *Server) deleteDomain(w http.ResponseWriter, r *http.Request) error {
	if err := requireBootstrap(r); err != nil {
		return err
	}
	if err := checkQuery(r); err != nil {
		return err
	}
	d := domainFrom(r.Context())
	name := d.Name
	if s.branchJobs.DeleteDomain == nil {
		return fmt.Errorf("delete domain %s: no job queue configured", quote(name))
	}
	_, err := s.store.DeleteDomain(r.Context(), name, s.branchJobs.DeleteDomain)
	if errors.Is(err, store.ErrNotFound) {
		return errDomainNotFound(name)
	}
	if err != nil {
		return err
	}
	// The store revoked the Domain's tokens; this Keeper forgets them now
	// rather than when its cache expires them.
	s.forgetDomainTokens(d.ID)
	writeJSON(w, http.StatusAccepted, map[string]string{"name": name, "state": "deleting"})
	return nil
}

type createTokenRequest struct {
	Name     string   `json:"name"`
	Domain   string   `json:"domain"`
	Role     string   `json:"role"`
	Branches []string `json:"branches"`
	// ExpiresIn is the token's lifetime: seconds (a number) or a duration
	// ("24h", "90m"); absent, it never expires.
	ExpiresIn json.RawMessage `json:"expires_in,omitempty"`
	expiresIn time.Duration
}

type createTokenResponse struct {
	Token     string     `json:"token"`
	ID        string     `json:"id"`
	Name      string     `json:"name"`
	Domain    string     `json:"domain"`
	Role      string     `json:"role"`
	Branches  []string   `json:"branches"`
	CreatedAt time.Time  `json:"created_at"`
	ExpiresAt *time.Time `json:"expires_at"`
}

// createToken: POST /v1/tokens. The bootstrap admin mints tokens for any
// Domain, a Domain's admin for its own; the secret is shown this once.
func (s *Server) createToken(w http.ResponseWriter, r *http.Request) error {
	p := principalFrom(r.Context())
	if !p.isAdmin() {
		return errForbidden("Only an admin token may mint tokens.")
	}
	if err := checkQuery(r); err != nil {
		return err
	}
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	var req createTokenRequest
	if err := decodeJSON(body, &req); err != nil {
		return err
	}
	if err := checkTokenRequest(&req); err != nil {
		return err
	}
	if !p.bootstrap && req.Domain != p.token.Domain {
		return errDomainNotFound(req.Domain)
	}
	if !validDomainName(req.Domain) {
		return errDomainNotFound(req.Domain)
	}
	d, err := s.store.DomainByName(r.Context(), req.Domain)
	if errors.Is(err, store.ErrNotFound) {
		return errDomainNotFound(req.Domain)
	}
	if err != nil {
		return err
	}
	var expiresAt *time.Time
	if req.expiresIn > 0 {
		at := time.Now().Add(req.expiresIn).UTC().Truncate(time.Microsecond)
		expiresAt = &at
	}
	secret, t, err := s.store.CreateToken(r.Context(), d.ID, req.Name, req.Role, req.Branches, expiresAt)
	if errors.Is(err, store.ErrConflict) {
		return newProblem(http.StatusConflict, "conflict", "Conflict",
			"A token named "+quote(req.Name)+" exists already in the Domain "+quote(req.Domain)+".")
	}
	if err != nil {
		return err
	}
	writeJSON(w, http.StatusCreated, createTokenResponse{
		Token: secret, ID: t.ID, Name: t.Name, Domain: t.Domain, Role: t.Role, Branches: t.Branches, CreatedAt: t.CreatedAt,
		ExpiresAt: t.ExpiresAt,
	})
	return nil
}

// checkTokenRequest validates a token request and fills in the default
// branches (every branch).
func checkTokenRequest(req *createTokenRequest) error {
	var problems []store.Problem
	add := func(field, code, msg string) {
		problems = append(problems, store.Problem{Field: field, Code: code, Message: msg})
	}
	switch n := utf8.RuneCountInString(req.Name); {
	case n == 0 || n > 100:
		add("name", "invalid_name", "name must be 1 to 100 characters.")
	case !utf8.ValidString(req.Name):
		add("name", "invalid_name", "name must be valid UTF-8.")
	default:
		for _, r := range req.Name {
			if unicode.IsControl(r) {
				add("name", "invalid_name", "name must not contain control characters.")
				break
			}
		}
	}
	if req.Domain == "" {
		add("domain", "required", "domain is required: the Domain the token is for.")
	}
	switch req.Role {
	case RoleReader, RoleWriter, RoleAdmin:
	default:
		add("role", "invalid_role", fmt.Sprintf("role must be reader, writer or admin; got %s.", quote(req.Role)))
	}
	if req.Branches == nil {
		req.Branches = []string{"*"}
	}
	if len(req.Branches) == 0 || len(req.Branches) > 100 {
		add("branches", "invalid_branches", "branches must hold 1 to 100 patterns (omit it for every branch).")
	}
	for i, b := range req.Branches {
		if !patternRE.MatchString(b) {
			add(fmt.Sprintf("branches[%d]", i), "invalid_pattern",
				fmt.Sprintf("%s is not a branch pattern: branch-name characters (letters, digits, . _ / -) and *, at most 128.", quote(b)))
		}
	}
	if len(req.ExpiresIn) > 0 && string(req.ExpiresIn) != "null" {
		d, err := parseExpiresIn(req.ExpiresIn)
		if err != nil {
			add("expires_in", "invalid_expires_in", err.Error())
		}
		req.expiresIn = d
	}
	if len(problems) > 0 {
		return lberr.Fields(lberr.Invalid, "Invalid token request", problems...)
	}
	return nil
}
