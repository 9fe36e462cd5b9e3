package keeper

import (
	"bytes"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5"
	"github.com/jackc/pgx/v5"
	"github.com/maypok86/otter/v2"
	"github.com/prometheus/client_golang/prometheus"

	"github.com/lorebase/lorebase/store"
)

// responseCache keeps answers of reads, bounded by bytes, keyed by Domain,
// the Revision the read saw, the token's grants and the normalised request.
// A Revision never changes, so nothing is ever invalidated: a commit moves
// the head and later reads ask for other keys; old entries age out.
type responseCache struct {
	entries *otter.Cache[string, cachedResponse] // nil: answers are not kept
	lookups *prometheus.CounterVec
}

type cachedResponse struct {
	body        []byte
	contentType string
}

func newResponseCache(maxBytes int64, reg prometheus.Registerer) *responseCache {
	c := &responseCache{lookups: prometheus.NewCounterVec(prometheus.CounterOpts{
		Namespace: "lorebase", Name: "response_cache_requests_total",
		Help: "Cacheable reads by outcome: hit (served from the cache), miss (read), not_modified (304 on If-None-Match).",
	}, []string{"result"})}
	reg.MustRegister(c.lookups)
	for _, r := range []string{"hit", "miss", "not_modified"} {
		c.lookups.WithLabelValues(r) // exported from the start, at 0
	}
	if maxBytes > 0 {
		c.entries = otter.Must(&otter.Options[string, cachedResponse]{
			MaximumWeight: uint64(maxBytes),
			Weigher: func(k string, v cachedResponse) uint32 {
				return uint32(min(len(k)+len(v.body)+len(v.contentType)+64, 1<<31))
			},
		})
		reg.MustRegister(prometheus.NewGaugeFunc(prometheus.GaugeOpts{
			Namespace: "lorebase", Name: "response_cache_bytes", Help: "Bytes held by the response cache (weighted size).",
		}, func() float64 { return float64(c.entries.WeightedSize()) }))
	}
	return c
}

// readVersion names what a read reads: the branch (its id, so a branch
// deleted and made again never shares entries) at its head Revision, or at
// the Revision of at=. ok is false when the branch does not exist; the
// handler then answers.
func (s *Server) readVersion(r *http.Request) (version string, ok bool, err error) {
	if revisionRoute(r) {
		id, err := pathParam(r, "id")
		if err != nil {
			return "", false, err
		}
		return "rev:" + id, true, nil
	}
	branch, err := branchParam(r)
	if err != nil {
		return "", false, err
	}
	var id int32
	var seq int64
	found := false
	err = s.store.Read(r.Context(), domainFrom(r.Context()).ID, `SELECT id, head_seq FROM refs
		WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting'`, []any{branch},
		func(rows pgx.Rows) error {
			_, err := pgx.ForEachRow(rows, []any{&id, &seq}, func() error {
				found = true
				return nil
			})
			return err
		})
	if err != nil {
		return "", false, fmt.Errorf("read branch head: %w", err)
	}
	if !found {
		return "", false, nil
	}
	return branchVersion(r, id, seq), true, nil
}

// branchVersion names what a read of a branch reads: the branch id at its
// head's sequence number, or at the Revision of at=.
func branchVersion(r *http.Request, id int32, seq int64) string {
	if at := r.URL.Query().Get("at"); at != "" {
		// A read as of a Revision never changes, whatever the head does.
		return "b" + strconv.Itoa(int(id)) + "/at:" + at
	}
	return "b" + strconv.Itoa(int(id)) + "@" + strconv.FormatInt(seq, 10)
}

// etagOf is the hash of the Domain, the version and the normalised request,
// and the ETag made from it.
func etagOf(r *http.Request, version string) (sum [32]byte, etag string) {
	d := domainFrom(r.Context())
	request := r.Method + " " + r.URL.EscapedPath() + "?" + r.URL.Query().Encode()
	sum = sha256.Sum256([]byte(strconv.Itoa(int(d.ID)) + "\x00" + version + "\x00" + request))
	return sum, `"` + base64.RawURLEncoding.EncodeToString(sum[:18]) + `"`
}

// grantsKey names what a principal may read and write, for cache keys: two
// tokens with the same grants share entries.
func grantsKey(p *principal) string {
	if p.bootstrap {
		return "bootstrap"
	}
	return p.token.Role + ":" + strings.Join(p.token.Branches, ",")
}

// cachedRead answers a read with an ETag from the Revision it reads and
// the request: If-None-Match with it is 304; a kept answer is served
// without reading; a fresh 200 is kept. When neither the cache nor
// If-None-Match can answer before the read runs (the cache is off and the
// request names no tag), the head is read with the read instead
// (taggedRead): one round trip, not two.
func (s *Server) cachedRead(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if s.cache.entries == nil && r.Header.Get("If-None-Match") == "" && !readsVectors(r) && !revisionRoute(r) {
			s.taggedRead(w, r, next)
			return
		}
		version, ok, err := s.readVersion(r)
		if err != nil {
			var pe *problemError
			if errors.As(err, &pe) {
				s.writeError(w, r, err)
				return
			}
			// The head could not be read: answer without an ETag.
			next.ServeHTTP(w, r)
			return
		}
		if !ok || readsVectors(r) {
			next.ServeHTTP(w, r)
			return
		}
		sum, etag := etagOf(r, version)
		if etagMatches(r.Header.Get("If-None-Match"), etag) {
			s.cache.lookups.WithLabelValues("not_modified").Inc()
			w.Header().Set("ETag", etag)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		key := string(sum[:]) + "\x00" + grantsKey(principalFrom(r.Context()))
		if s.cache.entries != nil {
			if e, hit := s.cache.entries.GetIfPresent(key); hit {
				s.cache.lookups.WithLabelValues("hit").Inc()
				h := w.Header()
				h.Set("Content-Type", e.contentType)
				h.Set("X-Content-Type-Options", "nosniff")
				h.Set("ETag", etag)
				w.WriteHeader(http.StatusOK)
				_, _ = w.Write(e.body)
				return
			}
		}
		s.cache.lookups.WithLabelValues("miss").Inc()
		cw := &etagWriter{ResponseWriter: w, etag: etag, keep: s.cache.entries != nil}
		next.ServeHTTP(cw, r)
		if cw.keep && cw.status == http.StatusOK {
			s.cache.entries.Set(key, cachedResponse{body: cw.body.Bytes(), contentType: w.Header().Get("Content-Type")})
		}
	})
}

// taggedRead serves a read under store.WithHead: the handler's first
// scoped read also reads the branch's head, in its transaction, and the
// ETag of a 200 is derived from that head when the header is written, so
// the tag names the Revision the answer was read at. A handler that
// answers 200 without a scoped read gets its tag from the head read then.
func (s *Server) taggedRead(w http.ResponseWriter, r *http.Request, next http.Handler) {
	branch, err := branchParam(r)
	if err != nil {
		s.writeError(w, r, err)
		return
	}
	s.cache.lookups.WithLabelValues("miss").Inc()
	ctx, head := store.WithHead(r.Context(), branch)
	tag := func() string {
		read, found, id, seq := head.Result()
		if !read {
			version, ok, err := s.readVersion(r)
			if err != nil || !ok {
				return ""
			}
			_, etag := etagOf(r, version)
			return etag
		}
		if !found {
			return ""
		}
		_, etag := etagOf(r, branchVersion(r, id, seq))
		return etag
	}
	next.ServeHTTP(&etagWriter{ResponseWriter: w, tag: tag}, r.WithContext(ctx))
}

// revisionRoute reports whether the request reads a Revision by id
// (GET .../revisions/{id}), whose version is the id itself.
func revisionRoute(r *http.Request) bool {
	rc := chi.RouteContext(r.Context())
	return rc != nil && strings.HasSuffix(rc.RoutePattern(), "/revisions/{id}")
}

// readsVectors reports whether a read's answer depends on vectors
// (semantic and hybrid search, resolve with semantic=true): embedding jobs
// write vectors without moving the head, so such an answer is neither kept
// nor tagged by the Revision.
func readsVectors(r *http.Request) bool {
	q := r.URL.Query()
	switch q.Get("mode") {
	case "semantic", "hybrid":
		return true
	}
	return q.Get("semantic") == "true"
}

// etagMatches reports whether an If-None-Match header names the tag.
func etagMatches(header, etag string) bool {
	if header == "" {
		return false
	}
	for _, t := range strings.Split(header, ",") {
		t = strings.TrimSpace(t)
		if t == "*" || strings.TrimPrefix(t, "W/") == etag {
			return true
		}
	}
	return false
}

// etagWriter adds the ETag to a 200 and keeps a copy of its body. The tag
// is etag, or else what tag returns when the header is written ("": none).
type etagWriter struct {
	http.ResponseWriter
	etag   string
	tag    func() string
	keep   bool
	status int
	body   bytes.Buffer
}

func (w *etagWriter) WriteHeader(status int) {
	if w.status == 0 {
		w.status = status
		if status == http.StatusOK && w.etag == "" && w.tag != nil {
			w.etag = w.tag()
		}
		if status == http.StatusOK && w.etag != "" {
			w.Header().Set("ETag", w.etag)
		}
	}
	w.ResponseWriter.WriteHeader(status)
}

func (w *etagWriter) Write(p []byte) (int, error) {
	if w.status == 0 {
		w.WriteHeader(http.StatusOK)
	}
	if w.keep && w.status == http.StatusOK {
		w.body.Write(p)
	}
	return w.ResponseWriter.Write(p)
}
