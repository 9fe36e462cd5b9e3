package keeper

import (
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/store"
)

// Problem is an RFC 9457 problem document, the body of every error.
type Problem struct {
	Type   string          `json:"type"`
	Title  string          `json:"title"`
	Status int             `json:"status"`
	Detail string          `json:"detail,omitempty"`
	Errors []lberr.Problem `json:"errors"`
}

// problemType is the type URI of a problem with the given slug.
func problemType(slug string) string { return "urn:lorebase:problem:" + slug }

// problemError is an error that already knows its problem document.
type problemError struct{ p Problem }

func (e *problemError) Error() string { return e.p.Title + ": " + e.p.Detail }

// newProblem builds an error answered with the given status.
func newProblem(status int, slug, title, detail string) error {
	return &problemError{Problem{Type: problemType(slug), Title: title, Status: status, Detail: detail}}
}

// badRequest is a 400 naming a field (a parameter, header or body field).
func badRequest(field, code, message string) error {
	return &problemError{Problem{
		Type: problemType("invalid-request"), Title: "Invalid request", Status: http.StatusBadRequest,
		Detail: message,
		Errors: []lberr.Problem{{Field: field, Code: code, Message: message}},
	}}
}

func errUnauthorized(detail string) error {
	return newProblem(http.StatusUnauthorized, "unauthorized", "Unauthorized", detail)
}

func errForbidden(detail string) error {
	return newProblem(http.StatusForbidden, "forbidden", "Forbidden", detail)
}

// errDomainNotFound is the answer for a Domain that does not exist and for
// one the token may not see: the two are indistinguishable.
func errDomainNotFound(name string) error {
	return newProblem(http.StatusNotFound, "not-found", "Not found", "No Domain named "+quote(name)+".")
}

// quote renders a client-supplied name for a message: quoted, bounded and
// with control characters escaped.
func quote(s string) string {
	const max = 80
	q := []rune(s)
	if len(q) > max {
		s = string(q[:max]) + "…"
	}
	b, _ := json.Marshal(s)
	return string(b)
}

// The answer to each kind of error: its status and problem type. This is
// the one place a kind becomes an HTTP status.
var kindAnswers = map[lberr.Kind]struct {
	status int
	slug   string
	title  string
}{
	lberr.Invalid:       {http.StatusBadRequest, "invalid-request", "Invalid request"},
	lberr.Unprocessable: {http.StatusUnprocessableEntity, "unprocessable", "Unprocessable request"},
	lberr.NotFound:      {http.StatusNotFound, "not-found", "Not found"},
	lberr.Conflict:      {http.StatusConflict, "conflict", "Conflict"},
	lberr.TooLarge:      {http.StatusRequestEntityTooLarge, "too-large", "Request too large"},
	lberr.Timeout:       {http.StatusServiceUnavailable, "timeout", "Service unavailable"},
	lberr.Unavailable:   {http.StatusServiceUnavailable, "unavailable", "Service unavailable"},
	lberr.Canceled:      {http.StatusServiceUnavailable, "canceled", "Request canceled"},
	lberr.Internal:      {http.StatusInternalServerError, "internal", "Internal server error"},
}

// databaseDetails say, without echoing SQL, what a kind of database error
// means for the client.
var databaseDetails = map[lberr.Kind]string{
	lberr.Invalid:     "A value in the request cannot be stored (for example a NUL character or a number out of range).",
	lberr.TooLarge:    "A value in the request is too large to store or index.",
	lberr.Conflict:    "The request collided with a concurrent change; retry it.",
	lberr.Unavailable: "The database is not available; retry.",
}

// problemFor maps an error to its problem document and reports whether it
// is a server fault that must be logged.
func problemFor(err error) (Problem, bool) {
	var pe *problemError
	if errors.As(err, &pe) {
		return pe.p, false
	}
	var mbe *http.MaxBytesError
	switch {
	case errors.As(err, &mbe):
		return Problem{Type: problemType("too-large"), Title: "Request body too large", Status: http.StatusRequestEntityTooLarge,
			Detail: "The request body exceeds " + itoa64(mbe.Limit) + " bytes (http.max_body_bytes)."}, false
	case errors.Is(err, commit.ErrHeadMoved):
		return Problem{Type: problemType("head-moved"), Title: "Conflict", Status: http.StatusConflict,
			Detail: "The branch head moved: expected_head (or If-Match) no longer matches. Read the head and retry."}, false
	case errors.Is(err, commit.ErrIdempotencyReused):
		return Problem{Type: problemType("idempotency-key-reused"), Title: "Idempotency-Key reused", Status: http.StatusUnprocessableEntity,
			Detail: "This Idempotency-Key was used before with a different request; use a new key for a new request."}, false
	}
	kind := lberr.KindOf(err)
	ans := kindAnswers[kind]
	p := Problem{Type: problemType(ans.slug), Title: ans.title, Status: ans.status}
	var e *lberr.Error
	if errors.As(err, &e) {
		if e.Title != "" {
			p.Title = e.Title
		}
		p.Errors = e.Problems
		if len(e.Problems) > 0 {
			p.Detail = e.Problems[0].Message
			if len(e.Problems) > 1 {
				p.Detail += " (and " + itoa(len(e.Problems)-1) + " more problems in errors)"
			}
		}
		return p, kind == lberr.Internal
	}
	var ce *pgconn.ConnectError
	switch {
	case kind == lberr.Timeout:
		p.Detail = "The request took too long and was stopped; retry, or ask for less."
		return p, true
	case kind == lberr.Canceled:
		p.Detail = "The request was canceled."
		return p, false
	case errors.Is(err, store.ErrMigrationsBehind):
		p.Detail = "The database migrations are behind; run keeper migrate."
		return p, true
	case errors.As(err, &ce):
		p.Detail = "The database is not reachable."
		return p, true
	}
	if k, ok := lberr.DatabaseKind(err); ok && k == kind {
		// The database refused a value the client sent that slipped past
		// validation, or collided with a concurrent change: never worth
		// echoing SQL for, and logged.
		p.Detail = databaseDetails[kind]
		return p, true
	}
	switch kind {
	case lberr.Internal:
		p.Detail = "The server failed to handle the request; it has been logged."
		return p, true
	case lberr.Unavailable:
		return p, true
	}
	p.Detail = lberr.FirstLine(err)
	return p, false
}

// writeError answers err as a problem document, logging server faults.
func (s *Server) writeError(w http.ResponseWriter, r *http.Request, err error) {
	p, fault := problemFor(err)
	if fault || p.Status >= 500 {
		level := slog.LevelError
		if p.Status == http.StatusServiceUnavailable || p.Status < 500 {
			level = slog.LevelWarn
		}
		s.log.LogAttrs(r.Context(), level, "request failed",
			slog.String("request_id", middleware.GetReqID(r.Context())),
			slog.String("method", r.Method), slog.String("path", r.URL.EscapedPath()),
			slog.Int("status", p.Status), slog.String("error", err.Error()))
	}
	if p.Status == http.StatusUnauthorized {
		w.Header().Set("WWW-Authenticate", `Bearer realm="lorebase"`)
	}
	writeProblem(w, p)
}

func writeProblem(w http.ResponseWriter, p Problem) {
	if p.Errors == nil {
		p.Errors = []lberr.Problem{}
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(p.Status)
	_ = json.NewEncoder(w).Encode(p)
}

// writeJSON answers v as JSON with the given status.
func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func itoa(n int) string     { return strconv.Itoa(n) }
func itoa64(n int64) string { return strconv.FormatInt(n, 10) }
