package lberr

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
)

// Kind is what went wrong, as the caller must act on it.
type Kind uint8

// The kinds. The zero Kind is Internal: a fault of the server, not of the
// request.
const (
	// Internal: the server failed; nothing the client sent explains it.
	Internal Kind = iota
	// Invalid: the request is malformed (a field missing, too long, not a
	// name); nothing was written.
	Invalid
	// Unprocessable: the request is well formed but violates the schema or
	// the data; nothing was written.
	Unprocessable
	// NotFound: what the request names does not exist (or lies in another
	// Domain).
	NotFound
	// Conflict: the request collides with the current state or a
	// concurrent change.
	Conflict
	// TooLarge: the request or a value in it is larger than allowed.
	TooLarge
	// Timeout: the work took longer than allowed and was stopped.
	Timeout
	// Unavailable: the database is unreachable, overloaded or not migrated.
	Unavailable
	// Canceled: the caller went away.
	Canceled
)

var kindNames = [...]string{"internal", "invalid", "unprocessable", "not found", "conflict", "too large", "timeout", "unavailable", "canceled"}

func (k Kind) String() string {
	if int(k) < len(kindNames) {
		return kindNames[k]
	}
	return fmt.Sprintf("kind(%d)", uint8(k))
}

// Problem is one thing wrong with a request: which change (Index, for
// commits), which field, a short code and a sentence a person can act on.
type Problem struct {
	Index   *int   `json:"index,omitempty"`
	Field   string `json:"field,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// Error is an error of a known kind, with the Problems that name the fields
// at fault. Err is its cause, if any.
type Error struct {
	Kind     Kind
	Title    string
	Problems []Problem
	Err      error
}

func (e *Error) Error() string {
	msg := e.Title
	if msg == "" {
		msg = e.Kind.String()
	}
	if len(e.Problems) > 0 {
		msg += ": " + e.Problems[0].Message
		if len(e.Problems) > 1 {
			msg += fmt.Sprintf(" (and %d more)", len(e.Problems)-1)
		}
	} else if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the cause.
func (e *Error) Unwrap() error { return e.Err }

// Is makes errors.Is(err, ErrNotFound) (and the other kind sentinels of
// this package) hold for an *Error of that kind. Sentinels made with New
// elsewhere match only themselves.
func (e *Error) Is(target error) bool {
	s, ok := target.(*sentinel)
	return ok && s.ofKind && s.kind == e.Kind
}

// sentinel is a kind as a comparable error value. ofKind marks the kind
// sentinels of this package, which stand for every error of their kind.
type sentinel struct {
	kind   Kind
	msg    string
	ofKind bool
}

func (s *sentinel) Error() string { return s.msg }

// New returns a sentinel error of the given kind: errors.Is matches it, and
// KindOf of anything wrapping it is kind.
func New(kind Kind, msg string) error { return &sentinel{kind: kind, msg: msg} }

// The kind sentinels. Wrap them with fmt.Errorf("...: %w", ErrNotFound).
var (
	ErrNotFound    error = &sentinel{kind: NotFound, msg: "not found", ofKind: true}
	ErrConflict    error = &sentinel{kind: Conflict, msg: "conflict", ofKind: true}
	ErrTooLarge    error = &sentinel{kind: TooLarge, msg: "too large", ofKind: true}
	ErrTimeout     error = &sentinel{kind: Timeout, msg: "timeout", ofKind: true}
	ErrUnavailable error = &sentinel{kind: Unavailable, msg: "unavailable", ofKind: true}
)

// Fields builds an error of the given kind from its Problems.
func Fields(kind Kind, title string, problems ...Problem) *Error {
	return &Error{Kind: kind, Title: title, Problems: problems}
}

// InvalidField is a malformed request (Invalid) about one field.
func InvalidField(field, code, message string) *Error {
	return &Error{Kind: Invalid, Title: "invalid request", Problems: []Problem{{Field: field, Code: code, Message: message}}}
}

// KindOf says which kind err is: an *Error's or a sentinel's kind first,
// then the context errors, then PostgreSQL's by SQLSTATE class (data
// exceptions are Invalid, unique violations and failed serializations
// Conflict, program limits TooLarge, cancelled statements Timeout,
// connection and admin shutdown errors Unavailable). Anything else is
// Internal.
func KindOf(err error) Kind {
	if err == nil {
		return Internal
	}
	var e *Error
	if errors.As(err, &e) {
		return e.Kind
	}
	var s *sentinel
	if errors.As(err, &s) {
		return s.kind
	}
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return Timeout
	case errors.Is(err, context.Canceled):
		return Canceled
	}
	var ce *pgconn.ConnectError
	if errors.As(err, &ce) {
		return Unavailable
	}
	if k, ok := DatabaseKind(err); ok {
		return k
	}
	return Internal
}

// DatabaseKind classifies a PostgreSQL error by its SQLSTATE; ok is false
// when err holds none or its code says nothing about the request.
func DatabaseKind(err error) (Kind, bool) {
	var pg *pgconn.PgError
	if !errors.As(err, &pg) {
		return Internal, false
	}
	switch {
	case pg.Code == pgerrcode.QueryCanceled:
		return Timeout, true
	case pgerrcode.IsDataException(pg.Code):
		return Invalid, true
	case pg.Code == pgerrcode.ProgramLimitExceeded || pg.Code == pgerrcode.StatementTooComplex:
		return TooLarge, true
	case pg.Code == pgerrcode.UniqueViolation, pg.Code == pgerrcode.SerializationFailure,
		pg.Code == pgerrcode.DeadlockDetected, pg.Code == pgerrcode.LockNotAvailable:
		return Conflict, true
	case pg.Code == pgerrcode.TooManyConnections, pgerrcode.IsOperatorIntervention(pg.Code),
		pgerrcode.IsConnectionException(pg.Code):
		return Unavailable, true
	}
	return Internal, false
}

// IsCode reports whether err is a PostgreSQL error with the given SQLSTATE
// (a pgerrcode constant).
func IsCode(err error, code string) bool {
	var pg *pgconn.PgError
	return errors.As(err, &pg) && pg.Code == code
}

// FirstLine is an error's message up to its first newline (errors.Join
// puts driver detail on the following lines).
func FirstLine(err error) string {
	msg := err.Error()
	if i := strings.IndexByte(msg, '\n'); i >= 0 {
		msg = msg[:i]
	}
	return msg
}
