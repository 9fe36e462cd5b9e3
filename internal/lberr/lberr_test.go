package lberr_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/lberr"
)

func TestKindOf(t *testing.T) {
	t.Parallel()
	pg := func(code string) error { return fmt.Errorf("query: %w", &pgconn.PgError{Code: code}) }
	for _, tc := range []struct {
		name string
		err  error
		want lberr.Kind
	}{
		{"nil", nil, lberr.Internal},
		{"plain", errors.New("boom"), lberr.Internal},
		{"fields", lberr.InvalidField("f", "c", "m"), lberr.Invalid},
		{"wrapped fields", fmt.Errorf("x: %w", lberr.Fields(lberr.Unprocessable, "t")), lberr.Unprocessable},
		{"not found", fmt.Errorf("branch x: %w", lberr.ErrNotFound), lberr.NotFound},
		{"joined conflict", errors.Join(lberr.ErrConflict, errors.New("detail")), lberr.Conflict},
		{"own sentinel", fmt.Errorf("x: %w", lberr.New(lberr.TooLarge, "big")), lberr.TooLarge},
		{"deadline", fmt.Errorf("x: %w", context.DeadlineExceeded), lberr.Timeout},
		{"canceled", context.Canceled, lberr.Canceled},
		{"query canceled", pg(pgerrcode.QueryCanceled), lberr.Timeout},
		{"data exception", pg(pgerrcode.CharacterNotInRepertoire), lberr.Invalid},
		{"unique", pg(pgerrcode.UniqueViolation), lberr.Conflict},
		{"serialization", pg(pgerrcode.SerializationFailure), lberr.Conflict},
		{"program limit", pg(pgerrcode.ProgramLimitExceeded), lberr.TooLarge},
		{"admin shutdown", pg(pgerrcode.AdminShutdown), lberr.Unavailable},
		{"connection", pg(pgerrcode.ConnectionFailure), lberr.Unavailable},
		{"syntax error", pg(pgerrcode.SyntaxError), lberr.Internal},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			require.Equal(t, tc.want, lberr.KindOf(tc.err))
		})
	}
}

func TestErrorMatchesItsKindSentinel(t *testing.T) {
	t.Parallel()
	err := fmt.Errorf("x: %w", lberr.Fields(lberr.NotFound, "no such thing"))
	require.ErrorIs(t, err, lberr.ErrNotFound)
	require.NotErrorIs(t, err, lberr.ErrConflict)
	own := lberr.New(lberr.NotFound, "no such widget")
	require.NotErrorIs(t, err, own, "a sentinel of the same kind made elsewhere is not every error of the kind")
	require.ErrorIs(t, fmt.Errorf("x: %w", own), own)
	cause := errors.New("cause")
	require.ErrorIs(t, &lberr.Error{Kind: lberr.Conflict, Err: cause}, cause)
	require.Equal(t, "invalid request: m (and 1 more)",
		lberr.Fields(lberr.Invalid, "invalid request", lberr.Problem{Message: "m"}, lberr.Problem{Message: "n"}).Error())
}
