package store

import (
	"context"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oklog/ulid/v2"
)

// Token is a bearer token's grant. The secret itself is never stored.
type Token struct {
	ID        string    `json:"id"`
	DomainID  int32     `json:"-"`
	Domain    string    `json:"domain"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Branches  []string  `json:"branches"`
	CreatedAt time.Time `json:"created_at"`
	// ExpiresAt is when the token stops working (nil: never).
	ExpiresAt *time.Time `json:"expires_at"`
	// RevokedAt is when an admin revoked it (nil: not revoked).
	RevokedAt *time.Time `json:"revoked_at"`
	// LastUsedAt is about when it was last presented (updated at most
	// once a minute, and only when a Keeper looked it up rather than
	// finding it in its cache).
	LastUsedAt *time.Time `json:"last_used_at"`
}

// Valid reports whether the token may be used at now: not revoked, not
// expired.
func (t *Token) Valid(now time.Time) bool {
	return t.RevokedAt == nil && (t.ExpiresAt == nil || now.Before(*t.ExpiresAt))
}

// HashToken is how a token is stored and looked up.
func HashToken(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// tokenColumns are the columns scanned by scanToken, on tokens t joined
// with domains d.
//
//nolint:gosec // G101: column names, not a credential
const tokenColumns = `t.id, t.domain_id, d.name, t.name, t.role, t.branches, t.created_at, t.expires_at, t.revoked_at, t.last_used_at`

func scanToken(row pgx.Row) (*Token, error) {
	var t Token
	err := row.Scan(&t.ID, &t.DomainID, &t.Domain, &t.Name, &t.Role, &t.Branches, &t.CreatedAt, &t.ExpiresAt, &t.RevokedAt, &t.LastUsedAt)
	if err != nil {
		return nil, err
	}
	return &t, nil
}

// CreateToken mints a token for a Domain, scoped to it, and returns the
// secret (shown once). expiresAt nil means it never expires. A name taken
// in the Domain is ErrConflict.
func (s *Store) CreateToken(ctx context.Context, domainID int32, name, role string, branches []string, expiresAt *time.Time) (string, *Token, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, fmt.Errorf("generate token: %w", err)
	}
	secret := "lb_" + base64.RawURLEncoding.EncodeToString(raw[:])
	t := &Token{ID: ulid.Make().String(), DomainID: domainID, Name: name, Role: role, Branches: branches, ExpiresAt: expiresAt}
	err := s.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO tokens (domain_id, id, name, token_hash, role, branches, expires_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING created_at, (SELECT name FROM domains WHERE id = $1)`,
			domainID, t.ID, name, HashToken(secret), role, branches, expiresAt).Scan(&t.CreatedAt, &t.Domain)
		return Translate(err)
	})
	if err != nil {
		return "", nil, fmt.Errorf("create token %q: %w", name, err)
	}
	return secret, t, nil
}

// TokenBySecret resolves a bearer token (owner: the token names its Domain).
func (s *Store) TokenBySecret(ctx context.Context, secret string) (*Token, error) {
	return s.TokenByHash(ctx, HashToken(secret))
}

// TokenByHash resolves a bearer token by its HashToken, on the owner's
// pool (the token names its Domain; nothing is scoped yet). It returns
// revoked and expired tokens too: the caller checks Valid. In the same
// statement it records the use (last_used_at, at most once a minute).
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*Token, error) {
	t, err := scanToken(s.Pool.QueryRow(ctx, `WITH t AS (
			SELECT t.* FROM tokens t WHERE t.token_hash = $1
		), touched AS (
			UPDATE tokens u SET last_used_at = now() FROM t
			 WHERE u.domain_id = t.domain_id AND u.id = t.id AND t.revoked_at IS NULL
			   AND (t.expires_at IS NULL OR t.expires_at > now())
			   AND (t.last_used_at IS NULL OR t.last_used_at < now() - interval '1 minute')
			RETURNING u.last_used_at
		)
		SELECT `+tokenColumns+` FROM t JOIN domains d ON d.id = t.domain_id`, hash))
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("look up token: %w", err)
	}
	return t, nil
}

// Tokens lists the tokens of a Domain (never their secrets) ordered by
// id, after the id after, at most limit.
func (s *Store) Tokens(ctx context.Context, domainID int32, after string, limit int) ([]Token, error) {
	var out []Token
	err := s.Read(ctx, domainID, `SELECT `+tokenColumns+` FROM tokens t JOIN domains d ON d.id = t.domain_id
		WHERE t.domain_id = lb_domain() AND t.id > $1 ORDER BY t.id LIMIT $2`, []any{after, limit}, func(rows pgx.Rows) error {
		var err error
		out, err = pgx.AppendRows(out, rows, func(row pgx.CollectableRow) (Token, error) {
			t, err := scanToken(row)
			if err != nil {
				return Token{}, err
			}
			return *t, nil
		})
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("list tokens: %w", err)
	}
	return out, nil
}

// RevokeToken revokes a token of the Domain by id (or, when byName, by
// name) and returns it. Revoking a revoked token changes nothing. A token
// of no such id is ErrNotFound.
func (s *Store) RevokeToken(ctx context.Context, domainID int32, idOrName string, byName bool) (*Token, error) {
	col := "id"
	if byName {
		col = "name"
	}
	var t *Token
	err := s.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		var id string
		err := tx.QueryRow(ctx, `UPDATE tokens SET revoked_at = coalesce(revoked_at, now())
			WHERE domain_id = lb_domain() AND `+col+` = $1 RETURNING id`, idOrName).Scan(&id)
		if err != nil {
			return Translate(err)
		}
		t, err = scanToken(tx.QueryRow(ctx, `SELECT `+tokenColumns+` FROM tokens t JOIN domains d ON d.id = t.domain_id
			WHERE t.domain_id = lb_domain() AND t.id = $1`, id))
		return err
	})
	if err != nil {
		return nil, fmt.Errorf("revoke token %q: %w", idOrName, err)
	}
	return t, nil
}
