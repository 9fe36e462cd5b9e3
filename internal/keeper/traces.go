package keeper

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/go-chi/chi/v5"
	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/prometheus/client_golang/prometheus"
)

// TraceHeader names the agent trace a request is a step of.
const TraceHeader = "X-Lorebase-Trace"

// maxTraceID bounds a trace id.
const maxTraceID = 128

// traceStep is one request recorded under a trace.
type traceStep struct {
	domainID int32
	traceID  string
	at       time.Time
	method   string
	route    string
	path     string
	branch   string
	status   int
	duration time.Duration
	revision string
	token    string
}

// traceWriter writes trace steps off the request path: requests hand their
// step to a bounded queue and never wait; a full queue drops the step and
// counts it. One goroutine drains the queue in batches into trace_steps.
type traceWriter struct {
	queue   chan traceStep
	pool    *pgxpool.Pool
	log     *slog.Logger
	dropped prometheus.Counter
	written prometheus.Counter
	failed  prometheus.Counter
	cancel  context.CancelFunc
	done    chan struct{}
	once    sync.Once
}

// traceBatch bounds the steps written by one statement.
const traceBatch = 500

func newTraceWriter(pool *pgxpool.Pool, queueSize int, log *slog.Logger, reg prometheus.Registerer) *traceWriter {
	w := &traceWriter{
		queue: make(chan traceStep, queueSize),
		pool:  pool,
		log:   log,
		dropped: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "lorebase", Name: "trace_steps_dropped_total",
			Help: "Trace steps dropped because the trace queue was full."}),
		written: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "lorebase", Name: "trace_steps_written_total",
			Help: "Trace steps written to the database."}),
		failed: prometheus.NewCounter(prometheus.CounterOpts{Namespace: "lorebase", Name: "trace_steps_failed_total",
			Help: "Trace steps lost because writing their batch failed."}),
		done: make(chan struct{}),
	}
	reg.MustRegister(w.dropped, w.written, w.failed, prometheus.NewGaugeFunc(prometheus.GaugeOpts{
		Namespace: "lorebase", Name: "trace_queue_length", Help: "Trace steps waiting to be written.",
	}, func() float64 { return float64(len(w.queue)) }))
	ctx, cancel := context.WithCancel(context.Background())
	w.cancel = cancel
	go w.run(ctx)
	return w
}

// enqueue hands a step to the writer without waiting.
func (w *traceWriter) enqueue(st traceStep) {
	select {
	case w.queue <- st:
	default:
		w.dropped.Inc()
	}
}

// close stops the writer after writing what is queued (within 5 s).
func (w *traceWriter) close() {
	w.once.Do(func() {
		w.cancel()
		<-w.done
	})
}

func (w *traceWriter) run(ctx context.Context) {
	defer close(w.done)
	batch := make([]traceStep, 0, traceBatch)
	for {
		select {
		case st := <-w.queue:
			batch = append(batch[:0], st)
		case <-ctx.Done():
			w.drain(batch[:0])
			return
		}
		// Gather what arrives within traceLinger of the first step, so a
		// busy Keeper writes a few statements a second, not one a request.
		linger := time.NewTimer(traceLinger)
	fill:
		for len(batch) < traceBatch {
			select {
			case st := <-w.queue:
				batch = append(batch, st)
			case <-linger.C:
				break fill
			case <-ctx.Done():
				break fill
			}
		}
		linger.Stop()
		w.write(context.WithoutCancel(ctx), batch)
	}
}

// traceLinger is how long the writer gathers steps into one statement.
const traceLinger = 100 * time.Millisecond

// drain writes whatever is still queued when the writer stops.
func (w *traceWriter) drain(batch []traceStep) {
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	for {
		select {
		case st := <-w.queue:
			batch = append(batch, st)
			if len(batch) == traceBatch {
				w.write(ctx, batch)
				batch = batch[:0]
			}
		default:
			if len(batch) > 0 {
				w.write(ctx, batch)
			}
			return
		}
	}
}

// write inserts one batch in one statement. Each row names its Domain; the
// writer uses the owner's pool, as jobs do.
func (w *traceWriter) write(ctx context.Context, batch []traceStep) {
	n := len(batch)
	domains, traces, ats := make([]int32, n), make([]string, n), make([]time.Time, n)
	methods, routes, paths := make([]string, n), make([]string, n), make([]string, n)
	branches, revisions, tokens := make([]*string, n), make([]*string, n), make([]*string, n)
	statuses, durations := make([]int32, n), make([]int64, n)
	opt := func(s string) *string {
		if s == "" {
			return nil
		}
		return &s
	}
	for i, st := range batch {
		domains[i], traces[i], ats[i] = st.domainID, st.traceID, st.at
		methods[i], routes[i], paths[i] = st.method, st.route, st.path
		branches[i], revisions[i], tokens[i] = opt(st.branch), opt(st.revision), opt(st.token)
		statuses[i], durations[i] = int32(st.status), st.duration.Microseconds()
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := w.pool.Exec(ctx, `INSERT INTO trace_steps
			(domain_id, trace_id, at, method, route, path, branch, status, duration_us, revision, token)
		SELECT * FROM unnest($1::int[], $2::text[], $3::timestamptz[], $4::text[], $5::text[], $6::text[],
			$7::text[], $8::int[], $9::bigint[], $10::text[], $11::text[])`,
		domains, traces, ats, methods, routes, paths, branches, statuses, durations, revisions, tokens)
	if err != nil {
		w.failed.Add(float64(n))
		w.log.Warn("trace steps not written", slog.Int("steps", n), slog.String("error", err.Error()))
		return
	}
	w.written.Add(float64(n))
}

// traceID reads and checks the trace header: "" when absent.
func traceID(r *http.Request) (string, error) {
	v, sent := r.Header[http.CanonicalHeaderKey(TraceHeader)]
	if !sent {
		return "", nil
	}
	if len(v) != 1 || v[0] == "" || len(v[0]) > maxTraceID || !printableASCII(v[0]) {
		return "", badRequest(TraceHeader, "invalid_header",
			fmt.Sprintf("%s must be 1 to %d printable ASCII characters, given once.", TraceHeader, maxTraceID))
	}
	return v[0], nil
}

// traceRequests records each request of a Domain that carries a trace id
// as a step of that trace, after the response is written.
func (s *Server) traceRequests(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		id, err := traceID(r)
		if err != nil {
			s.writeError(w, r, err)
			return
		}
		if id == "" || s.traces == nil {
			next.ServeHTTP(w, r)
			return
		}
		start := time.Now()
		ww := &revisionSniffer{WrapResponseWriter: middleware.NewWrapResponseWriter(w, r.ProtoMajor), sniff: r.Method != http.MethodGet}
		next.ServeHTTP(ww, r)
		st := traceStep{
			domainID: domainFrom(r.Context()).ID, traceID: id, at: start, method: r.Method,
			path: truncatePath(r.URL.EscapedPath()), status: ww.Status(), duration: time.Since(start),
		}
		if st.status == 0 {
			st.status = http.StatusOK
		}
		if rc := chi.RouteContext(r.Context()); rc != nil {
			st.route = rc.RoutePattern()
			if strings.HasSuffix(st.route, "/traces/{id}") {
				return // reading a trace is not a step of it
			}
			if b, err := pathParam(r, "branch"); err == nil {
				st.branch = b
			}
		}
		if p := principalFrom(r.Context()); p != nil {
			st.token = p.name()
		}
		if st.status >= 200 && st.status < 300 {
			st.revision = ww.revision()
		}
		s.traces.enqueue(st)
	})
}

// revisionSniffer keeps the start of a write's response to find the
// Revision it wrote ({"revision": ...}), whichever handler answered.
type revisionSniffer struct {
	middleware.WrapResponseWriter
	sniff bool
	head  bytes.Buffer
}

const sniffBytes = 4096

func (s *revisionSniffer) Write(p []byte) (int, error) {
	if s.sniff && s.head.Len() < sniffBytes {
		n := min(len(p), sniffBytes-s.head.Len())
		s.head.Write(p[:n])
	}
	return s.WrapResponseWriter.Write(p)
}

func (s *revisionSniffer) revision() string {
	if !s.sniff || s.head.Len() == 0 {
		return ""
	}
	dec := json.NewDecoder(bytes.NewReader(s.head.Bytes()))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return ""
	}
	for dec.More() {
		k, err := dec.Token()
		if err != nil {
			return ""
		}
		if k == "revision" {
			var v string
			if dec.Decode(&v) == nil {
				return v
			}
			return ""
		}
		var skip json.RawMessage
		if dec.Decode(&skip) != nil {
			return ""
		}
	}
	return ""
}

// withTrace names the trace in a provenance object (creating one when
// there is none). A value that is not an object is left for validation to
// report.
func withTrace(prov json.RawMessage, id string) json.RawMessage {
	trimmed := bytes.TrimSpace(prov)
	if len(trimmed) == 0 || bytes.Equal(trimmed, []byte("null")) {
		out, _ := json.Marshal(map[string]string{"trace": id})
		return out
	}
	var m map[string]json.RawMessage
	if trimmed[0] != '{' || json.Unmarshal(trimmed, &m) != nil || m == nil {
		return prov
	}
	m["trace"], _ = json.Marshal(id)
	out, err := json.Marshal(m)
	if err != nil {
		return prov
	}
	return out
}

// TraceStep is one step as GET .../traces/{id} shows it.
type TraceStep struct {
	Seq        int64     `json:"seq"`
	At         time.Time `json:"at"`
	Method     string    `json:"method"`
	Route      string    `json:"route"`
	Path       string    `json:"path"`
	Branch     string    `json:"branch,omitempty"`
	Status     int       `json:"status"`
	DurationMS float64   `json:"duration_ms"`
	Revision   string    `json:"revision,omitempty"`
	Token      string    `json:"token,omitempty"`
}

type tracePage struct {
	ID    string      `json:"id"`
	Steps []TraceStep `json:"steps"`
	Next  string      `json:"next,omitempty"`
}

// getTrace: GET /v1/domains/{domain}/traces/{id}?limit=&after=SEQ, the
// steps oldest first. Steps are numbered within their trace.
func (s *Server) getTrace(w http.ResponseWriter, r *http.Request) error {
	id, err := pathParam(r, "id")
	if err != nil {
		return err
	}
	if id == "" || len(id) > maxTraceID || !printableASCII(id) {
		return badRequest("id", "invalid_trace", fmt.Sprintf("A trace id is 1 to %d printable ASCII characters.", maxTraceID))
	}
	if err := checkQuery(r, "limit", "after"); err != nil {
		return err
	}
	limit, err := queryLimit(r, s.cfg.Read.Page.DefaultLimit, s.cfg.Read.Page.MaxLimit)
	if err != nil {
		return err
	}
	after, err := queryInt(r, "after", 0, 0, 1<<31-1)
	if err != nil {
		return err
	}
	page := tracePage{ID: id, Steps: []TraceStep{}}
	err = s.store.Read(r.Context(), domainFrom(r.Context()).ID, `SELECT seq, at, method, route, path,
			coalesce(branch, ''), status, duration_us, coalesce(revision, ''), coalesce(token, '')
		FROM (SELECT row_number() OVER (ORDER BY id) AS seq, * FROM trace_steps
			WHERE domain_id = lb_domain() AND trace_id = $1) s
		WHERE seq > $2 ORDER BY seq LIMIT $3`, []any{id, after, limit + 1},
		func(rows pgx.Rows) error {
			var err error
			page.Steps, err = pgx.AppendRows(page.Steps, rows, func(row pgx.CollectableRow) (TraceStep, error) {
				var st TraceStep
				var us int64
				if err := row.Scan(&st.Seq, &st.At, &st.Method, &st.Route, &st.Path, &st.Branch, &st.Status, &us,
					&st.Revision, &st.Token); err != nil {
					return st, fmt.Errorf("scan trace step: %w", err)
				}
				st.DurationMS = float64(us) / 1000
				return st, nil
			})
			return err
		})
	if err != nil {
		return fmt.Errorf("read trace: %w", err)
	}
	if len(page.Steps) == 0 && after == 0 {
		return newProblem(http.StatusNotFound, "not-found", "Not found",
			"No steps recorded for the trace "+quote(id)+" (steps are written within moments of each request).")
	}
	if len(page.Steps) > limit {
		page.Steps = page.Steps[:limit]
		page.Next = itoa64(page.Steps[limit-1].Seq)
	}
	writeJSON(w, http.StatusOK, page)
	return nil
}

// maxTracePath bounds the path kept in a step (the queue's memory is
// bounded by its length times the size of a step).
const maxTracePath = 512

func truncatePath(p string) string {
	if len(p) > maxTracePath {
		return p[:maxTracePath]
	}
	return p
}
