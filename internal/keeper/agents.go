package keeper

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/go-chi/chi/v5"

	"github.com/lorebase/lorebase/internal/agentmcp"
	"github.com/lorebase/lorebase/internal/apispec"
	"github.com/lorebase/lorebase/store"
)

// initAgents sets up what agents use beside the handlers: the OpenAPI
// document, the trace writer, the response cache and the rate limits.
func (s *Server) initAgents() {
	spec, err := apispec.JSON()
	if err != nil {
		// The document is embedded and checked by tests; this cannot
		// happen in a released build.
		s.log.Error("OpenAPI document unavailable", "error", err.Error())
	}
	s.spec = spec
	s.traces = newTraceWriter(s.store.Pool, s.cfg.HTTP.TraceQueue, s.log, s.metrics.registry)
	s.cache = newResponseCache(s.cfg.HTTP.CacheMaxBytes, s.metrics.registry)
	s.rates = newRateLimits(s.cfg.HTTP.RateLimit, s.metrics.registry)
}

// Close stops the trace writer after writing the steps it holds. Serve
// calls it on shutdown; it is safe to call more than once.
func (s *Server) Close() {
	s.closeOnce.Do(func() {
		if s.traces != nil {
			s.traces.close()
		}
	})
}

// openapi: GET /v1/openapi.json, the OpenAPI 3.1 document of the API.
func (s *Server) openapi(w http.ResponseWriter, r *http.Request) {
	if s.spec == nil {
		writeProblem(w, Problem{Type: problemType("internal"), Title: "Internal server error", Status: http.StatusInternalServerError,
			Detail: "The OpenAPI document is unavailable."})
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Cache-Control", "public, max-age=300")
	_, _ = w.Write(s.spec)
}

// mcpHandler serves /mcp: the bearer token is checked here (401 and 403
// as for the API); each tool then calls the API router in-process with the
// same token, where grants, rate limits and traces apply call by call.
func (s *Server) mcpHandler() http.Handler {
	h := agentmcp.New(agentmcp.Options{
		API: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			// The tool's request starts routing afresh: the /mcp request's
			// route, principal and Domain are not carried into it.
			ctx := context.WithValue(r.Context(), chi.RouteCtxKey, (*chi.Context)(nil))
			ctx = context.WithValue(ctx, principalKey, (*principal)(nil))
			ctx = context.WithValue(ctx, domainKey, (*store.Domain)(nil))
			s.handler.ServeHTTP(w, r.WithContext(ctx))
		}),
		Domain:       s.mcpDomain,
		MaxBodyBytes: s.cfg.HTTP.MaxBodyBytes,
		Logger:       s.log,
	})
	return s.authenticate(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if principalFrom(r.Context()).bootstrap {
			s.writeError(w, r, errForbidden("MCP works inside one Domain: use a token of a Domain, not the bootstrap admin token."))
			return
		}
		// The message is read here, bounded, so an oversized one is a
		// problem document like any other.
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.HTTP.MaxBodyBytes))
		if err != nil {
			var mbe *http.MaxBytesError
			if errors.As(err, &mbe) {
				s.writeError(w, r, err)
				return
			}
			s.writeError(w, r, badRequest("body", "unreadable", "The request body could not be read."))
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		h.ServeHTTP(w, r)
	}))
}

// mcpDomain names the Domain of an Authorization header for the MCP tools.
func (s *Server) mcpDomain(ctx context.Context, authorization string) (string, error) {
	r, err := http.NewRequestWithContext(ctx, http.MethodGet, "/", nil)
	if err != nil {
		return "", fmt.Errorf("build request: %w", err)
	}
	r.Header.Set("Authorization", authorization)
	p, err := s.principal(r)
	if err != nil {
		return "", err
	}
	if p.bootstrap {
		return "", agentmcp.ErrNoDomain
	}
	return p.token.Domain, nil
}
