package keeper

import (
	"net/http"
	"strconv"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"
)

// metrics are one Server's Prometheus collectors, in a registry of its own
// (several Servers in one process, as in tests, do not collide).
type metrics struct {
	registry *prometheus.Registry
	requests *prometheus.CounterVec
	duration *prometheus.HistogramVec
}

func newMetrics(pool *pgxpool.Pool) *metrics {
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
	if pool != nil {
		m.registry.MustRegister(&poolCollector{pool: pool})
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

// poolCollector reports the connection pool's statistics when scraped.
type poolCollector struct{ pool *pgxpool.Pool }

var (
	poolTotalDesc    = prometheus.NewDesc("lorebase_db_pool_connections", "Connections in the pool.", nil, nil)
	poolIdleDesc     = prometheus.NewDesc("lorebase_db_pool_idle_connections", "Idle connections in the pool.", nil, nil)
	poolAcquiredDesc = prometheus.NewDesc("lorebase_db_pool_acquired_connections", "Connections in use.", nil, nil)
	poolMaxDesc      = prometheus.NewDesc("lorebase_db_pool_max_connections", "The pool's maximum size.", nil, nil)
	poolWaitsDesc    = prometheus.NewDesc("lorebase_db_pool_empty_acquire_total", "Acquires that waited for a connection.", nil, nil)
	poolWaitDesc     = prometheus.NewDesc("lorebase_db_pool_acquire_wait_seconds_total", "Time spent waiting for connections.", nil, nil)
)

func (c *poolCollector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{poolTotalDesc, poolIdleDesc, poolAcquiredDesc, poolMaxDesc, poolWaitsDesc, poolWaitDesc} {
		ch <- d
	}
}

func (c *poolCollector) Collect(ch chan<- prometheus.Metric) {
	st := c.pool.Stat()
	ch <- prometheus.MustNewConstMetric(poolTotalDesc, prometheus.GaugeValue, float64(st.TotalConns()))
	ch <- prometheus.MustNewConstMetric(poolIdleDesc, prometheus.GaugeValue, float64(st.IdleConns()))
	ch <- prometheus.MustNewConstMetric(poolAcquiredDesc, prometheus.GaugeValue, float64(st.AcquiredConns()))
	ch <- prometheus.MustNewConstMetric(poolMaxDesc, prometheus.GaugeValue, float64(st.MaxConns()))
	ch <- prometheus.MustNewConstMetric(poolWaitsDesc, prometheus.CounterValue, float64(st.EmptyAcquireCount()))
	ch <- prometheus.MustNewConstMetric(poolWaitDesc, prometheus.CounterValue, st.EmptyAcquireWaitTime().Seconds())
}
