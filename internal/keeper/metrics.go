package keeper

import (
	"context"
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/lorebase/lorebase/store"
)

// metrics are one Server's Prometheus collectors, in a registry of its own
// (several Servers in one process, as in tests, do not collide).
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(s *store.Store) *metrics {
	m := &metrics{
		registry: prometheus.NewRegistry(),
		requests: prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace: "lorebase", Name: "http_requests_total",
			Help: "HTTP requests by method, route pattern and status.",
		}, []string{"method", "route", "status"}),
		duration: prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace: "lorebase", Name: "http_request_duration_seconds",
			Help:    "HTTP request durations by method, route pattern and status.",
			Buckets: []float64{.001, .0025, .005, .01, .025, .05, .1, .25, .5, 1, 2.5, 5, 10, 30},
		}, []string{"method", "route", "status"}),
	}
	m.registry.MustRegister(m.requests, m.duration,
		collectors.NewGoCollector(),
		collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	if s != nil {
		m.registry.MustRegister(newPoolCollector(s.Requests, "requests"), newPoolCollector(s.Pool, "owner"),
			&jobCollector{pool: s.Pool})
	}
	return m
}

// handler serves the registry.
func (m *metrics) handler() http.Handler {
	return promhttp.HandlerFor(m.registry, promhttp.HandlerOpts{})
}

// middleware counts and times every request by its route pattern (never
// the raw path: keys and branch names would explode the label space).
func (m *metrics) middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		ww := middleware.NewWrapResponseWriter(w, r.ProtoMajor)
		next.ServeHTTP(ww, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil {
			if p := rc.RoutePattern(); p != "" {
				route = p
			}
		}
		status := ww.Status()
		if status == 0 {
			status = http.StatusOK
		}
		labels := prometheus.Labels{"method": methodLabel(r.Method), "route": route, "status": strconv.Itoa(status)}
		m.requests.With(labels).Inc()
		m.duration.With(labels).Observe(time.Since(start).Seconds())
	})
}

// methodLabel bounds the method label to the methods the API knows.
func methodLabel(m string) string {
	switch m {
	case http.MethodGet, http.MethodHead, http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete, http.MethodOptions:
		return m
	}
	return "OTHER"
}

// poolCollector reports a connection pool's statistics when scraped,
// labeled with the pool's name (requests, owner).
type poolCollector struct {
	pool                                           *pgxpool.Pool
	total, idle, acquired, maxConns, waits, waited *prometheus.Desc
}

func newPoolCollector(pool *pgxpool.Pool, name string) *poolCollector {
	l := prometheus.Labels{"pool": name}
	return &poolCollector{
		pool:     pool,
		total:    prometheus.NewDesc("lorebase_db_pool_connections", "Connections in the pool.", nil, l),
		idle:     prometheus.NewDesc("lorebase_db_pool_idle_connections", "Idle connections in the pool.", nil, l),
		acquired: prometheus.NewDesc("lorebase_db_pool_acquired_connections", "Connections in use.", nil, l),
		maxConns: prometheus.NewDesc("lorebase_db_pool_max_connections", "The pool's maximum size.", nil, l),
		waits:    prometheus.NewDesc("lorebase_db_pool_empty_acquire_total", "Acquires that waited for a connection.", nil, l),
		waited:   prometheus.NewDesc("lorebase_db_pool_acquire_wait_seconds_total", "Time spent waiting for connections.", nil, l),
	}
}

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.total, c.idle, c.acquired, c.maxConns, c.waits, c.waited} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(c.total, prometheus.GaugeValue, float64(st.TotalConns()))
	ch <- prometheus.MustNewConstMetric(c.idle, prometheus.GaugeValue, float64(st.IdleConns()))
	ch <- prometheus.MustNewConstMetric(c.acquired, prometheus.GaugeValue, float64(st.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(c.maxConns, prometheus.GaugeValue, float64(st.MaxConns()))
	ch <- prometheus.MustNewConstMetric(c.waits, prometheus.CounterValue, float64(st.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(c.waited, prometheus.CounterValue, st.EmptyAcquireWaitTime().Seconds())
}

// jobsDesc counts River jobs by state: discarded jobs (attempts used up)
// are the ones a person must look at.
var jobsDesc = prometheus.NewDesc("lorebase_jobs", "Background jobs by kind and state (discarded: every attempt failed).", []string{"kind", "state"}, nil)

// jobCollector reads the job counts from river_job when scraped (owner's
// pool, bounded by a short timeout).
type jobCollector struct{ pool *pgxpool.Pool }

func (c *jobCollector) Describe(ch chan<- *prometheus.Desc) { ch <- jobsDesc }

func (c *jobCollector) Collect(ch chan<- prometheus.Metric) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	rows, err := c.pool.Query(ctx, `SELECT kind, state::text, count(*) FROM river_job
		WHERE state IN ('available', 'running', 'retryable', 'discarded', 'scheduled') GROUP BY 1, 2`)
	if err != nil {
		return
	}
	var kind, state string
	var n int64
	// A scrape that fails part way reports the rows read before the failure.
	_, _ = pgx.ForEachRow(rows, []any{&kind, &state, &n}, func() error {
		ch <- prometheus.MustNewConstMetric(jobsDesc, prometheus.GaugeValue, float64(n), kind, state)
		return nil
	})
}
