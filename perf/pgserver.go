package perf

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sys/unix"

	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/internal/storagecli"
)

// DefaultPerfDir is where `make perf-up` keeps the perf server.
const DefaultPerfDir = ".lorebase/perf-pg"

// DefaultPerfPort is the perf server's port.
const DefaultPerfPort = 55432

// PerfServer is the long-lived PostgreSQL of the perf targets: a cluster
// from the machine's binaries in Dir (data in Dir/data), listening on the
// loopback interface only, durable (fsync on), its settings from a storage
// profile. The seed databases of --seed-database live in it.
type PerfServer struct {
	Dir  string
	Port int
	// Log receives what is done (nil: nothing).
	Log io.Writer
	// HugePages has Up reserve the huge pages the server's shared memory
	// needs (root only) and Stop give them back.
	HugePages bool
}

// URL connects to the server's postgres database as superuser.
func (p PerfServer) URL() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", p.Port)
}

func (p PerfServer) data() string { return filepath.Join(p.Dir, "data") }

func (p PerfServer) logf(format string, args ...any) {
	if p.Log != nil {
		fmt.Fprintf(p.Log, format+"\n", args...)
	}
}

// Up initializes the cluster when Dir holds none, starts it when it is not
// running, applies the storage profile (storagecli.Apply: ALTER SYSTEM,
// reload) and restarts it when a changed setting needs a restart
// (shared_buffers). It writes the URL to Dir/url and returns it.
func (p PerfServer) Up(ctx context.Context, profile string) (string, error) {
	if _, err := storagecli.Named(profile); err != nil {
		return "", err
	}
	abs, err := filepath.Abs(p.Dir)
	if err != nil {
		return "", fmt.Errorf("perf server directory: %w", err)
	}
	p.Dir = abs
	// The parents must let the postgres user through when run as root.
	if err := os.MkdirAll(filepath.Dir(p.Dir), 0o755); err != nil {
		return "", fmt.Errorf("create %s: %w", filepath.Dir(p.Dir), err)
	}
	if err := os.MkdirAll(p.Dir, 0o700); err != nil {
		return "", fmt.Errorf("create %s: %w", p.Dir, err)
	}
	prof, err := machineProfile(profile, memoryBytes(), diskFree(p.Dir), p.Log)
	if err != nil {
		return "", err
	}
	if _, err := os.Stat(filepath.Join(p.data(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if other, ok := nestedCluster(p.Dir); ok {
			return "", fmt.Errorf("%s holds no perf server but %s does: pass --dir %s (or a directory of its own for a new server)", p.Dir, other, other)
		}
		if err := p.initdb(ctx); err != nil {
			return "", err
		}
	}
	wanted := profileSharedBuffers(prof)
	// onHuge: the server was started on the huge pages its settings need.
	onHuge := false
	if !p.running(ctx) {
		if avail, ok := availableMemory(); ok {
			p.warnf(memoryWarning(wanted, avail))
		}
		if p.HugePages {
			// Reserved before the start, from the settings the server
			// starts with: one start, not a start and a restart on them.
			if err := p.reserveHugePages(ctx); err != nil {
				return "", err
			}
			onHuge = true
		} else {
			p.logf("perf-pg: starting PostgreSQL in %s on 127.0.0.1:%d", p.data(), p.Port)
			if err := p.pgctl(ctx, "start", "-w", "-t", "120", "-l", filepath.Join(p.Dir, "postgres.log"),
				"-o", "-p "+strconv.Itoa(p.Port)); err != nil {
				log, _ := os.ReadFile(filepath.Join(p.Dir, "postgres.log"))
				return "", fmt.Errorf("start the perf server: %w\n%s", err, tail(string(log), 2000))
			}
		}
	}
	conn, err := pgx.Connect(ctx, p.URL())
	if err != nil {
		return "", fmt.Errorf("connect to the perf server: %w", err)
	}
	// The server settings only: the table parameters belong to each
	// migrated database (ApplyProfile, --profile of the perf commands).
	settings := *prof
	settings.Tables = nil
	res, err := storagecli.Apply(ctx, conn, &settings, storagecli.ApplyOptions{})
	conn.Close(ctx)
	if err != nil {
		return "", fmt.Errorf("apply storage profile %s: %w", profile, err)
	}
	for _, s := range res.Settings {
		p.logf("perf-pg: %s = %s", s.Name, s.Wanted)
	}
	if len(res.RestartNeeded) > 0 {
		// The restart frees what the server holds now before it takes
		// the profile's shared buffers.
		if avail, ok := availableMemory(); ok {
			for _, s := range res.Settings {
				if cur, err := storagecli.ParseSize(s.Current); s.Name == "shared_buffers" && err == nil {
					avail += cur
				}
			}
			p.warnf(memoryWarning(wanted, avail))
		}
		if p.HugePages {
			// Stopped here, started by reserveHugePages below on the
			// pages the new settings need.
			p.logf("perf-pg: stopping PostgreSQL for %s", strings.Join(res.RestartNeeded, ", "))
			if err := p.pgctl(ctx, "stop", "-w", "-m", "fast"); err != nil {
				return "", fmt.Errorf("stop the perf server: %w", err)
			}
			onHuge = false
		} else {
			p.logf("perf-pg: restarting for %s", strings.Join(res.RestartNeeded, ", "))
			if err := p.pgctl(ctx, "restart", "-w", "-t", "120", "-m", "fast", "-l", filepath.Join(p.Dir, "postgres.log"),
				"-o", "-p "+strconv.Itoa(p.Port)); err != nil {
				return "", fmt.Errorf("restart the perf server: %w", err)
			}
		}
	}
	switch {
	case p.HugePages && !onHuge:
		if err := p.reserveHugePages(ctx); err != nil {
			return "", err
		}
	case !p.HugePages:
		if _, err := os.Stat(filepath.Join(p.Dir, hugePagesFile)); errors.Is(err, os.ErrNotExist) {
			h, ok := readHugePages()
			p.warnf(hugePagesWarning(wanted, h, ok))
		}
	}
	url := p.URL()
	if err := os.WriteFile(filepath.Join(p.Dir, "url"), []byte(url+"\n"), 0o644); err != nil {
		return "", fmt.Errorf("write the URL: %w", err)
	}
	return url, nil
}

func (p PerfServer) warnf(msg string) {
	if msg != "" {
		p.logf("perf-pg: warning: %s", msg)
	}
}

// machineProfile is the named storage profile as the perf server applies
// it on a machine with total bytes of memory and free bytes of disk where
// the data lives (0: unknown). A named profile assumes its own memory
// (10m: 64 GiB); on a machine with less, effective_cache_size (the
// profile's 3/4 of its memory, shared buffers and the page cache
// together) would tell the planner of more cache than the machine has
// (48GB on a 24 GiB machine), so it is set to 3/4 of the machine's memory
// instead. The WAL between two checkpoints grows to max_wal_size (10m:
// 16GB) beside the data: where that is more than an eighth of the free
// disk it is lowered to that eighth in whole GB (at least 1GB), and
// min_wal_size to a quarter of it as the profile has it, so a long load
// cannot fill the disk with WAL (a 10M load writes 44 GB of data). Everything else stays the profile's (shared_buffers included,
// which memoryWarning checks against the memory available), so runs of a
// named profile remain comparable across machines; what was fitted is
// logged.
func machineProfile(name string, total, free int64, log io.Writer) (*storagecli.Profile, error) {
	prof, err := storagecli.Named(name)
	if err != nil {
		return nil, err
	}
	fit := func(setting, value, why string) {
		for i, s := range prof.Settings {
			if s.Name == setting && s.Value != value {
				if log != nil {
					fmt.Fprintf(log, "perf: storage profile %s: %s = %s, not %s: %s\n", name, setting, value, s.Value, why)
				}
				prof.Settings[i].Value = value
			}
		}
	}
	if total > 0 && total < prof.Memory {
		fit("effective_cache_size", storagecli.FormatSetting(total/4*3/(1<<20)*(1<<20)),
			fmt.Sprintf("the machine has %s of memory, the profile assumes %s", storagecli.HumanSize(total), storagecli.HumanSize(prof.Memory)))
	}
	if free > 0 {
		for _, s := range prof.Settings {
			wal, err := storagecli.ParseSize(s.Value)
			if s.Name != "max_wal_size" || err != nil || wal <= free/8 {
				continue
			}
			const gib = int64(1) << 30
			why := fmt.Sprintf("the disk holding the data has %s free", storagecli.HumanSize(free))
			fitted := max(free/8/gib, 1) * gib
			fit("max_wal_size", storagecli.FormatSetting(fitted), why)
			// The WAL kept for reuse, as the profile sizes it from
			// max_wal_size.
			fit("min_wal_size", storagecli.FormatSetting(fitted/4), why)
			break
		}
	}
	return prof, nil
}

// diskFree is the space an unprivileged user may still write on the file
// system holding path (0 where it cannot be told).
func diskFree(path string) int64 {
	var st unix.Statfs_t
	if err := unix.Statfs(path, &st); err != nil {
		return 0
	}
	return int64(st.Bavail) * int64(st.Bsize) //nolint:unconvert // Bsize's type differs between systems
}

// profileSharedBuffers is the profile's shared_buffers in bytes (0 when it
// sets none).
func profileSharedBuffers(prof *storagecli.Profile) int64 {
	for _, s := range prof.Settings {
		if s.Name == "shared_buffers" {
			if b, err := storagecli.ParseSize(s.Value); err == nil {
				return b
			}
		}
	}
	return 0
}

// memoryWarning says when shared buffers of the given size would take more
// than three quarters of the memory available: the servers, builds and
// tests beside it can then make the kernel kill the server for memory,
// which loses a long load's unlogged tables. "" when they fit.
func memoryWarning(sharedBuffers, available int64) string {
	if sharedBuffers <= 0 || available <= 0 || sharedBuffers*4 <= available*3 {
		return ""
	}
	return fmt.Sprintf("shared_buffers %s is %d%% of the memory available now (%s); other servers, builds or tests beside it may make the kernel kill it for memory: stop them or use a smaller profile",
		storagecli.HumanSize(sharedBuffers), sharedBuffers*100/available, storagecli.HumanSize(available))
}

// availableMemory is MemAvailable of /proc/meminfo: the memory that can be
// taken without swapping (false where the file does not tell).
func availableMemory() (int64, bool) {
	b, err := os.ReadFile("/proc/meminfo")
	if err != nil {
		return 0, false
	}
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) >= 2 && f[0] == "MemAvailable:" {
			kb, err := strconv.ParseInt(f[1], 10, 64)
			return kb << 10, err == nil
		}
	}
	return 0, false
}

// ApplyProfile applies a storage profile (storagecli.Apply) to a migrated
// database: its partitions' storage parameters, and the server settings
// when they differ (a setting needing a restart is reported, not applied).
func ApplyProfile(ctx context.Context, url, profile string, log io.Writer) error {
	if _, err := storagecli.Named(profile); err != nil {
		return err
	}
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return fmt.Errorf("apply storage profile %s: connect: %w", profile, err)
	}
	defer conn.Close(ctx)
	// The server's data directory, when this machine holds it (a server
	// elsewhere, or a role that may not read the setting: 0, not fitted).
	var dir string
	var free int64
	if err := conn.QueryRow(ctx, `SELECT setting FROM pg_settings WHERE name = 'data_directory'`).Scan(&dir); err == nil && dir != "" {
		free = diskFree(dir)
	}
	prof, err := machineProfile(profile, memoryBytes(), free, log)
	if err != nil {
		return err
	}
	res, err := storagecli.Apply(ctx, conn, prof, storagecli.ApplyOptions{})
	if err != nil {
		return fmt.Errorf("apply storage profile %s: %w", profile, err)
	}
	if log != nil && res.Changed() {
		fmt.Fprint(log, profileChanges(profile, res))
	}
	return nil
}

// profileChanges tells what ApplyProfile wrote: each server setting with
// the value it replaced (a value set by hand, ALTER SYSTEM included, is
// overwritten by the profile's), then the count of table parameters and
// the settings waiting for a restart.
func profileChanges(profile string, res *storagecli.ApplyResult) string {
	var b strings.Builder
	for _, s := range res.Settings {
		fmt.Fprintf(&b, "perf: storage profile %s: %s = %s (was %s)\n", profile, s.Name, s.Wanted, s.Current)
	}
	restart := strings.Join(res.RestartNeeded, ", ")
	if restart == "" {
		restart = "none"
	}
	fmt.Fprintf(&b, "perf: storage profile %s: %d settings, %d table parameters changed; restart needed for: %s\n",
		profile, len(res.Settings), len(res.Tables), restart)
	return b.String()
}

// Stop stops the server and keeps its data: Up starts it again with its
// seed databases. It gives back the huge pages Up reserved for it.
func (p PerfServer) Stop(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(p.data(), "PG_VERSION")); err == nil && p.running(ctx) {
		p.logf("perf-pg: stopping PostgreSQL in %s", p.data())
		if err := p.pgctl(ctx, "stop", "-w", "-m", "fast"); err != nil {
			return fmt.Errorf("stop the perf server: %w", err)
		}
	}
	return p.releaseHugePages(ctx)
}

// Down stops the server and deletes Dir, seed databases included. A Dir
// that holds no server of its own but another server's directory (its
// parent, given by mistake) is refused, and nothing is removed.
func (p PerfServer) Down(ctx context.Context) error {
	if _, err := os.Stat(filepath.Join(p.data(), "PG_VERSION")); errors.Is(err, os.ErrNotExist) {
		if other, ok := nestedCluster(p.Dir); ok {
			return fmt.Errorf("%s holds no perf server but %s does: not removed (pass --dir %s to remove that one)", p.Dir, other, other)
		}
	}
	if err := p.Stop(ctx); err != nil {
		return err
	}
	if err := os.RemoveAll(p.Dir); err != nil {
		return fmt.Errorf("remove %s: %w", p.Dir, err)
	}
	p.logf("perf-pg: removed %s", p.Dir)
	return nil
}

// nestedCluster finds a perf server's directory one level below dir (a
// cluster in dir/NAME/data): dir is then that server's parent, not a
// server directory, and Up would start a new empty server beside it on the
// same port while Down would delete it.
func nestedCluster(dir string) (string, bool) {
	m, err := filepath.Glob(filepath.Join(dir, "*", "data", "PG_VERSION"))
	if err != nil || len(m) == 0 {
		return "", false
	}
	return filepath.Dir(filepath.Dir(m[0])), true
}

func (p PerfServer) initdb(ctx context.Context) error {
	p.logf("perf-pg: initdb %s", p.data())
	if os.Geteuid() == 0 {
		if out, err := exec.CommandContext(ctx, "chown", "-R", "postgres:postgres", p.Dir).CombinedOutput(); err != nil {
			return fmt.Errorf("chown %s: %w: %s", p.Dir, err, out)
		}
	}
	if err := p.run(ctx, "initdb", "-D", p.data(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C"); err != nil {
		return err
	}
	conf := strings.Join([]string{
		"",
		"# perf server (perf/cmd/perfpg); the storage profile is in postgresql.auto.conf",
		"listen_addresses = '127.0.0.1'",
		fmt.Sprintf("port = %d", p.Port),
		fmt.Sprintf("unix_socket_directories = '%s'", p.Dir),
		"max_connections = 300",
		"logging_collector = off",
		"log_min_messages = warning",
		"",
	}, "\n")
	f, err := os.OpenFile(filepath.Join(p.data(), "postgresql.conf"), os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		return fmt.Errorf("open postgresql.conf: %w", err)
	}
	_, err = f.WriteString(conf)
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("write postgresql.conf: %w", err)
	}
	return nil
}

func (p PerfServer) running(ctx context.Context) bool {
	return p.pgctl(ctx, "status") == nil
}

func (p PerfServer) pgctl(ctx context.Context, args ...string) error {
	return p.run(ctx, "pg_ctl", append([]string{"-D", p.data()}, args...)...)
}

// command is a PostgreSQL binary's command, run as the postgres user when
// run as root.
func (p PerfServer) command(ctx context.Context, name string, args ...string) (*exec.Cmd, error) {
	bin, err := pgcluster.FindBinaries()
	if err != nil {
		return nil, err
	}
	path := filepath.Join(bin, name)
	var cmd *exec.Cmd
	if os.Geteuid() == 0 {
		cmd = exec.CommandContext(ctx, "runuser", append([]string{"-u", "postgres", "--", path}, args...)...)
	} else {
		cmd = exec.CommandContext(ctx, path, args...)
	}
	cmd.Dir = os.TempDir()
	return cmd, nil
}

// run runs a PostgreSQL binary (command).
func (p PerfServer) run(ctx context.Context, name string, args ...string) error {
	cmd, err := p.command(ctx, name, args...)
	if err != nil {
		return err
	}
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w: %s", name, err, strings.TrimSpace(string(out)))
	}
	return nil
}

func tail(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[len(s)-n:]
}
