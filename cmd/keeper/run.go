package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/url"

	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/store"
)

// cmdRun is what make run does: a throwaway PostgreSQL cluster (in a fresh
// temporary directory, removed on exit) unless LOREBASE_DATABASE_URL is set,
// then migrate, the demo Domain, and serve until SIGINT or SIGTERM.
func cmdRun(ctx context.Context, args []string, stdout, stderr io.Writer) (err error) {
	fs, configPath := flags("run", stderr)
	cfg, err := loadConfig(fs, configPath, args)
	if err != nil {
		return err
	}
	log := newLogger(stderr)
	throwaway := cfg.Database.URL == ""
	if throwaway {
		fmt.Fprintln(stdout, "LOREBASE_DATABASE_URL is unset: starting a throwaway PostgreSQL cluster…")
		c, err := pgcluster.Start(ctx, pgcluster.StartOptions{Durable: true})
		if err != nil {
			return fmt.Errorf("start PostgreSQL: %w", err)
		}
		defer func() {
			if serr := c.Stop(); serr != nil && err == nil {
				err = fmt.Errorf("stop PostgreSQL: %w", serr)
			}
		}()
		u, err := pgcluster.CreateDatabase(ctx, c.URL, "lorebase")
		if err != nil {
			return err
		}
		cfg.Database.URL = u
		if cfg.Database.AppURL == "" {
			pw, err := randomToken()
			if err != nil {
				return err
			}
			if cfg.Database.AppURL, err = pgcluster.WithUser(u, "lorebase_request", pw); err != nil {
				return err
			}
		}
		fmt.Fprintf(stdout, "PostgreSQL: %s (data in %s, removed on exit)\n", redact(u), c.Dir())
	}
	if cfg.AdminToken == "" {
		if cfg.AdminToken, err = randomToken(); err != nil {
			return err
		}
	}
	if err := store.Migrate(ctx, cfg.Database.URL); err != nil {
		return err
	}
	if cfg.Database.AppURL != "" {
		if err := store.EnsureRequestRole(ctx, cfg.Database.URL, cfg.Database.AppURL); err != nil {
			return err
		}
	}
	s, err := store.Open(ctx, cfg.Database.URL, store.ConfigFrom(cfg))
	if err != nil {
		return err
	}
	defer s.Close()
	if err := checkRequestRole(ctx, s, log); err != nil {
		return err
	}
	if throwaway {
		// The cluster is ours and we are its superuser: pg_prewarm (not a
		// trusted extension) lets the Warmer keep the write path's primary
		// keys in shared buffers (jobs.keep_warm_interval).
		if _, err := s.Pool.Exec(ctx, `CREATE EXTENSION IF NOT EXISTS pg_prewarm`); err != nil {
			log.Info("pg_prewarm is not available: the write path's primary keys are not kept in shared buffers", "err", err)
		}
	}
	p, err := assemble(cfg, s, log)
	if err != nil {
		return err
	}
	token, err := loadDemo(ctx, s, p.Pipeline)
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", cfg.Listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", cfg.Listen, err)
	}
	base := "http://" + ln.Addr().String()
	fmt.Fprintf(stdout, `
Lorebase is running at %[1]s (Ctrl-C stops it).
  bootstrap admin token:     %[2]s
  admin token for "%[3]s":    %[4]s
  try: curl -H "Authorization: Bearer %[4]s" %[1]s/v1/domains/%[3]s/branches/main/records?kind=Supplier
  health %[1]s/healthz   readiness %[1]s/readyz   metrics %[1]s/metrics
`, base, cfg.AdminToken, demoDomain, token)
	srv := p.server(cfg)
	return p.serveWith(ctx, func(ctx context.Context) error { return srv.Serve(ctx, ln) })
}

// redact hides a URL's password.
func redact(u string) string {
	p, err := url.Parse(u)
	if err != nil {
		return "(unparsable URL)"
	}
	return p.Redacted()
}
