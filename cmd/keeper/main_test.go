package main

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// runKeeper runs a subcommand with the given environment.
func runKeeper(t *testing.T, env map[string]string, args ...string) (string, string, error) {
	t.Helper()
	for k, v := range env {
		t.Setenv(k, v)
	}
	var out, errb bytes.Buffer
	err := run(context.Background(), args, &out, &errb)
	return out.String(), errb.String(), err
}

func TestHelpAndUnknown(t *testing.T) {
	out, _, err := runKeeper(t, nil, "help")
	require.NoError(t, err)
	require.Contains(t, out, "keeper serve")
	_, _, err = runKeeper(t, nil, "frobnicate")
	require.ErrorContains(t, err, "unknown subcommand")
	_, _, err = runKeeper(t, nil)
	require.Error(t, err)
	_, _, err = runKeeper(t, map[string]string{"LOREBASE_DATABASE_URL": ""}, "migrate")
	require.ErrorContains(t, err, "LOREBASE_DATABASE_URL")
	_, _, err = runKeeper(t, nil, "token", "create", "--domain", "d")
	require.ErrorContains(t, err, "required")
	_, _, err = runKeeper(t, map[string]string{"LOREBASE_READ_PAGE_MAX_LIMIT": "0"}, "serve")
	require.ErrorContains(t, err, "read.page.max_limit")
}

func TestServeRefusesUnmigratedDatabase(t *testing.T) {
	ctx := context.Background()
	var b [4]byte
	_, _ = rand.Read(b[:])
	name := "lorebase_cmd_" + hex.EncodeToString(b[:])
	url, err := pgcluster.CreateDatabase(ctx, pgtest.AdminURL(t), name)
	require.NoError(t, err)
	t.Cleanup(func() {
		s, err := store.Open(context.Background(), pgtest.AdminURL(t), store.Config{})
		if err == nil {
			_, _ = s.Pool.Exec(context.Background(), "DROP DATABASE IF EXISTS "+name+" WITH (FORCE)")
			s.Close()
		}
	})
	env := map[string]string{"LOREBASE_DATABASE_URL": url, "LOREBASE_LISTEN": "127.0.0.1:0"}
	_, _, err = runKeeper(t, env, "serve")
	require.ErrorContains(t, err, "keeper migrate")

	out, _, err := runKeeper(t, env, "migrate")
	require.NoError(t, err)
	require.Contains(t, out, "migrations applied")
	_, _, err = runKeeper(t, env, "migrate")
	require.NoError(t, err, "safe to run twice")

	out, _, err = runKeeper(t, env, "demo")
	require.NoError(t, err)
	require.Contains(t, out, "lb_")
	out, _, err = runKeeper(t, env, "demo")
	require.NoError(t, err, "a second demo reuses the Domain")
	require.Contains(t, out, "lb_")

	out, _, err = runKeeper(t, env, "token", "create", "--domain", "supply", "--name", "cli", "--role", "writer", "--branches", "agent/*,main")
	require.NoError(t, err)
	secret := strings.TrimSpace(out)
	require.True(t, strings.HasPrefix(secret, "lb_"), out)
	s, err := store.Open(ctx, url, store.Config{})
	require.NoError(t, err)
	defer s.Close()
	tok, err := s.TokenBySecret(ctx, secret)
	require.NoError(t, err)
	require.Equal(t, []string{"agent/*", "main"}, tok.Branches)
	var records int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_records`).Scan(&records))
	require.Equal(t, 50, records)
	var vectors int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM mat_vectors WHERE kind = 'Part'`).Scan(&vectors))
	require.Equal(t, 35, vectors, "the demo Parts embed with the hash embedder")

	_, _, err = runKeeper(t, env, "token", "create", "--domain", "nope", "--name", "cli", "--role", "writer")
	require.ErrorIs(t, err, store.ErrNotFound)
	_, _, err = runKeeper(t, env, "token", "create", "--domain", "supply", "--name", "x", "--role", "owner")
	require.ErrorContains(t, err, "--role")
}

// TestTokenAndVerifyCommands: keeper token list and revoke, keeper verify
// passing on an untouched Domain and failing, naming the Revision, once
// the owner has rewritten history.
func TestTokenAndVerifyCommands(t *testing.T) {
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	env := map[string]string{"LOREBASE_DATABASE_URL": url}
	_, _, err := runKeeper(t, env, "demo")
	require.NoError(t, err)
	out, _, err := runKeeper(t, env, "token", "create", "--domain", "supply", "--name", "brief", "--role", "reader", "--expires-in", "1h")
	require.NoError(t, err)
	secret := strings.TrimSpace(out)

	out, _, err = runKeeper(t, env, "token", "list", "--domain", "supply")
	require.NoError(t, err)
	require.Contains(t, out, `"name":"brief"`)
	require.NotContains(t, out, secret)
	require.Contains(t, out, `"expires_at":"`)

	_, _, err = runKeeper(t, env, "token", "revoke", "--domain", "supply")
	require.ErrorContains(t, err, "--id")
	out, _, err = runKeeper(t, env, "token", "revoke", "--domain", "supply", "--name", "brief")
	require.NoError(t, err)
	require.Contains(t, out, "revoked")
	s, err := store.Open(ctx, url, store.Config{})
	require.NoError(t, err)
	defer s.Close()
	tok, err := s.TokenBySecret(ctx, secret)
	require.NoError(t, err)
	require.NotNil(t, tok.RevokedAt)
	_, _, err = runKeeper(t, env, "token", "revoke", "--domain", "supply", "--name", "nobody")
	require.ErrorIs(t, err, store.ErrNotFound)

	out, _, err = runKeeper(t, env, "verify", "--domain", "supply")
	require.NoError(t, err)
	require.Contains(t, out, "ok: ")
	require.Contains(t, out, "head main ")
	var id string
	require.NoError(t, s.Pool.QueryRow(ctx, `UPDATE revisions SET author = 'mallory'
		WHERE id = (SELECT id FROM revisions ORDER BY seq LIMIT 1) RETURNING id`).Scan(&id))
	_, _, err = runKeeper(t, env, "verify", "--domain", "supply")
	require.ErrorContains(t, err, "revision "+id)
}
