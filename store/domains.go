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

// Domain is a tenant: one knowledge base.
type Domain struct {
	ID        int32     `json:"-"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// emptySchema is the compiled schema of a new Domain's main branch.
const emptySchema = `{"kinds":{},"relations":{}}`

// CreateDomain creates a Domain with its branch main (owner; bootstrap admin
// only). A taken name is ErrConflict.
func (s *Store) CreateDomain(ctx context.Context, name string) (*Domain, error) {
	var d Domain
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO domains (name) VALUES ($1) RETURNING id, name, created_at`, name).
			Scan(&d.ID, &d.Name, &d.CreatedAt)
		if err != nil {
			return Translate(err)
		}
		var branchID int32
		if err := tx.QueryRow(ctx, `INSERT INTO refs (domain_id, name) VALUES ($1, 'main') RETURNING id`, d.ID).Scan(&branchID); err != nil {
			return fmt.Errorf("create branch main: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO schemas (domain_id, branch_id, seq, document, compiled)
			VALUES ($1, $2, 0, '{"kinds":[],"relations":[]}', $3)`, d.ID, branchID, emptySchema)
		if err != nil {
			return fmt.Errorf("create schema of main: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create domain %q: %w", name, err)
	}
	return &d, nil
}

// Domains lists every Domain (owner; bootstrap admin only).
func (s *Store) Domains(ctx context.Context) ([]Domain, error) {
	rows, err := s.Pool.Query(ctx, `SELECT id, name, created_at FROM domains ORDER BY name`)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	ds, err := pgx.CollectRows(rows, pgx.RowToStructByPos[Domain])
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	return ds, nil
}

// DomainByName resolves a Domain's name to its id (owner: the name in a
// request path is resolved before the request is scoped; authorization
// then compares it with the token's Domain).
func (s *Store) DomainByName(ctx context.Context, name string) (*Domain, error) {
	var d Domain
	err := s.Pool.QueryRow(ctx, `SELECT id, name, created_at FROM domains WHERE name = $1`, name).
		Scan(&d.ID, &d.Name, &d.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("domain %q: %w", name, Translate(err))
	}
	return &d, nil
}

// Token is a bearer token's grant. The secret itself is never stored.
type Token struct {
	ID        string    `json:"id"`
	DomainID  int32     `json:"-"`
	Domain    string    `json:"domain"`
	Name      string    `json:"name"`
	Role      string    `json:"role"`
	Branches  []string  `json:"branches"`
	CreatedAt time.Time `json:"created_at"`
}

// HashToken is how a token is stored and looked up.
func HashToken(secret string) []byte {
	h := sha256.Sum256([]byte(secret))
	return h[:]
}

// CreateToken mints a token for a Domain, scoped to it, and returns the
// secret (shown once). A name taken in the Domain is ErrConflict.
func (s *Store) CreateToken(ctx context.Context, domainID int32, name, role string, branches []string) (string, *Token, error) {
	var raw [32]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", nil, fmt.Errorf("generate token: %w", err)
	}
	secret := "lb_" + base64.RawURLEncoding.EncodeToString(raw[:])
	t := &Token{ID: ulid.Make().String(), DomainID: domainID, Name: name, Role: role, Branches: branches}
	err := s.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO tokens (domain_id, id, name, token_hash, role, branches)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING created_at, (SELECT name FROM domains WHERE id = $1)`,
			domainID, t.ID, name, HashToken(secret), role, branches).Scan(&t.CreatedAt, &t.Domain)
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

// TokenByHash resolves a bearer token by its HashToken.
func (s *Store) TokenByHash(ctx context.Context, hash []byte) (*Token, error) {
	var t Token
	err := s.Pool.QueryRow(ctx, `SELECT t.id, t.domain_id, d.name, t.name, t.role, t.branches, t.created_at
		FROM tokens t JOIN domains d ON d.id = t.domain_id WHERE t.token_hash = $1`, hash).
		Scan(&t.ID, &t.DomainID, &t.Domain, &t.Name, &t.Role, &t.Branches, &t.CreatedAt)
	if err != nil {
		if errors.Is(err, pgx.ErrNoRows) {
			return nil, ErrNotFound
		}
		return nil, fmt.Errorf("look up token: %w", err)
	}
	return &t, nil
}
