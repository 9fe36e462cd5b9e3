package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// CreateDatabase creates an empty database (no migrations) and returns its URL.
func CreateDatabase(ctx context.Context, adminURL, name string) (string, error) {
	if err := CreateDatabaseFrom(ctx, adminURL, name, ""); err != nil {
		return "", err
	}
	return WithDatabase(adminURL, name)
}

// CreateDatabaseFrom creates database name as a clone of template (an
// empty one when template is ""), waiting up to 15 s for the template's
// last connections to go away.
func CreateDatabaseFrom(ctx context.Context, adminURL, name, template string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to server: %w", err)
	}
	defer conn.Close(ctx)
	stmt := "CREATE DATABASE " + pgx.Identifier{name}.Sanitize()
	if template != "" {
		stmt += " TEMPLATE " + pgx.Identifier{template}.Sanitize()
	}
	// A clone fails while anyone is connected to the template; the
	// migration's connections take a moment to go away.
	deadline := time.Now().Add(15 * time.Second)
	for {
		_, err := conn.Exec(ctx, stmt)
		if err == nil {
			return nil
		}
		var pgErr *pgconn.PgError
		if !errors.As(err, &pgErr) || pgErr.Code != pgerrcode.ObjectInUse || time.Now().After(deadline) {
			return fmt.Errorf("create database %s: %w", name, err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// DropDatabase drops a database, closing its connections.
func DropDatabase(ctx context.Context, adminURL, name string) error {
	conn, err := pgx.Connect(ctx, adminURL)
	if err != nil {
		return fmt.Errorf("connect to server: %w", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
		return fmt.Errorf("drop database %s: %w", name, err)
	}
	return nil
}
