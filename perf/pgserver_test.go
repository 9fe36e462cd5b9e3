package perf_test

import (
	"context"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/perf"
)

// newPerfServer is a perf server in sub of a directory of the test's, on
// a free port, taken down when the test ends.
func newPerfServer(t *testing.T, sub string) *perf.PerfServer {
	t.Helper()
	dir := t.TempDir()
	// The postgres user runs the server when the tests run as root.
	require.NoError(t, os.Chmod(filepath.Dir(dir), 0o755))
	require.NoError(t, os.Chmod(dir, 0o755))
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	srv := &perf.PerfServer{Dir: filepath.Join(dir, sub), Port: port}
	t.Cleanup(func() { _ = srv.Down(context.Background()) })
	return srv
}

func TestPerfServerUpDown(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	srv := newPerfServer(t, filepath.Join("nested", "perf-pg"))
	port := srv.Port

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

// TestPerfServerStartsOnceOnHugePages: Up --huge-pages on a stopped server
// reserves the pages its settings need before starting it, and starts it
// once (it used to start it, stop it and start it again on them); Stop
// gives the pages back. It changes vm.nr_hugepages, so it runs only as
// root on a kernel with huge pages.
func TestPerfServerStartsOnceOnHugePages(t *testing.T) {
	t.Parallel()
	if os.Geteuid() != 0 {
		t.Skip("reserving huge pages needs root")
	}
	f, err := os.OpenFile("/proc/sys/vm/nr_hugepages", os.O_WRONLY, 0)
	if err != nil {
		t.Skipf("vm.nr_hugepages not writable here: %v", err)
	}
	require.NoError(t, f.Close())
	total := func() int64 {
		t.Helper()
		b, err := os.ReadFile("/proc/meminfo")
		require.NoError(t, err)
		for _, line := range strings.Split(string(b), "\n") {
			if f := strings.Fields(line); len(f) == 2 && f[0] == "HugePages_Total:" {
				n, err := strconv.ParseInt(f[1], 10, 64)
				require.NoError(t, err)
				return n
			}
		}
		t.Skip("no huge pages in /proc/meminfo")
		return 0
	}
	before := total()
	ctx := context.Background()
	srv := newPerfServer(t, "perf-pg")
	starts := func() int {
		t.Helper()
		b, err := os.ReadFile(filepath.Join(srv.Dir, "postgres.log"))
		require.NoError(t, err)
		return strings.Count(string(b), "database system is ready to accept connections")
	}

	// The profile's settings applied once, then the server stopped.
	_, err = srv.Up(ctx, "dev")
	require.NoError(t, err)
	require.NoError(t, srv.Stop(ctx))
	was := starts()

	srv.HugePages = true
	url, err := srv.Up(ctx, "dev")
	if err != nil && strings.Contains(err.Error(), "the kernel reserved") {
		// Memory in use or fragmented on this host: not the code's doing.
		t.Skipf("the host could not give the huge pages: %v", err)
	}
	require.NoError(t, err)
	require.Equal(t, was+1, starts(), "one start on the huge pages")
	_, err = os.Stat(filepath.Join(srv.Dir, "hugepages"))
	require.NoError(t, err, "the pages reserved are noted for Stop")
	require.Greater(t, total(), before, "pages reserved")
	conn, err := pgx.Connect(ctx, url)
	require.NoError(t, err)
	require.NoError(t, conn.Close(ctx))

	again, err := srv.Up(ctx, "dev")
	require.NoError(t, err, "up on a running server on its pages")
	require.Equal(t, url, again)
	require.Equal(t, was+1, starts(), "no restart of a server already on its pages")

	require.NoError(t, srv.Stop(ctx))
	require.Equal(t, before, total(), "Stop gives the pages back")
}
