package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// keeperProc is a Keeper running as a process of its own.
type keeperProc struct {
	t    *testing.T
	bin  string
	env  []string
	base string
	cmd  *exec.Cmd
	log  *bytes.Buffer
}

// buildKeeper builds this command into a temporary directory.
func buildKeeper(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "keeper")
	out, err := exec.Command("go", "build", "-o", bin, ".").CombinedOutput()
	require.NoError(t, err, "%s", out)
	return bin
}

func (k *keeperProc) start() {
	k.t.Helper()
	k.log = &bytes.Buffer{}
	k.cmd = exec.Command(k.bin, "serve")
	k.cmd.Env = k.env
	k.cmd.Stderr = k.log
	require.NoError(k.t, k.cmd.Start())
	require.Eventually(k.t, func() bool {
		r, err := http.Get(k.base + "/healthz")
		if err != nil {
			return false
		}
		r.Body.Close()
		return r.StatusCode == http.StatusOK
	}, 30*time.Second, 50*time.Millisecond, "keeper did not start: %s", k.log)
}

// kill9 kills the process with SIGKILL: no shutdown, no job stopped.
func (k *keeperProc) kill9() {
	k.t.Helper()
	require.NoError(k.t, k.cmd.Process.Kill())
	_ = k.cmd.Wait()
}

func (k *keeperProc) call(method, path, token string, body any) (int, map[string]any) {
	k.t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		require.NoError(k.t, err)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, k.base+path, rd)
	require.NoError(k.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	resp, err := http.DefaultClient.Do(req)
	require.NoError(k.t, err)
	defer resp.Body.Close()
	var m map[string]any
	_ = json.NewDecoder(resp.Body).Decode(&m)
	return resp.StatusCode, m
}

// TestKill9DuringCopyAndDelete: Keeper is killed with SIGKILL in the middle
// of a branch copy and, later, of a branch deletion. Started again, it
// finishes both by itself: the copy becomes ready holding every row of its
// base exactly once, the deleted branch is gone with all its rows.
func TestKill9DuringCopyAndDelete(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and kills Keeper processes")
	}
	ctx := context.Background()
	url := pgtest.NewDatabase(t)
	appURL := pgtest.AppURL(t, url)
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := l.Addr().String()
	l.Close()
	const admin = "fault-test-admin-token-0123456789"
	k := &keeperProc{t: t, bin: buildKeeper(t), base: "http://" + addr, env: append(os.Environ(),
		"LOREBASE_DATABASE_URL="+url, "LOREBASE_DATABASE_APP_URL="+appURL, "LOREBASE_LISTEN="+addr,
		"LOREBASE_ADMIN_TOKEN="+admin, "LOREBASE_CONFIG=",
		// Small batches, so a copy takes many; a killed job is rescued
		// after 4s (River checks every 30s).
		"LOREBASE_JOBS_BATCH_TARGET=1ms", "LOREBASE_JOBS_BATCH_CONTENDED=1ms",
		"LOREBASE_JOBS_RESCUE_STUCK_AFTER=4s", "LOREBASE_JOBS_SWEEP_INTERVAL=1s")}
	k.start()
	t.Cleanup(func() {
		if k.cmd.ProcessState == nil {
			k.kill9()
		}
	})

	s, err := store.Open(ctx, url, store.Config{})
	require.NoError(t, err)
	defer s.Close()
	st, _ := k.call("POST", "/v1/domains", admin, map[string]any{"name": "acme"})
	require.Equal(t, http.StatusCreated, st)
	st, _ = k.call("PUT", "/v1/domains/acme/branches/main/schema", admin, json.RawMessage(`{"kinds":[{"name":"Thing","title":"name",
		"attributes":[{"name":"name","type":"text","required":true},{"name":"next","type":"ref","kind":"Thing"}]}],"relations":[]}`))
	require.Equal(t, http.StatusOK, st)
	const n = 4000
	changes := make([]map[string]any, 0, n)
	for i := range n {
		v := map[string]any{"name": fmt.Sprintf("thing %d", i)}
		if i > 0 {
			v["next"] = fmt.Sprintf("T-%05d", i-1)
		}
		changes = append(changes, map[string]any{"op": "put", "kind": "Thing", "key": fmt.Sprintf("T-%05d", i), "values": v})
	}
	st, body := k.call("POST", "/v1/domains/acme/branches/main/commits", admin, map[string]any{"message": "seed", "author": "t", "changes": changes})
	require.Equal(t, http.StatusCreated, st, "%v", body)

	count := func(table string, branch string) int {
		var c int
		require.NoError(t, s.Pool.QueryRow(ctx, `SELECT count(*) FROM `+table+` t JOIN refs r ON r.domain_id = t.domain_id AND r.id = t.branch_id
			WHERE r.name = $1 AND NOT coalesce((to_jsonb(t) ->> 'deleted')::boolean, false)`, branch).Scan(&c))
		return c
	}
	batches := func(branch string) (string, float64) {
		var state string
		var b float64
		err := s.Pool.QueryRow(ctx, `SELECT state, coalesce((progress ->> 'batches')::float8, 0) FROM refs WHERE name = $1`, branch).Scan(&state, &b)
		if err != nil {
			return "", 0
		}
		return state, b
	}

	// Kill during the copy.
	st, body = k.call("POST", "/v1/domains/acme/branches", admin, map[string]any{"name": "work", "from": "main", "mode": "copy"})
	require.Equal(t, http.StatusCreated, st, "%v", body)
	require.Eventually(t, func() bool { _, b := batches("work"); return b >= 3 }, 30*time.Second, 5*time.Millisecond)
	k.kill9()
	state, done := batches("work")
	require.Equal(t, store.StateCopying, state, "killed mid-copy (after %v batches)", done)
	restarted := time.Now()
	k.start()
	require.Eventually(t, func() bool { s, _ := batches("work"); return s == store.StateReady }, 3*time.Minute, 200*time.Millisecond,
		"the copy finishes after the restart: %s", k.log)
	t.Logf("copy killed after %v batches; ready %v after the restart", done, time.Since(restarted))
	for _, tbl := range []string{"mat_records", "mat_links", "mat_history", "mat_link_history"} {
		require.Equal(t, count(tbl, "main"), count(tbl, "work"), "%s: every row exactly once", tbl)
	}
	require.Equal(t, n, count("mat_records", "work"))

	// Kill during the deletion.
	st, _ = k.call("DELETE", "/v1/domains/acme/branches/work", admin, nil)
	require.Equal(t, http.StatusAccepted, st)
	require.Eventually(t, func() bool { s, b := batches("work"); return s == store.StateDeleting && b >= 3 }, 30*time.Second, 2*time.Millisecond)
	k.kill9()
	state, _ = batches("work")
	require.Equal(t, store.StateDeleting, state, "killed mid-deletion")
	require.Positive(t, count("mat_records", "work")+count("mat_history", "work"), "rows left to delete")
	restarted = time.Now()
	k.start()
	require.Eventually(t, func() bool { s, _ := batches("work"); return s == "" }, 3*time.Minute, 200*time.Millisecond,
		"the deletion finishes after the restart: %s", k.log)
	t.Logf("deletion gone %v after the restart", time.Since(restarted))
	var left int
	require.NoError(t, s.Pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM mat_records WHERE branch_id NOT IN (SELECT id FROM refs))
		+ (SELECT count(*) FROM mat_history WHERE branch_id NOT IN (SELECT id FROM refs))
		+ (SELECT count(*) FROM mat_links WHERE branch_id NOT IN (SELECT id FROM refs))`).Scan(&left))
	require.Zero(t, left, "no row of the deleted branch is left")
	require.Equal(t, n, count("mat_records", "main"), "main untouched")
	require.False(t, strings.Contains(k.log.String(), `"level":"ERROR"`), "%s", k.log)
	k.kill9()
}
