// Command keeper is Lorebase's HTTP service and its administration:
//
//	keeper serve    serve the HTTP API (refuses a database whose migrations are behind)
//	keeper migrate  apply every migration (safe to run twice)
//	keeper token create --domain D --name N --role R [--branches a,b] [--expires-in 24h]
//	keeper token list   --domain D
//	keeper token revoke --domain D (--id ID | --name N)
//	keeper verify --domain D  check the hash chain of every Revision
//	keeper demo     create the demo Domain "supply" and print an admin token for it
//	keeper run      a throwaway PostgreSQL (unless LOREBASE_DATABASE_URL is set), migrate, demo, serve
//	keeper help     this text
//
// Every subcommand takes --config FILE (or LOREBASE_CONFIG); see
// docs/configuration.md for the keys and their LOREBASE_* variables.
package main

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"os/signal"
	"strings"
	"syscall"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/store"
)

const usage = `keeper: Lorebase's HTTP service.

Usage:
  keeper serve   [--config FILE]   serve the HTTP API on listen (LOREBASE_LISTEN)
  keeper migrate [--config FILE]   apply every migration (ours, then River's); safe to run twice
  keeper token create --domain D --name N --role reader|writer|admin [--branches a,b] [--expires-in 24h]
                                   mint a token and print its secret (shown once)
  keeper token list   --domain D    list a Domain's tokens (never their secrets)
  keeper token revoke --domain D (--id ID | --name N)
                                   revoke a token (refused at once by this command's database,
                                   within auth.token_cache_ms by every Keeper)
  keeper verify  --domain D        check the hash chain of every Revision of a Domain;
                                   exits non-zero naming the first bad Revision
  keeper demo    [--config FILE]   create the Domain "supply" (schema and about 50 Records)
                                   if absent and print an admin token for it
  keeper run     [--config FILE]   for development: start a throwaway PostgreSQL when
                                   LOREBASE_DATABASE_URL is unset, migrate, demo, serve
  keeper help                      this text

Configuration: a YAML file (--config or LOREBASE_CONFIG) and LOREBASE_* variables,
for example LOREBASE_DATABASE_URL, LOREBASE_LISTEN, LOREBASE_ADMIN_TOKEN.
See docs/configuration.md.
`

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	if errors.Is(err, flag.ErrHelp) {
		os.Exit(0)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "keeper:", err)
		os.Exit(1)
	}
}

// run dispatches a subcommand.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return errors.New("no subcommand given")
	}
	cmd, rest := args[0], args[1:]
	switch cmd {
	case "serve":
		return cmdServe(ctx, rest, stderr)
	case "migrate":
		return cmdMigrate(ctx, rest, stdout, stderr)
	case "token":
		return cmdToken(ctx, rest, stdout, stderr)
	case "verify":
		return cmdVerify(ctx, rest, stdout, stderr)
	case "demo":
		return cmdDemo(ctx, rest, stdout, stderr)
	case "run":
		return cmdRun(ctx, rest, stdout, stderr)
	case "help", "-h", "--help", "-help":
		fmt.Fprint(stdout, usage)
		return nil
	}
	fmt.Fprint(stderr, usage)
	return fmt.Errorf("unknown subcommand %q", cmd)
}

// flags is a subcommand's flag set with --config.
func flags(name string, stderr io.Writer) (*flag.FlagSet, *string) {
	fs := flag.NewFlagSet("keeper "+name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", "", "configuration file (YAML); default $"+config.FileEnv)
	return fs, configPath
}

// loadConfig parses the flags and loads the configuration.
func loadConfig(fs *flag.FlagSet, configPath *string, args []string) (config.Config, error) {
	if err := fs.Parse(args); err != nil {
		return config.Config{}, err
	}
	if fs.NArg() > 0 {
		return config.Config{}, fmt.Errorf("unexpected arguments: %s", strings.Join(fs.Args(), " "))
	}
	path := *configPath
	if path == "" {
		path = os.Getenv(config.FileEnv)
	}
	cfg, err := config.Load(path, os.Getenv)
	if err != nil {
		return cfg, fmt.Errorf("configuration: %w", err)
	}
	return cfg, nil
}

func requireDatabase(cfg config.Config) error {
	if cfg.Database.URL == "" {
		return errors.New("no database: set LOREBASE_DATABASE_URL (or database.url in the configuration file)")
	}
	return nil
}

func newLogger(w io.Writer) *slog.Logger {
	return slog.New(slog.NewJSONHandler(w, &slog.HandlerOptions{Level: slog.LevelInfo}))
}

func cmdServe(ctx context.Context, args []string, stderr io.Writer) error {
	fs, configPath := flags("serve", stderr)
	cfg, err := loadConfig(fs, configPath, args)
	if err != nil {
		return err
	}
	if err := requireDatabase(cfg); err != nil {
		return err
	}
	return serve(ctx, cfg, newLogger(stderr))
}

// serve opens the store, refuses a database whose migrations are behind,
// and serves until ctx ends.
func serve(ctx context.Context, cfg config.Config, log *slog.Logger) error {
	s, err := store.Open(ctx, cfg.Database.URL, store.ConfigFrom(cfg))
	if err != nil {
		return err
	}
	defer s.Close()
	st, err := s.Migrations(ctx)
	if err != nil {
		return fmt.Errorf("check migrations: %w", err)
	}
	if !st.UpToDate() {
		return fmt.Errorf("%w: lorebase migrations at %d of %d (dirty: %t), River at %d of %d, %d function files pending; run `keeper migrate` first",
			store.ErrMigrationsBehind, st.Current, st.Latest, st.Dirty, st.RiverCurrent, st.RiverLatest, st.FunctionsPending)
	}
	if err := checkRequestRole(ctx, s, log); err != nil {
		return err
	}
	if cfg.AdminToken == "" {
		log.Warn("no admin_token (LOREBASE_ADMIN_TOKEN): the bootstrap admin is disabled; Domains cannot be created over HTTP")
	}
	p, err := assemble(cfg, s, log)
	if err != nil {
		return err
	}
	return p.serveWith(ctx, p.server(cfg).Run)
}

func cmdMigrate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, configPath := flags("migrate", stderr)
	cfg, err := loadConfig(fs, configPath, args)
	if err != nil {
		return err
	}
	if err := requireDatabase(cfg); err != nil {
		return err
	}
	if err := store.Migrate(ctx, cfg.Database.URL); err != nil {
		return err
	}
	if cfg.Database.AppURL != "" {
		if err := store.EnsureRequestRole(ctx, cfg.Database.URL, cfg.Database.AppURL); err != nil {
			return err
		}
	}
	fmt.Fprintln(stdout, "migrations applied")
	return nil
}

func cmdDemo(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, configPath := flags("demo", stderr)
	cfg, err := loadConfig(fs, configPath, args)
	if err != nil {
		return err
	}
	if err := requireDatabase(cfg); err != nil {
		return err
	}
	s, err := store.Open(ctx, cfg.Database.URL, store.ConfigFrom(cfg))
	if err != nil {
		return err
	}
	defer s.Close()
	token, err := loadDemo(ctx, s, commit.New(s, commit.ConfigFrom(cfg)))
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "Domain %q is ready. Admin token (shown once):\n%s\n", demoDomain, token)
	return nil
}

// randomToken is a fresh bootstrap admin token for keeper run.
func randomToken() (string, error) {
	var b [24]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("generate admin token: %w", err)
	}
	return "lbadmin_" + base64.RawURLEncoding.EncodeToString(b[:]), nil
}

// checkRequestRole refuses a request role that could become the owner and
// warns when requests share the owner's login (no database.app_url).
func checkRequestRole(ctx context.Context, s *store.Store, log *slog.Logger) error {
	err := s.CheckRequestRole(ctx)
	if errors.Is(err, store.ErrSharedRequestRole) {
		log.Warn("weaker isolation: " + err.Error())
		return nil
	}
	return err
}
