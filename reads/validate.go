package reads

import (
	"errors"
	"fmt"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/lorebase/lorebase/store"
	"github.com/lorebase/lorebase/store/schema"
)

// Bounds of the read parameters.
const (
	maxKeyBytes    = 256
	maxTextChars   = 500 // search text, mentions
	maxValueBytes  = 2048
	maxRevisionLen = 64
)

var (
	revPattern = regexp.MustCompile(`^[0-9A-Za-z]+$`)
)

// checkBranch validates a branch name.
func checkBranch(name string) error {
	if !store.ValidBranchName(name) {
		return store.Invalid("branch", "invalid_branch", "branch must be a branch name: letters, digits, '.', '_', '-', '/', at most 128 characters")
	}
	return nil
}

// checkKey validates a Record key.
func checkKey(field, key string) error {
	switch {
	case key == "":
		return store.Invalid(field, "required", field+" is required")
	case len(key) > maxKeyBytes:
		return store.Invalid(field, "too_long", fmt.Sprintf("%s is longer than %d bytes", field, maxKeyBytes))
	}
	return checkChars(field, key)
}

// checkChars rejects invalid UTF-8, NUL and other control characters.
func checkChars(field, s string) error {
	if !utf8.ValidString(s) {
		return store.Invalid(field, "invalid_utf8", field+" is not valid UTF-8")
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return store.Invalid(field, "control_character", field+" holds a control character")
		}
	}
	return nil
}

// checkText validates free text of at most maxChars characters.
func checkText(field, s string, maxChars int, required bool) error {
	if required && strings.TrimSpace(s) == "" {
		return store.Invalid(field, "required", field+" is required")
	}
	if len(s) > maxChars*utf8.UTFMax || utf8.RuneCountInString(s) > maxChars {
		return store.Invalid(field, "too_long", fmt.Sprintf("%s is longer than %d characters", field, maxChars))
	}
	return checkChars(field, s)
}

// checkName validates a Kind, Attribute or Relation name; empty is allowed
// unless required.
func checkName(field, name string, required bool) error {
	if name == "" {
		if required {
			return store.Invalid(field, "required", field+" is required")
		}
		return nil
	}
	if !schema.ValidName(name) {
		return store.Invalid(field, "invalid_name", field+" must start with a letter and hold letters, digits and '_' (at most 63)")
	}
	return nil
}

// checkRevision validates a Revision id; empty is allowed.
func checkRevision(field, id string) error {
	if id != "" && (len(id) > maxRevisionLen || !revPattern.MatchString(id)) {
		return store.Invalid(field, "invalid_revision", field+" must be a Revision id")
	}
	return nil
}

// limit returns the limit to use: def for 0, an lberr.Invalid error outside 1..max.
func limit(field string, n, def, maxN int) (int, error) {
	if n == 0 {
		return def, nil
	}
	if n < 1 || n > maxN {
		return 0, store.Invalid(field, "out_of_range", fmt.Sprintf("%s must be between 1 and %d", field, maxN))
	}
	return n, nil
}

// firstErr returns the first non-nil error.
func firstErr(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}

// translate maps the read functions' errors: no_data_found (branch,
// Revision or Record not found) onto store.ErrNotFound, invalid_parameter_value
// onto lberr.Invalid.
func translate(what string, err error) error {
	if err == nil {
		return nil
	}
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		switch pgErr.Code {
		case pgerrcode.NoDataFound:
			return fmt.Errorf("%s: %s: %w", what, pgErr.Message, store.ErrNotFound)
		case pgerrcode.InvalidParameterValue:
			return store.Invalid("", "invalid", pgErr.Message)
		}
	}
	return fmt.Errorf("%s: %w", what, err)
}
