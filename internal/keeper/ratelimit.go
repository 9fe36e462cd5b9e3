package keeper

import (
	"math"
	"net/http"
	"strings"
	"time"

	"github.com/go-chi/httprate"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lorebase/lorebase/internal/config"
)

// rateLimits are the per-token limits of one Keeper: a general class and
// a tighter one for the expensive calls (search, neighborhoods, merges).
// Limits are per instance: N Keepers behind a balancer allow N times as
// much.
type rateLimits struct {
	general *httprate.RateLimiter // nil: off
	heavy   *httprate.RateLimiter // nil: off
	limited *prometheus.CounterVec
}

// newLimiter makes a limiter allowing burst requests per window of
// burst/rps seconds (at least one second): rps on average, burst at once.
// rps 0 turns it off.
func newLimiter(rps, burst int, onLimit http.HandlerFunc) *httprate.RateLimiter {
	if rps <= 0 {
		return nil
	}
	if burst < rps {
		burst = rps
	}
	window := time.Duration(math.Ceil(float64(burst)/float64(rps))) * time.Second
	limit := max(burst, rps*int(window/time.Second))
	return httprate.NewRateLimiter(limit, window, httprate.WithLimitHandler(onLimit))
}

func newRateLimits(c config.RateLimit, reg prometheus.Registerer) *rateLimits {
	rl := &rateLimits{limited: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lorebase", Name: "rate_limited_total", Help: "Requests refused with 429, by limit class.",
	}, []string{"class"})}
	reg.MustRegister(rl.limited)
	onLimit := func(class string) http.HandlerFunc {
		return func(w http.ResponseWriter, r *http.Request) {
			rl.limited.WithLabelValues(class).Inc()
			retry := w.Header().Get("Retry-After")
			if retry == "" || retry == "0" {
				w.Header().Set("Retry-After", "1")
				retry = "1"
			}
			writeProblem(w, Problem{Type: problemType("rate-limited"), Title: "Too many requests", Status: http.StatusTooManyRequests,
				Detail: "This token has spent its rate limit (" + class + " requests); retry after " + retry + " s."})
		}
	}
	for _, class := range []string{"general", "search, neighborhood and merge"} {
		rl.limited.WithLabelValues(class)
	}
	rl.general = newLimiter(c.RequestsPerSecond, c.Burst, onLimit("general"))
	rl.heavy = newLimiter(c.HeavyRequestsPerSecond, c.HeavyBurst, onLimit("search, neighborhood and merge"))
	return rl
}

// heavyRoute reports whether an escaped path is a search, a neighborhood
// or a merge.
func heavyRoute(method, escapedPath string) bool {
	segs := strings.Split(strings.Trim(escapedPath, "/"), "/")
	n := len(segs)
	if n < 3 {
		return false
	}
	last, parent := segs[n-1], segs[n-3]
	switch {
	case method == http.MethodGet && last == "search" && parent == "branches":
		return true
	case method == http.MethodGet && last == "neighborhood" && parent == "records":
		return true
	case method == http.MethodPost && last == "merges" && parent == "branches":
		return true
	case method == http.MethodPost && last == "merge" && parent == "proposals":
		return true
	}
	return false
}

// rateLimit applies the token's limits; it runs after authentication.
func (s *Server) rateLimit(next http.Handler) http.Handler {
	if s.rates.general == nil && s.rates.heavy == nil {
		return next
	}
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p := principalFrom(r.Context())
		key := "bootstrap"
		if p != nil && !p.bootstrap {
			key = itoa(int(p.token.DomainID)) + ":" + p.token.ID
		}
		if s.rates.general != nil && s.rates.general.RespondOnLimit(w, r, key) {
			return
		}
		if s.rates.heavy != nil && heavyRoute(r.Method, r.URL.EscapedPath()) && s.rates.heavy.RespondOnLimit(w, r, key) {
			return
		}
		next.ServeHTTP(w, r)
	})
}
