package keeper

import (
	"context"
	"crypto/subtle"
	"errors"
	"net/http"
	"strings"
	"time"

	"github.com/lorebase/lorebase/store"
)

// Roles a token may have.
const (
	RoleReader = "reader"
	RoleWriter = "writer"
	RoleAdmin  = "admin"
)

// principal is who a request acts for: the bootstrap admin, or a token of
// one Domain.
type principal struct {
	bootstrap bool
	token     *store.Token
}

// name is what a change made by the principal is attributed to by default.
func (p *principal) name() string {
	if p.bootstrap {
		return "admin"
	}
	return p.token.Name
}

// scope is whose Idempotency-Keys the principal's are: its token's id, or
// "admin" for the bootstrap admin (token ids are ULIDs, never "admin").
func (p *principal) scope() string {
	if p.bootstrap {
		return "admin"
	}
	return p.token.ID
}

// canWrite reports whether the principal may commit to a branch.
func (p *principal) canWrite(branch string) bool {
	if p.bootstrap || p.token.Role == RoleAdmin {
		return true
	}
	if p.token.Role != RoleWriter {
		return false
	}
	for _, pat := range p.token.Branches {
		if matchPattern(pat, branch) {
			return true
		}
	}
	return false
}

// isAdmin reports whether the principal administers its Domain.
func (p *principal) isAdmin() bool { return p.bootstrap || p.token.Role == RoleAdmin }

type ctxKey int

const (
	principalKey ctxKey = iota
	domainKey
)

func principalFrom(ctx context.Context) *principal {
	p, _ := ctx.Value(principalKey).(*principal)
	return p
}

func domainFrom(ctx context.Context) *store.Domain {
	d, _ := ctx.Value(domainKey).(*store.Domain)
	return d
}

// authenticate resolves the bearer token: 401 when missing or unknown.
func (s *Server) authenticate(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p, err := s.principal(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), principalKey, p)))
	})
}

func (s *Server) principal(r *http.Request) (*principal, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		return nil, errUnauthorized("Send a token as Authorization: Bearer <token>.")
	}
	scheme, secret, ok := strings.Cut(h, " ")
	secret = strings.TrimSpace(secret)
	if !ok || !strings.EqualFold(scheme, "Bearer") || secret == "" {
		return nil, errUnauthorized("The Authorization header must be Bearer <token>.")
	}
	// Hashed once: the admin check, the cache key (never the secret
	// itself) and the stored form are all this hash.
	sum := store.HashToken(secret)
	if s.adminHash != nil && subtle.ConstantTimeCompare(sum, s.adminHash) == 1 {
		return &principal{bootstrap: true}, nil
	}
	if len(secret) > 200 {
		return nil, errUnauthorized("The token is not valid.")
	}
	// Only tokens that exist are cached, so a new token works at once.
	cacheKey := string(sum)
	if s.tokens != nil {
		if t, ok := s.tokens.Get(cacheKey); ok {
			return tokenPrincipal(t)
		}
	}
	t, err := s.store.TokenByHash(r.Context(), sum)
	if errors.Is(err, store.ErrNotFound) {
		return nil, errUnauthorized("The token is not valid.")
	}
	if err != nil {
		return nil, err
	}
	if s.tokens != nil && t.RevokedAt == nil {
		s.tokens.Add(cacheKey, t)
	}
	return tokenPrincipal(t)
}

// tokenPrincipal refuses a revoked or expired token.
func tokenPrincipal(t *store.Token) (*principal, error) {
	switch {
	case t.RevokedAt != nil:
		return nil, errUnauthorized("The token was revoked.")
	case !t.Valid(time.Now()):
		return nil, errUnauthorized("The token has expired.")
	}
	return &principal{token: t}, nil
}

// requireBootstrap lets only the bootstrap admin through (403 otherwise).
func requireBootstrap(r *http.Request) error {
	if !principalFrom(r.Context()).bootstrap {
		return errForbidden("Only the bootstrap admin (admin_token) may do this.")
	}
	return nil
}

// withDomain resolves the {domain} path parameter and checks that the
// principal may see it. A Domain of another token's tenant answers exactly
// like a missing one (404), so tokens learn nothing about other Domains.
func (s *Server) withDomain(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name, err := pathParam(r, "domain")
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		p := principalFrom(r.Context())
		if !validDomainName(name) {
			s.writeError(w, r, errDomainNotFound(name))
			return
		}
		if !p.bootstrap {
			// A token names its Domain: no lookup needed, and no way to
			// learn whether another Domain exists.
			if p.token.Domain != name {
				s.writeError(w, r, errDomainNotFound(name))
				return
			}
			d := &store.Domain{ID: p.token.DomainID, Name: p.token.Domain}
			s.limitDomain(w, r.WithContext(context.WithValue(r.Context(), domainKey, d)), d.ID, next)
			return
		}
		d, err := s.store.DomainByName(r.Context(), name)
		if errors.Is(err, store.ErrNotFound) {
			s.writeError(w, r, errDomainNotFound(name))
			return
		}
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		s.limitDomain(w, r.WithContext(context.WithValue(r.Context(), domainKey, d)), d.ID, next)
	})
}
