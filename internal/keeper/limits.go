package keeper

import (
	"context"
	"net/http"
	"strconv"
	"sync"
	"time"
)

// largeBody is the body size from which a request takes a turn of
// http.body_concurrency (a body of unknown length takes one too).
const largeBody = 1 << 20

// retryAfter is what a 503 for a full limit asks the client to wait.
const retryAfter = time.Second

// limits are the server's bounds on work in flight: per Domain, and for
// large bodies. They live in the Server, never in package state.
type limits struct {
	perDomain int
	mu        sync.Mutex
	domains   map[int32]int // requests in flight per Domain
	bodies    chan struct{}
}

func newLimits(perDomain, bodies int) *limits {
	return &limits{perDomain: perDomain, domains: map[int32]int{}, bodies: make(chan struct{}, bodies)}
}

// enterDomain takes a slot of the Domain, or reports false when all
// http.domain_concurrency slots are taken (never waits).
func (l *limits) enterDomain(id int32) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.domains[id] >= l.perDomain {
		return false
	}
	l.domains[id]++
	return true
}

func (l *limits) leaveDomain(id int32) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.domains[id] <= 1 {
		delete(l.domains, id)
		return
	}
	l.domains[id]--
}

// errBusy is the 503 for a full limit, with Retry-After.
func errBusy(detail string) error {
	return newProblem(http.StatusServiceUnavailable, "busy", "Service unavailable", detail)
}

// withDeadline gives every request the deadline http.request_timeout: the
// database work it starts is canceled when it passes (answered 503).
func (s *Server) withDeadline(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.HTTP.RequestTimeout)
		defer cancel()
		next.ServeHTTP(w, r.WithContext(ctx))
	})
}

// limitBodies makes a request with a large body (or one of unknown length)
// wait for one of http.body_concurrency turns, within its deadline, before
// it is read: many large bodies at once cannot exhaust memory.
func (s *Server) limitBodies(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Body == nil || r.Body == http.NoBody || (r.ContentLength >= 0 && r.ContentLength <= largeBody) {
			next.ServeHTTP(w, r)
			return
		}
		select {
		case s.limits.bodies <- struct{}{}:
		case <-r.Context().Done():
			w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
			s.writeError(w, r, errBusy("Too many large request bodies are being read at once (http.body_concurrency); retry shortly."))
			return
		}
		defer func() { <-s.limits.bodies }()
		next.ServeHTTP(w, r)
	})
}

// limitDomain bounds the requests of one Domain in flight
// (http.domain_concurrency): past it, 503 with Retry-After at once, so one
// tenant cannot take every connection and no request hangs waiting.
func (s *Server) limitDomain(w http.ResponseWriter, r *http.Request, id int32, next http.Handler) {
	if !s.limits.enterDomain(id) {
		w.Header().Set("Retry-After", strconv.Itoa(int(retryAfter/time.Second)))
		s.writeError(w, r, errBusy("This Domain has too many requests in flight (http.domain_concurrency); retry shortly."))
		return
	}
	defer s.limits.leaveDomain(id)
	next.ServeHTTP(w, r)
}
