package keeper

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"strings"

	"github.com/go-chi/chi/v5/middleware"
	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/store"
)

// Problem is an RFC 9457 problem document, the body of every error.
type Problem struct {
	Type   string          `json:"type"`
	Title  string          `json:"title"`
	Status int             `json:"status"`
	Detail string          `json:"detail,omitempty"`
	Errors []store.Problem `json:"errors"`
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
		Errors: []store.Problem{{Field: field, Code: code, Message: message}},
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

// problemFor maps an error to its problem document and reports whether it
// is a server fault that must be logged.
func problemFor(err error) (Problem, bool) {
	var pe *problemError
	if errors.As(err, &pe) {
		return pe.p, false
	}
	var inv *store.InvalidError
	if errors.As(err, &inv) {
		status := inv.Status
		if status < 400 || status > 499 {
			status = http.StatusBadRequest
		}
		title := inv.Title
		if title == "" {
			title = http.StatusText(status)
		}
		p := Problem{Type: problemType(slugFor(status)), Title: title, Status: status, Errors: inv.Problems}
		if len(inv.Problems) > 0 {
			p.Detail = inv.Problems[0].Message
			if len(inv.Problems) > 1 {
				p.Detail += " (and " + itoa(len(inv.Problems)-1) + " more problems in errors)"
			}
		}
		return p, false
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
	case errors.Is(err, store.ErrNotFound):
		return Problem{Type: problemType("not-found"), Title: "Not found", Status: http.StatusNotFound, Detail: firstLine(err)}, false
	case errors.Is(err, store.ErrConflict):
		return Problem{Type: problemType("conflict"), Title: "Conflict", Status: http.StatusConflict, Detail: firstLine(err)}, false
	case errors.Is(err, store.ErrMigrationsBehind):
		return Problem{Type: problemType("unavailable"), Title: "Service unavailable", Status: http.StatusServiceUnavailable,
			Detail: "The database migrations are behind; run keeper migrate."}, true
	case errors.Is(err, context.DeadlineExceeded), store.IsCode(err, pgerrcode.QueryCanceled):
		return Problem{Type: problemType("timeout"), Title: "Service unavailable", Status: http.StatusServiceUnavailable,
			Detail: "The request took too long and was stopped; retry, or ask for less."}, true
	case errors.Is(err, context.Canceled):
		return Problem{Type: problemType("canceled"), Title: "Request canceled", Status: http.StatusServiceUnavailable,
			Detail: "The request was canceled."}, false
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return Problem{Type: problemType("unavailable"), Title: "Service unavailable", Status: http.StatusServiceUnavailable,
			Detail: "The database is not reachable."}, true
	}
	var pg *pgconn.PgError
	if errors.As(err, &pg) {
		switch {
		case strings.HasPrefix(pg.Code, "22"):
			// Data exceptions come from values the client sent that slipped
			// past validation (an unsupported character, a number out of
			// range): the client's fault, but never worth echoing SQL for.
			return Problem{Type: problemType("invalid-request"), Title: "Invalid request", Status: http.StatusBadRequest,
				Detail: "A value in the request cannot be stored (for example a NUL character or a number out of range)."}, true
		case pg.Code == pgerrcode.ProgramLimitExceeded || pg.Code == pgerrcode.StatementTooComplex:
			return Problem{Type: problemType("too-large"), Title: "Request too large", Status: http.StatusRequestEntityTooLarge,
				Detail: "A value in the request is too large to store or index."}, true
		case pg.Code == pgerrcode.SerializationFailure || pg.Code == pgerrcode.DeadlockDetected || pg.Code == pgerrcode.LockNotAvailable:
			return Problem{Type: problemType("conflict"), Title: "Conflict", Status: http.StatusConflict,
				Detail: "The request collided with a concurrent change; retry it."}, true
		case pg.Code == pgerrcode.TooManyConnections || strings.HasPrefix(pg.Code, "57P") || strings.HasPrefix(pg.Code, "08"):
			return Problem{Type: problemType("unavailable"), Title: "Service unavailable", Status: http.StatusServiceUnavailable,
				Detail: "The database is not available; retry."}, true
		}
	}
	return Problem{Type: problemType("internal"), Title: "Internal server error", Status: http.StatusInternalServerError,
		Detail: "The server failed to handle the request; it has been logged."}, true
}

func slugFor(status int) string {
	switch status {
	case http.StatusNotFound:
		return "not-found"
	case http.StatusConflict:
		return "conflict"
	case http.StatusUnprocessableEntity:
		return "unprocessable"
	case http.StatusForbidden:
		return "forbidden"
	case http.StatusRequestEntityTooLarge:
		return "too-large"
	default:
		return "invalid-request"
	}
}

// firstLine is an error's message up to its first newline (errors.Join
// puts driver detail on the following lines).
func firstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
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
		p.Errors = []store.Problem{}
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
