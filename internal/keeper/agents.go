package keeper

import (
	"net/http"

	"github.com/lorebase/lorebase/internal/apispec"
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
	s.limits = newRateLimits(s.cfg.HTTP.RateLimit, s, s.metrics.registry)
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

// mcpHandler serves /mcp (mcp.go).
func (s *Server) mcpHandler() http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, Problem{Type: problemType("not-found"), Title: "Not found", Status: http.StatusNotFound, Detail: "MCP is not built yet."})
	})
}
