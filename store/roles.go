package store

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/lberr"
)

// AppRole is the NOLOGIN role every request transaction runs as, subject to
// row-level security.
const AppRole = "lorebase_app"

// EnsureRequestRole creates the login role that appURL names, with the
// password appURL holds, when it does not exist, and makes it a member of
// lorebase_app. It refuses a role that is the owner, a superuser, may
// create roles or bypass row-level security, or is a member of any role
// but lorebase_app: SQL run on a request connection must never be able to
// become the owner. The owner (ownerURL) needs CREATEROLE (or to be a
// superuser) when the role is absent.
func EnsureRequestRole(ctx context.Context, ownerURL, appURL string) error {
	ac, err := pgx.ParseConfig(appURL)
	if err != nil {
		return fmt.Errorf("parse database.app_url: %w", err)
	}
	oc, err := pgx.ParseConfig(ownerURL)
	if err != nil {
		return fmt.Errorf("parse database.url: %w", err)
	}
	role := ac.User
	if role == "" {
		return errors.New("database.app_url names no user: it must name the login role of request connections")
	}
	if role == oc.User || role == AppRole {
		return fmt.Errorf("database.app_url names the role %q: it must be a login role of its own, neither the owner nor %s", role, AppRole)
	}
	conn, err := pgx.Connect(ctx, ownerURL)
	if err != nil {
		return fmt.Errorf("connect as the owner: %w", err)
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_roles WHERE rolname = $1)`, role).Scan(&exists); err != nil {
		return fmt.Errorf("look up role %q: %w", role, err)
	}
	if !exists {
		// NOINHERIT: the role's session holds no privilege at all until a
		// transaction switches to lorebase_app, which Keeper does first.
		stmt := "CREATE ROLE " + pgx.Identifier{role}.Sanitize() + " LOGIN NOINHERIT"
		if ac.Password != "" {
			stmt += " PASSWORD " + QuoteLiteral(ac.Password)
		}
		if _, err := conn.Exec(ctx, stmt); err != nil && !lberr.IsCode(err, pgerrcode.DuplicateObject) && !lberr.IsCode(err, pgerrcode.UniqueViolation) {
			return fmt.Errorf("create request role %q (the owner needs CREATEROLE): %w", role, err)
		}
	}
	if _, err := conn.Exec(ctx, "GRANT "+AppRole+" TO "+pgx.Identifier{role}.Sanitize()); err != nil &&
		!lberr.IsCode(err, pgerrcode.DuplicateObject) && !lberr.IsCode(err, pgerrcode.UniqueViolation) {
		return fmt.Errorf("grant %s to %q: %w", AppRole, role, err)
	}
	return checkRequestRole(ctx, conn, role)
}

// checkRequestRole refuses a request role that could leave lorebase_app.
func checkRequestRole(ctx context.Context, q interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}, role string) error {
	var super, createRole, bypass bool
	var others []string
	err := q.QueryRow(ctx, `SELECT r.rolsuper, r.rolcreaterole, r.rolbypassrls,
			coalesce((SELECT array_agg(g.rolname::text ORDER BY g.rolname) FROM pg_auth_members m JOIN pg_roles g ON g.oid = m.roleid
			           WHERE m.member = r.oid AND g.rolname <> $2), '{}')
		FROM pg_roles r WHERE r.rolname = $1`, role, AppRole).Scan(&super, &createRole, &bypass, &others)
	if err != nil {
		return fmt.Errorf("inspect request role %q: %w", role, err)
	}
	switch {
	case super:
		return fmt.Errorf("request role %q is a superuser: it must be a plain login role, a member of %s only", role, AppRole)
	case createRole || bypass:
		return fmt.Errorf("request role %q may create roles or bypass row-level security: it must be a plain login role, a member of %s only", role, AppRole)
	case len(others) > 0:
		return fmt.Errorf("request role %q is a member of %v besides %s: it must be a member of %s only", role, others, AppRole, AppRole)
	}
	return nil
}

// CheckRequestRole verifies, on a request connection, that its login role
// cannot become the owner: it is not a superuser, cannot bypass
// row-level security, and is a member of lorebase_app only. Keeper refuses
// to serve otherwise. Without database.app_url (requests log in as the
// owner) it reports ErrSharedRequestRole.
func (s *Store) CheckRequestRole(ctx context.Context) error {
	if !s.SeparateRequestRole {
		return ErrSharedRequestRole
	}
	var role string
	if err := s.Requests.QueryRow(ctx, `SELECT session_user::text`).Scan(&role); err != nil {
		return fmt.Errorf("check request role: %w", err)
	}
	return checkRequestRole(ctx, s.Requests, role)
}

// ErrSharedRequestRole: requests log in as the owner (no database.app_url);
// row-level security then holds only as long as no SQL is injected.
var ErrSharedRequestRole = errors.New("requests connect as the owner and switch to lorebase_app with SET ROLE: set database.app_url (LOREBASE_DATABASE_APP_URL) so SQL on a request connection can never become the owner")
