package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/store"
)

//nolint:gosec // G101: usage text, not a credential
const tokenUsage = `usage:
  keeper token create --domain D --name N --role reader|writer|admin [--branches a,b] [--expires-in 24h]
  keeper token list   --domain D
  keeper token revoke --domain D (--id ID | --name N)`

// cmdToken dispatches keeper token create|list|revoke.
func cmdToken(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		return errors.New(tokenUsage)
	}
	switch args[0] {
	case "create":
		return cmdTokenCreate(ctx, args[1:], stdout, stderr)
	case "list":
		return cmdTokenList(ctx, args[1:], stdout, stderr)
	case "revoke":
		return cmdTokenRevoke(ctx, args[1:], stdout, stderr)
	}
	return errors.New(tokenUsage)
}

// openDomain loads the configuration, opens the store and resolves the
// Domain named by --domain.
func openDomain(ctx context.Context, fs *flag.FlagSet, config *string, domain *string, args []string) (*store.Store, *store.Domain, error) {
	cfg, err := loadConfig(fs, config, args)
	if err != nil {
		return nil, nil, err
	}
	if *domain == "" {
		return nil, nil, errors.New("--domain is required")
	}
	if err := requireDatabase(cfg); err != nil {
		return nil, nil, err
	}
	s, err := store.Open(ctx, cfg.Database.URL, store.ConfigFrom(cfg))
	if err != nil {
		return nil, nil, err
	}
	d, err := s.DomainByName(ctx, *domain)
	if err != nil {
		s.Close()
		return nil, nil, err
	}
	return s, d, nil
}

func cmdTokenCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, config := flags("token create", stderr)
	domain := fs.String("domain", "", "the Domain the token is for (required)")
	name := fs.String("name", "", "the token's name, unique in its Domain (required)")
	role := fs.String("role", "", "reader, writer or admin (required)")
	branches := fs.String("branches", "*", "comma-separated branch patterns a writer may write (* matches any run of characters, / included)")
	expiresIn := fs.Duration("expires-in", 0, "lifetime of the token (for example 24h); 0 never expires")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *name == "" || *role == "" {
		return errors.New("--domain, --name and --role are required")
	}
	switch *role {
	case keeper.RoleReader, keeper.RoleWriter, keeper.RoleAdmin:
	default:
		return fmt.Errorf("--role must be reader, writer or admin, not %q", *role)
	}
	if *expiresIn < 0 {
		return errors.New("--expires-in must be positive (or 0 for a token that never expires)")
	}
	var patterns []string
	for _, p := range strings.Split(*branches, ",") {
		if p = strings.TrimSpace(p); p != "" {
			patterns = append(patterns, p)
		}
	}
	if len(patterns) == 0 {
		return errors.New("--branches needs at least one pattern")
	}
	s, d, err := openDomain(ctx, fs, config, domain, fs.Args())
	if err != nil {
		return err
	}
	defer s.Close()
	var at *time.Time
	if *expiresIn > 0 {
		t := time.Now().Add(*expiresIn).UTC().Truncate(time.Microsecond)
		at = &t
	}
	secret, _, err := s.CreateToken(ctx, d.ID, *name, *role, patterns, at)
	if err != nil {
		return err
	}
	fmt.Fprintln(stdout, secret)
	return nil
}

func cmdTokenList(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, config := flags("token list", stderr)
	domain := fs.String("domain", "", "the Domain (required)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	s, d, err := openDomain(ctx, fs, config, domain, fs.Args())
	if err != nil {
		return err
	}
	defer s.Close()
	after := ""
	enc := json.NewEncoder(stdout)
	for {
		ts, err := s.Tokens(ctx, d.ID, after, 500)
		if err != nil {
			return err
		}
		for _, t := range ts {
			if err := enc.Encode(t); err != nil {
				return fmt.Errorf("write token: %w", err)
			}
		}
		if len(ts) < 500 {
			return nil
		}
		after = ts[len(ts)-1].ID
	}
}

func cmdTokenRevoke(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, config := flags("token revoke", stderr)
	domain := fs.String("domain", "", "the Domain (required)")
	id := fs.String("id", "", "the token's id")
	name := fs.String("name", "", "the token's name (instead of --id)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if (*id == "") == (*name == "") {
		return errors.New("give exactly one of --id and --name")
	}
	s, d, err := openDomain(ctx, fs, config, domain, fs.Args())
	if err != nil {
		return err
	}
	defer s.Close()
	key, byName := *id, false
	if *name != "" {
		key, byName = *name, true
	}
	t, err := s.RevokeToken(ctx, d.ID, key, byName)
	if err != nil {
		return err
	}
	fmt.Fprintf(stdout, "token %s (%s) revoked at %s\n", t.ID, t.Name, t.RevokedAt.UTC().Format(time.RFC3339))
	return nil
}
