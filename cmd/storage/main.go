// Command storage tunes and inspects the Lorebase database: storage
// profiles (plan, apply), prewarm of a Domain's hot relations and a report
// of sizes, cache hit ratios and bloat. See docs/storage.md.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/lorebase/lorebase/internal/storagecli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := storagecli.Run(ctx, os.Args[1:], os.Stdout, os.Stderr, os.Getenv)
	stop()
	os.Exit(code)
}
