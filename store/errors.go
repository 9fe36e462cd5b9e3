package store

import (
	"errors"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lorebase/lorebase/internal/lberr"
)

// Errors of the database layer, kinds of internal/lberr. Callers compare
// with errors.Is.
var (
	// ErrNotFound: the row asked for does not exist (or is in another Domain).
	ErrNotFound = lberr.ErrNotFound
	// ErrConflict: a unique constraint or a compare-and-swap failed.
	ErrConflict = lberr.ErrConflict
	// ErrMigrationsBehind: the database lacks migrations this build needs.
	ErrMigrationsBehind = lberr.New(lberr.Unavailable, "database migrations are behind")
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

// Problem is one thing wrong with a request (see lberr.Problem).
type Problem = lberr.Problem

// Invalid is a malformed-request error (lberr.Invalid) about one field.
func Invalid(field, code, message string) *lberr.Error {
	return lberr.InvalidField(field, code, message)
}
