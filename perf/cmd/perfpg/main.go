// Command perfpg runs the long-lived PostgreSQL of the perf targets from
// the machine's binaries (make perf-up, make perf-stop, make perf-down):
//
//	go run ./perf/cmd/perfpg up --profile 1m   # init, start, apply the storage profile, print the URL
//	go run ./perf/cmd/perfpg up --profile 10m --huge-pages   # as root: shared memory on huge pages
//	go run ./perf/cmd/perfpg url               # print the URL of a running server
//	go run ./perf/cmd/perfpg stop              # stop it and keep its data (up starts it again)
//	go run ./perf/cmd/perfpg down              # stop it and delete its data, seed databases included
//
// The data lives under --dir (.lorebase/perf-pg); the server listens on
// 127.0.0.1 only.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"

	"github.com/lorebase/lorebase/perf"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "perfpg:", err)
		os.Exit(1)
	}
}

func run() error {
	if len(os.Args) < 2 {
		return errors.New("usage: perfpg up|url|stop|down [--dir DIR] [--port N] [--profile dev|1m|10m] [--huge-pages]")
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet("perfpg "+cmd, flag.ExitOnError)
	dir := fs.String("dir", perf.DefaultPerfDir, "directory of the server (data in DIR/data)")
	port := fs.Int("port", perf.DefaultPerfPort, "port on 127.0.0.1")
	profile := fs.String("profile", "1m", "storage profile (storage apply --profile): dev, 1m or 10m")
	hugePages := fs.Bool("huge-pages", false, "up: reserve the huge pages the server's shared memory needs (root; vm.nr_hugepages) and start it on them (a running one is restarted); stop and down give them back")
	_ = fs.Parse(os.Args[2:])

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	srv := perf.PerfServer{Dir: *dir, Port: *port, Log: os.Stderr, HugePages: *hugePages}
	switch cmd {
	case "up":
		url, err := srv.Up(ctx, *profile)
		if err != nil {
			return err
		}
		fmt.Println(url)
	case "url":
		b, err := os.ReadFile(filepath.Join(*dir, "url"))
		if err != nil {
			return fmt.Errorf("no perf server in %s (make perf-up): %w", *dir, err)
		}
		fmt.Println(strings.TrimSpace(string(b)))
	case "stop":
		return srv.Stop(ctx)
	case "down":
		return srv.Down(ctx)
	default:
		return fmt.Errorf("unknown command %q: want up, url, stop or down", cmd)
	}
	return nil
}
