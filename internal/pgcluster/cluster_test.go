package pgcluster

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// orphanEnv makes the test binary start a cluster, print its directory and
// URL, and wait to be killed (TestClusterStopsWhenItsProcessDies).
const orphanEnv = "PGCLUSTER_TEST_ORPHAN"

func TestMain(m *testing.M) {
	if os.Getenv(orphanEnv) != "" {
		os.Exit(orphan())
	}
	os.Exit(m.Run())
}

func orphan() int {
	c, err := Start(context.Background(), StartOptions{})
	if err != nil {
		fmt.Println("error", err)
		return 1
	}
	fmt.Println(c.Dir(), c.URL)
	time.Sleep(10 * time.Minute)
	return 0
}

// TestClusterStopsWhenItsProcessDies kills (SIGKILL, nothing of the
// process runs after it) a process that started a cluster and never
// stopped it: the cluster's watchdog stops the server and removes its
// files.
func TestClusterStopsWhenItsProcessDies(t *testing.T) {
	if _, err := FindBinaries(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	cmd := exec.Command(os.Args[0], "-test.run=^$")
	cmd.Env = append(os.Environ(), orphanEnv+"=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	line, err := bufio.NewReader(out).ReadString('\n')
	if err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("read the cluster from the child: %v", err)
	}
	dir, url, ok := strings.Cut(strings.TrimSpace(line), " ")
	if !ok || dir == "error" {
		_ = cmd.Process.Kill()
		t.Fatalf("child: %s", line)
	}
	// Should the watchdog fail, stop the server and remove it here.
	t.Cleanup(func() {
		if _, err := os.Stat(filepath.Join(dir, "data")); err == nil {
			stray := &Cluster{dir: dir}
			stray.bin, _ = FindBinaries()
			if os.Geteuid() == 0 {
				stray.asUser = "postgres"
			}
			_ = stray.Stop()
		}
	})
	if err := ping(ctx, url); err != nil {
		_ = cmd.Process.Kill()
		t.Fatalf("the child's cluster does not answer: %v", err)
	}

	if err := cmd.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	_ = cmd.Wait()

	// The watchdog acts within a second or two; a minute is a deadline
	// for a busy machine, not a measurement.
	deadline := time.Now().Add(time.Minute)
	for {
		_, statErr := os.Stat(dir)
		pingErr := ping(ctx, url)
		if errors.Is(statErr, os.ErrNotExist) && pingErr != nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("a minute after its process was killed: cluster directory %s present: %v, server answers: %v",
				dir, statErr == nil, pingErr == nil)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// TestStopEndsTheWatchdog: after Stop the watchdog has ended (Stop waits
// for it) and the cluster's files are gone.
func TestStopEndsTheWatchdog(t *testing.T) {
	if _, err := FindBinaries(); err != nil {
		t.Skip(err)
	}
	ctx := context.Background()
	c, err := Start(ctx, StartOptions{})
	if err != nil {
		t.Fatal(err)
	}
	dir, url, watchdog := c.Dir(), c.URL, c.watchdog
	if watchdog == nil {
		_ = c.Stop()
		t.Fatal("Start left no watchdog")
	}
	if err := watchdog.Process.Signal(syscall.Signal(0)); err != nil {
		_ = c.Stop()
		t.Fatalf("the watchdog is not running while the cluster is: %v", err)
	}
	if err := c.Stop(); err != nil {
		t.Fatal(err)
	}
	if watchdog.ProcessState == nil {
		t.Fatal("Stop returned before the watchdog ended")
	}
	if _, err := os.Stat(dir); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("cluster directory after Stop: %v", err)
	}
	if ping(ctx, url) == nil {
		t.Fatal("the server answers after Stop")
	}
}

func ping(ctx context.Context, url string) error {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, url)
	if err != nil {
		return err
	}
	return conn.Close(ctx)
}
