package store

import (
	"errors"
	"fmt"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Sentinel errors of the database layer. Callers compare with errors.Is.
var (
	// ErrNotFound: the row asked for does not exist (or is in another Domain).
	ErrNotFound = errors.New("not found")
	// ErrConflict: a unique constraint or a compare-and-swap failed.
	ErrConflict = errors.New("conflict")
	// ErrMigrationsBehind: the database lacks migrations this build needs.
	ErrMigrationsBehind = errors.New("database migrations are behind")
)

// Translate maps driver errors onto the sentinels at one seam: no rows is
// ErrNotFound, a unique violation ErrConflict. Other errors pass through.
func Translate(err error) error {
	if err == nil {
		return nil
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return errors.Join(ErrNotFound, err)
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.UniqueViolation {
		return errors.Join(ErrConflict, err)
	}
	return err
}

// QuoteLiteral quotes s as an SQL string literal for statements built
// as text (literals let partial-index predicates match). It is correct
// whatever standard_conforming_strings says: a string holding a backslash
// uses the E'...' form. Callers never pass NUL (text cannot hold it and
// every input is checked for it first).
func QuoteLiteral(s string) string {
	if strings.ContainsRune(s, '\\') {
		return "E'" + strings.ReplaceAll(strings.ReplaceAll(s, `\`, `\\`), "'", "''") + "'"
	}
	return "'" + strings.ReplaceAll(s, "'", "''") + "'"
}

// IsCode reports whether err is a PostgreSQL error with the given SQLSTATE.
func IsCode(err error, code string) bool {
	var pgErr *pgconn.PgError
	return errors.As(err, &pgErr) && pgErr.Code == code
}

// Problem is one thing wrong with a request: which change (Index, for
// commits), which field, a short code and a sentence a person can act on.
type Problem struct {
	Index   *int   `json:"index,omitempty"`
	Field   string `json:"field,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

// InvalidError is a client error that wrote nothing. Status is the HTTP
// status it deserves: 400 for malformed input, 422 for input that is well
// formed but violates the schema or the data, 409 for a conflict with the
// current state.
type InvalidError struct {
	Status   int
	Title    string
	Problems []Problem
}

func (e *InvalidError) Error() string {
	if len(e.Problems) == 0 {
		return e.Title
	}
	msg := e.Title + ": " + e.Problems[0].Message
	if len(e.Problems) > 1 {
		msg += fmt.Sprintf(" (and %d more)", len(e.Problems)-1)
	}
	return msg
}

// Invalid builds a 400 InvalidError about one field.
func Invalid(field, code, message string) *InvalidError {
	return &InvalidError{Status: 400, Title: "invalid request", Problems: []Problem{{Field: field, Code: code, Message: message}}}
}
