package perf_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/perf"
)

func TestPerfServerUpDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dir := t.TempDir()
	// The postgres user runs the server when the tests run as root.
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	srv := perf.PerfServer{Dir: filepath.Join(dir, "nested", "perf-pg"), Port: port}
	t.Cleanup(func() { _ = srv.Down(context.Background()) })

	url, err := srv.Up(ctx, "dev")
	require.NoError(t, err)
	require.Equal(t, srv.URL(), url)
	saved, err := os.ReadFile(filepath.Join(srv.Dir, "url"))
	require.NoError(t, err)
	require.Equal(t, url+"\n", string(saved))
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	var sb, fsync string
	require.NoError(t, conn.QueryRow(ctx, `SELECT current_setting('shared_buffers'), current_setting('fsync')`).Scan(&sb, &fsync))
	require.NoError(t, conn.Close(ctx))
	require.Equal(t, "512MB", sb, "the dev profile, after the restart it needs")
	require.Equal(t, "on", fsync)

	again, err := srv.Up(ctx, "dev")
	require.NoError(t, err, "up on a running server")
	require.Equal(t, url, again)

	// The server's parent directory given by mistake: Up starts no new
	// server beside it and Down removes nothing.
	parent := perf.PerfServer{Dir: filepath.Dir(srv.Dir), Port: port}
	_, err = parent.Up(ctx, "dev")
	require.ErrorContains(t, err, "pass --dir "+srv.Dir)
	require.ErrorContains(t, parent.Down(ctx), "not removed")
	_, err = os.Stat(filepath.Join(parent.Dir, "data"))
	require.ErrorIs(t, err, os.ErrNotExist, "no cluster made in the parent")
	_, err = os.Stat(filepath.Join(srv.Dir, "data", "PG_VERSION"))
	require.NoError(t, err, "the server's data kept")
	conn, err = pgx.Connect(ctx, url)
	require.NoError(t, err, "the server still running")
	require.NoError(t, conn.Close(ctx))

	// Stop keeps the data: a database made before it is there after Up.
	conn, err = pgx.Connect(ctx, url)
	require.NoError(t, err)
	_, err = conn.Exec(ctx, `CREATE DATABASE kept_seed`)
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))
	require.NoError(t, srv.Stop(ctx))
	_, err = pgx.Connect(ctx, url)
	require.Error(t, err, "stopped")
	require.NoError(t, srv.Stop(ctx), "stop on a stopped server")
	_, err = srv.Up(ctx, "dev")
	require.NoError(t, err)
	conn, err = pgx.Connect(ctx, url)
	require.NoError(t, err)
	var kept bool
	require.NoError(t, conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM pg_database WHERE datname = 'kept_seed')`).Scan(&kept))
	require.NoError(t, conn.Close(ctx))
	require.True(t, kept)

	require.NoError(t, srv.Down(ctx))
	_, err = os.Stat(srv.Dir)
	require.ErrorIs(t, err, os.ErrNotExist)
	_, err = srv.Up(ctx, "nosuch")
	require.ErrorContains(t, err, "unknown profile")
}
