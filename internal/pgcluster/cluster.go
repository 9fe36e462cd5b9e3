package pgcluster

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"
)

// Cluster is a throwaway PostgreSQL cluster started from the machine's
// binaries. Stop removes it.
type Cluster struct {
	dir    string
	bin    string
	port   int
	asUser string // run binaries as this user (when started as root)
	// watch is the write end of the watchdog's pipe (startWatchdog):
	// closing it, or this process ending, has the watchdog stop the
	// cluster; watchdog is its process.
	watch    *os.File
	watchdog *exec.Cmd
	// URL connects to the cluster's "postgres" database as superuser.
	URL string
}

// FindBinaries returns the directory holding initdb and pg_ctl: PATH first,
// then the newest /usr/lib/postgresql/*/bin.
func FindBinaries() (string, error) {
	if p, err := exec.LookPath("initdb"); err == nil {
		if _, err := exec.LookPath("pg_ctl"); err == nil {
			return filepath.Dir(p), nil
		}
	}
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return versionOf(dirs[i]) > versionOf(dirs[j]) })
	for _, d := range dirs {
		if _, err := os.Stat(filepath.Join(d, "initdb")); err == nil {
			return d, nil
		}
	}
	return "", errors.New("no PostgreSQL binaries: initdb and pg_ctl are neither on PATH nor under /usr/lib/postgresql/*/bin")
}

func versionOf(binDir string) int {
	v, _ := strconv.Atoi(filepath.Base(filepath.Dir(binDir)))
	return v
}

// StartOptions tune a throwaway cluster.
type StartOptions struct {
	// Durable keeps fsync on (make run); tests turn it off.
	Durable bool
	// Settings are extra postgresql.conf lines (name = value).
	Settings map[string]string
	// Dir is where the cluster lives; a new temporary directory when empty.
	Dir string
}

// Start initializes and starts a new cluster listening on a free loopback
// port. As root it runs the binaries as the postgres user. The cluster
// does not outlive this process: a watchdog stops it and removes its files
// when the process ends without calling Stop (a panic, a kill, a test
// binary's timeout).
func Start(ctx context.Context, opts StartOptions) (c *Cluster, err error) {
	bin, err := FindBinaries()
	if err != nil {
		return nil, err
	}
	c = &Cluster{bin: bin}
	if os.Geteuid() == 0 {
		if _, err := user.Lookup("postgres"); err != nil {
			return nil, errors.New("running as root and no postgres user exists to run initdb as")
		}
		c.asUser = "postgres"
	}
	dir := opts.Dir
	if dir == "" {
		dir, err = os.MkdirTemp("", "lorebase-pg-")
		if err != nil {
			return nil, fmt.Errorf("create cluster directory: %w", err)
		}
	} else if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("create cluster directory: %w", err)
	}
	c.dir = dir
	if c.asUser != "" {
		if err := c.run(ctx, "chown", "-R", "postgres:postgres", dir); err != nil {
			return nil, err
		}
	}
	data := filepath.Join(dir, "data")
	if err := c.pg(ctx, "initdb", "-D", data, "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "--no-sync"); err != nil {
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("initdb: %w", err)
	}
	// The watchdog runs before the server starts, so that no moment
	// between the start and Start's return leaves a server nothing stops.
	if err := c.startWatchdog(); err != nil {
		_ = os.RemoveAll(dir)
		return nil, err
	}
	defer func() {
		if err != nil {
			c.stopWatchdog()
		}
	}()
	conf := []string{
		"listen_addresses = '127.0.0.1'",
		fmt.Sprintf("unix_socket_directories = '%s'", dir),
		"max_connections = 300",
		"shared_buffers = '256MB'",
		"jit = off",
		"log_min_messages = warning",
		"logging_collector = off",
	}
	if !opts.Durable {
		conf = append(conf, "fsync = off", "synchronous_commit = off", "full_page_writes = off")
	}
	keys := make([]string, 0, len(opts.Settings))
	for k := range opts.Settings {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		conf = append(conf, fmt.Sprintf("%s = '%s'", k, opts.Settings[k]))
	}
	f, err := os.OpenFile(filepath.Join(data, "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return nil, fmt.Errorf("open postgresql.conf: %w", err)
	}
	_, err = f.WriteString("\n" + strings.Join(conf, "\n") + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return nil, fmt.Errorf("write postgresql.conf: %w", err)
	}
	var lastErr error
	for attempt := 0; attempt < 5; attempt++ {
		port, err := freePort()
		if err != nil {
			return nil, err
		}
		c.port = port
		lastErr = c.pg(ctx, "pg_ctl", "-D", data, "-l", filepath.Join(dir, "postgres.log"), "-w", "-t", "60",
			"-o", fmt.Sprintf("-p %d", port), "start")
		if lastErr == nil {
			break
		}
	}
	if lastErr != nil {
		log, _ := os.ReadFile(filepath.Join(dir, "postgres.log"))
		_ = os.RemoveAll(dir)
		return nil, fmt.Errorf("pg_ctl start: %w\n%s", lastErr, log)
	}
	c.URL = fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", c.port)
	if err := waitReady(ctx, c.URL); err != nil {
		_ = c.Stop()
		return nil, err
	}
	return c, nil
}

// Dir is the directory holding the cluster.
func (c *Cluster) Dir() string { return c.dir }

// Halt stops the server at once (as a crash would: -m immediate),
// keeping its files; Resume starts it again on the same port.
func (c *Cluster) Halt(ctx context.Context) error {
	return c.pg(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
}

// Resume starts a halted cluster on its port and waits until it answers.
func (c *Cluster) Resume(ctx context.Context) error {
	if err := c.pg(ctx, "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-l", filepath.Join(c.dir, "postgres.log"), "-w", "-t", "60",
		"-o", fmt.Sprintf("-p %d", c.port), "start"); err != nil {
		return fmt.Errorf("pg_ctl start: %w", err)
	}
	return waitReady(ctx, c.URL)
}

// Stop stops the cluster and removes its files.
func (c *Cluster) Stop() error {
	if c == nil || c.dir == "" {
		return nil
	}
	err := c.pg(context.Background(), "pg_ctl", "-D", filepath.Join(c.dir, "data"), "-m", "immediate", "-w", "stop")
	if rerr := os.RemoveAll(c.dir); err == nil {
		err = rerr
	}
	c.dir = ""
	c.stopWatchdog()
	return err
}

// watchdogScript waits for end of file on its standard input, the read end
// of a pipe whose only write end the starting process holds: the kernel
// closes it when that process ends, however it ends. Then, unless Stop has
// already removed them, it stops the server in $1 (pg_ctl in $2, run as
// user $3 when set) and removes its files.
const watchdogScript = `while read -r _; do :; done
[ -d "$1/data" ] || exit 0
if [ -n "$3" ]; then runuser -u "$3" -- "$2/pg_ctl" -D "$1/data" -m immediate -w stop
else "$2/pg_ctl" -D "$1/data" -m immediate -w stop; fi
rm -rf "$1"`

// startWatchdog starts the process that stops the cluster when this one
// ends without Stop. It runs in a process group of its own, so that an
// interrupt sent to the terminal's group (which ends this process) does not
// end it too, and its output goes nowhere: holding this process's standard
// output would keep `go test` waiting for it.
func (c *Cluster) startWatchdog() error {
	r, w, err := os.Pipe()
	if err != nil {
		return fmt.Errorf("start the cluster's watchdog: %w", err)
	}
	cmd := exec.Command("sh", "-c", watchdogScript, "pgcluster-watchdog", c.dir, c.bin, c.asUser)
	cmd.Stdin = r
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	err = cmd.Start()
	_ = r.Close() // the watchdog holds its own copy
	if err != nil {
		_ = w.Close()
		return fmt.Errorf("start the cluster's watchdog: %w", err)
	}
	c.watch, c.watchdog = w, cmd
	return nil
}

// stopWatchdog closes the watchdog's pipe and waits for it to end: after
// Stop it finds the cluster's files gone and ends at once.
func (c *Cluster) stopWatchdog() {
	if c.watch == nil {
		return
	}
	_ = c.watch.Close()
	_ = c.watchdog.Wait() // its status says only whether it found a server to stop
	c.watch, c.watchdog = nil, nil
}

func (c *Cluster) pg(ctx context.Context, name string, args ...string) error {
	return c.run(ctx, filepath.Join(c.bin, name), args...)
}

func (c *Cluster) run(ctx context.Context, name string, args ...string) error {
	var cmd *exec.Cmd
	if c.asUser != "" && name != "chown" {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", c.asUser, "--", name}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, name, args...)
	}
	cmd.Dir = os.TempDir()
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", filepath.Base(name), err, strings.TrimSpace(string(out)))
	}
	return nil
}

func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, fmt.Errorf("find a free port: %w", err)
	}
	defer l.Close() //nolint:errcheck // a probe listener, closed to free its port
	return l.Addr().(*net.TCPAddr).Port, nil
}

func waitReady(ctx context.Context, connURL string) error {
	deadline := time.Now().Add(30 * time.Second)
	for {
		conn, err := pgx.Connect(ctx, connURL)
		if err == nil {
			_ = conn.Close(ctx)
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("PostgreSQL did not accept connections: %w", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// WithDatabase returns connURL with its database replaced by name.
func WithDatabase(connURL, name string) (string, error) {
	u, err := url.Parse(connURL)
	if err != nil {
		return "", fmt.Errorf("parse database URL: %w", err)
	}
	u.Path = "/" + name
	return u.String(), nil
}

// WithUser is connURL logging in as user with password.
func WithUser(connURL, user, password string) (string, error) {
	u, err := url.Parse(connURL)
	if err != nil {
		return "", fmt.Errorf("parse database URL: %w", err)
	}
	u.User = url.UserPassword(user, password)
	return u.String(), nil
}
