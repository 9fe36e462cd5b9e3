package keeper

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/hashicorp/golang-lru/v2/expirable"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
	"github.com/lorebase/lorebase/web"
)

// Server is Keeper's HTTP API over one store.
type Server struct {
	cfg       config.Config
	store     *store.Store
	commits   *commit.Pipeline
	reads     *reads.Reader
	log       *slog.Logger
	metrics   *metrics
	adminHash []byte // sha256 of the bootstrap admin token; nil when disabled
	// tokens caches resolved bearer tokens for auth.token_cache (nil:
	// every request looks its token up).
	tokens  *expirable.LRU[string, *store.Token]
	handler http.Handler
	// branchJobs queues branch copies and deletions, and Domain deletions,
	// in their transactions.
	branchJobs store.BranchJobs
	// merges computes diffs and merges and keeps Proposals.
	merges *merge.Engine
	// limits bound the work in flight per Domain and of large bodies.
	limits *limits
	// Agent interfaces (agents.go): the OpenAPI document, trace writer,
	// response cache, rate limits and the MCP endpoint.
	spec      []byte
	traces    *traceWriter
	cache     *responseCache
	rates     *rateLimits
	closeOnce sync.Once
}

// Parts are what a Server serves with; cmd/keeper builds them.
type Parts struct {
	Store    *store.Store
	Pipeline *commit.Pipeline
	Reader   *reads.Reader
	// Merges computes diffs and merges and keeps Proposals; nil runs every
	// merge in its request (no merge.proposal jobs).
	Merges *merge.Engine
	// Jobs queues branch copies and deletions in the request's transaction
	// (jobs.Queue of the process's River client); without it, creating a
	// copy branch and deleting a branch fail.
	Jobs store.BranchJobs
	// Log receives the server's log; nil logs nothing.
	Log *slog.Logger
}

// New returns a Server. cfg should have passed Validate.
func New(cfg config.Config, p Parts) *Server {
	log := p.Log
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	srv := &Server{cfg: cfg, store: p.Store, commits: p.Pipeline, reads: p.Reader, log: log,
		metrics: newMetrics(p.Store), branchJobs: p.Jobs,
		limits: newLimits(cfg.HTTP.DomainConcurrency, cfg.HTTP.BodyConcurrency)}
	if cfg.Auth.TokenCache > 0 {
		srv.tokens = expirable.NewLRU[string, *store.Token](10000, nil, cfg.Auth.TokenCache)
	}
	if cfg.AdminToken != "" {
		srv.adminHash = store.HashToken(cfg.AdminToken)
	}
	srv.merges = p.Merges
	if srv.merges == nil {
		srv.merges = merge.New(p.Store, p.Pipeline)
	}
	srv.initAgents()
	srv.handler = srv.routes()
	return srv
}

// Handler is the HTTP handler serving the whole API.
func (s *Server) Handler() http.Handler { return s.handler }

func (s *Server) routes() http.Handler {
	r := chi.NewRouter()
	r.Use(routeOnEscapedPath, middleware.RequestID, s.metrics.middleware, s.logRequests, s.recoverPanics)
	r.NotFound(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, Problem{Type: problemType("not-found"), Title: "Not found", Status: http.StatusNotFound,
			Detail: "No such route: " + r.Method + " " + quote(r.URL.EscapedPath()) + ". Branch names and keys holding / are escaped as %2F."})
	})
	r.MethodNotAllowed(func(w http.ResponseWriter, r *http.Request) {
		writeProblem(w, Problem{Type: problemType("method-not-allowed"), Title: "Method not allowed",
			Status: http.StatusMethodNotAllowed, Detail: r.Method + " is not allowed on this route."})
	})

	r.Get("/healthz", s.healthz)
	r.Get("/readyz", s.readyz)
	r.Method(http.MethodGet, "/metrics", s.metrics.handler())
	r.Get("/v1/openapi.json", s.openapi)
	r.Method(http.MethodPost, "/mcp", s.mcpHandler())

	// The browser UI reads and writes through this same router, as the
	// signed-in token: the API's grants are the UI's grants.
	r.Mount("/", web.New(web.Options{API: r, Log: s.log}))
	r.Route("/v1", func(r chi.Router) {
		r.Use(s.withDeadline, s.limitBodies, s.authenticate, s.rateLimit)
		r.Post("/domains", s.handle(s.createDomain))
		r.Get("/domains", s.handle(s.listDomains))
		r.Post("/tokens", s.handle(s.createToken))
		r.Get("/whoami", s.handle(s.getWhoami))
		r.Route("/domains/{domain}", func(r chi.Router) {
			r.Use(s.withDomain, s.traceRequests)
			r.Get("/", s.handle(s.showDomain))
			r.Delete("/", s.handle(s.deleteDomain))
			r.With(s.cachedRead).Get("/revisions/{id}", s.handle(s.getRevision))
			r.Get("/tokens", s.handle(s.listTokens))
			r.Delete("/tokens/{id}", s.handle(s.revokeToken))
			r.Get("/traces/{id}", s.handle(s.getTrace))
			r.Get("/branches", s.handle(s.listBranches))
			r.Post("/branches", s.handle(s.createBranch))
			r.Route("/branches/{branch}", func(r chi.Router) {
				r.Get("/", s.handle(s.showBranch))
				r.Delete("/", s.handle(s.deleteBranch))
				r.Get("/schema", s.handle(s.getSchema))
				r.Put("/schema", s.handle(s.putSchema))
				r.Post("/commits", s.handle(s.postCommit))
				r.With(s.cachedRead).Get("/records", s.handle(s.listRecords))
				r.With(s.cachedRead).Get("/records/{key}", s.handle(s.getRecord))
				r.With(s.cachedRead).Get("/records/{key}/links", s.handle(s.getLinks))
				r.With(s.cachedRead).Get("/records/{key}/neighborhood", s.handle(s.getNeighborhood))
				r.With(s.cachedRead).Get("/records/{key}/history", s.handle(s.getHistory))
				r.With(s.cachedRead).Get("/records/{key}/lineage", s.handle(s.getLineage))
				r.With(s.cachedRead).Get("/search", s.handle(s.search))
				r.With(s.cachedRead).Get("/resolve", s.handle(s.resolve))
				r.With(s.cachedRead).Get("/revisions", s.handle(s.listRevisions))
				r.Get("/diff", s.handle(s.branchDiff))
				r.Post("/merges", s.handle(s.postMerge))
			})
			r.Post("/proposals", s.handle(s.openProposal))
			r.Get("/proposals", s.handle(s.listProposals))
			r.Route("/proposals/{proposal}", func(r chi.Router) {
				r.Get("/", s.handle(s.showProposal))
				r.Get("/diff", s.handle(s.proposalDiff))
				r.Get("/conflicts", s.handle(s.proposalConflicts))
				r.Put("/conflicts/{conflict}/resolution", s.handle(s.resolveConflict))
				r.Delete("/conflicts/{conflict}/resolution", s.handle(s.clearResolution))
				r.Post("/merge", s.handle(s.mergeProposal))
				r.Post("/close", s.handle(s.closeProposal))
			})
		})
	})
	return r
}

// handlerFunc is a handler that reports failure as an error.
type handlerFunc func(w http.ResponseWriter, r *http.Request) error

// handle adapts a handlerFunc: its error becomes a problem document.
func (s *Server) handle(h handlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if err := h(w, r); err != nil {
			s.writeError(w, r, err)
		}
	}
}

// routeOnEscapedPath makes chi route on the escaped path, so an escaped
// "/" (%2F) in a branch name or key stays within its path segment.
// pathParam unescapes each parameter.
func routeOnEscapedPath(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePath == "" {
			rc.RoutePath = r.URL.EscapedPath()
		}
		next.ServeHTTP(w, r)
	})
}

// logRequests logs every request, with its request id, as JSON.
func (s *Server) logRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := ""
		if rc := chi.RouteContext(r.Context()); rc != nil {
			route = rc.RoutePattern()
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		s.log.LogAttrs(r.Context(), slog.LevelInfo, "request",
			slog.String("request_id", middleware.GetReqID(r.Context())),
			slog.String("method", r.Method), slog.String("route", route),
			slog.String("path", r.URL.EscapedPath()), slog.Int("status", status),
			slog.Int("bytes", ww.BytesWritten()),
			slog.Float64("duration_ms", float64(time.Since(start).Microseconds())/1000))
	})
}

// recoverPanics turns a panic into a logged 500.
func (s *Server) recoverPanics(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.writeError(w, r, fmt.Errorf("panic: %v", v))
			}
		}()
		next.ServeHTTP(w, r)
	})
}

// Run listens on cfg.Listen and serves until ctx ends, then shuts down
// gracefully within http.shutdown_timeout.
func (s *Server) Run(ctx context.Context) error {
	ln, err := net.Listen("tcp", s.cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", s.cfg.Listen, err)
	}
	return s.Serve(ctx, ln)
}

// Serve serves on ln until ctx ends, then shuts down gracefully: new
// connections are refused and requests in flight finish (within
// http.shutdown_timeout).
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	hs := &http.Server{
		Handler:           s.handler,
		ReadHeaderTimeout: 10 * time.Second,
		ReadTimeout:       s.cfg.HTTP.ReadTimeout,
		WriteTimeout:      s.cfg.HTTP.WriteTimeout,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    64 << 10,
		ErrorLog:          slog.NewLogLogger(s.log.Handler(), slog.LevelWarn),
		BaseContext:       func(net.Listener) context.Context { return context.WithoutCancel(ctx) },
	}
	defer s.Close()
	errc := make(chan error, 1)
	go func() { errc <- hs.Serve(ln) }()
	s.log.Info("keeper listening", slog.String("addr", ln.Addr().String()))
	select {
	case err := <-errc:
		return fmt.Errorf("serve: %w", err)
	case <-ctx.Done():
	}
	s.log.Info("keeper shutting down")
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.HTTP.ShutdownTimeout)
	defer cancel()
	if err := hs.Shutdown(sctx); err != nil {
		return fmt.Errorf("shut down: %w", err)
	}
	if err := <-errc; err != nil && !errors.Is(err, http.ErrServerClosed) {
		return fmt.Errorf("serve: %w", err)
	}
	return nil
}
