package storagecli

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
)

// Exit statuses of Run.
const (
	ExitOK    = 0
	ExitError = 1
	ExitUsage = 2
)

// Env reads an environment variable (os.Getenv in the command).
type Env func(string) string

// DatabaseURLEnv names the environment variable holding the owner's
// connection URL.
const DatabaseURLEnv = "LOREBASE_DATABASE_URL"

const usage = `storage: tune and inspect the Lorebase database.

Usage:
  storage plan    (--profile NAME | --memory SIZE) [--json]   show what apply would change
  storage apply   (--profile NAME | --memory SIZE) [--json]   apply a profile (ALTER SYSTEM, ALTER TABLE)
  storage prewarm --domain NAME [--budget SIZE] [--json]      load a Domain's hot relations into shared buffers
  storage report  [--json]                                    sizes, row estimates, cache hit ratios, bloat
  storage profiles [--json]                                   the named profiles and their values
  storage help [COMMAND]

Profiles: dev (2GB), 1m (8GB), 10m (64GB), or --memory SIZE computes one
(see docs/storage.md). Sizes take B, kB, MB, GB, TB (binary, as in
PostgreSQL) or KiB, MiB, GiB, TiB.

Every command connects as the owner with --database-url or
$LOREBASE_DATABASE_URL.
`

type command struct {
	name    string
	summary string
	run     func(c *cli, ctx context.Context, args []string) error
}

type cli struct {
	stdout, stderr io.Writer
	env            Env
}

// usageError is a mistake on the command line (exit status 2).
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func commands() []command {
	return []command{
		{"plan", "show what applying a profile would change", (*cli).plan},
		{"apply", "apply a profile", (*cli).apply},
		{"prewarm", "load a Domain's hot relations into shared buffers", (*cli).prewarm},
		{"report", "sizes, cache hit ratios and bloat per table, partition and index", (*cli).report},
		{"profiles", "list the named profiles", (*cli).profiles},
	}
}

// Run runs the storage command with its arguments (without the program
// name) and returns the exit status.
func Run(ctx context.Context, args []string, stdout, stderr io.Writer, env Env) int {
	c := &cli{stdout: stdout, stderr: stderr, env: env}
	if len(args) == 0 {
		fmt.Fprint(stderr, usage)
		return ExitUsage
	}
	name, rest := args[0], args[1:]
	if name == "help" || name == "-h" || name == "--help" || name == "-help" {
		return c.help(ctx, rest)
	}
	for _, cmd := range commands() {
		if cmd.name != name {
			continue
		}
		err := cmd.run(c, ctx, rest)
		var ue *usageError
		switch {
		case err == nil:
			return ExitOK
		case errors.Is(err, flag.ErrHelp):
			return ExitOK
		case errors.As(err, &ue):
			fmt.Fprintf(stderr, "storage %s: %v\nRun 'storage help %s' for usage.\n", name, err, name)
			return ExitUsage
		default:
			fmt.Fprintf(stderr, "storage %s: %v\n", name, err)
			return ExitError
		}
	}
	fmt.Fprintf(stderr, "storage: unknown command %q\n\n%s", name, usage)
	return ExitUsage
}

func (c *cli) help(ctx context.Context, args []string) int {
	if len(args) == 0 {
		fmt.Fprint(c.stdout, usage)
		return ExitOK
	}
	for _, cmd := range commands() {
		if cmd.name == args[0] {
			// The command's own flag set prints its usage on -h.
			h := &cli{stdout: c.stdout, stderr: c.stdout, env: c.env}
			_ = cmd.run(h, ctx, []string{"-h"})
			return ExitOK
		}
	}
	fmt.Fprintf(c.stderr, "storage: unknown command %q\n\n%s", args[0], usage)
	return ExitUsage
}

type commonFlags struct {
	url  *string
	json *bool
}

func (c *cli) flagSet(name string) (*flag.FlagSet, commonFlags) {
	fs := newFlagSet(c, name)
	return fs, commonFlags{
		url:  fs.String("database-url", "", "owner's connection URL (default $"+DatabaseURLEnv+")"),
		json: fs.Bool("json", false, "write JSON"),
	}
}

func newFlagSet(c *cli, name string) *flag.FlagSet {
	fs := flag.NewFlagSet("storage "+name, flag.ContinueOnError)
	fs.SetOutput(c.stderr)
	summary := ""
	for _, cmd := range commands() {
		if cmd.name == name {
			summary = cmd.summary
		}
	}
	fs.Usage = func() {
		fmt.Fprintf(fs.Output(), "storage %s: %s\n\nFlags:\n", name, summary)
		fs.PrintDefaults()
	}
	return fs
}

type profileFlagValues struct {
	profile *string
	memory  *string
}

func profileFlags(fs *flag.FlagSet) profileFlagValues {
	return profileFlagValues{
		profile: fs.String("profile", "", "named profile: "+strings.Join(ProfileNames(), ", ")),
		memory:  fs.String("memory", "", "compute the profile for this much memory (e.g. 16GiB)"),
	}
}

func (v profileFlagValues) resolve() (*Profile, error) {
	switch {
	case *v.profile != "" && *v.memory != "":
		return nil, &usageError{"give --profile or --memory, not both"}
	case *v.profile != "":
		p, err := Named(*v.profile)
		if err != nil {
			return nil, &usageError{err.Error()}
		}
		return p, nil
	case *v.memory != "":
		mem, err := ParseSize(*v.memory)
		if err != nil {
			return nil, &usageError{"--memory: " + err.Error()}
		}
		p, err := ForMemory(mem)
		if err != nil {
			return nil, &usageError{"--memory: " + err.Error()}
		}
		return p, nil
	}
	return nil, &usageError{"give --profile NAME or --memory SIZE"}
}

func parse(fs *flag.FlagSet, args []string) error {
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return &usageError{err.Error()}
	}
	if fs.NArg() > 0 {
		return &usageError{fmt.Sprintf("unexpected argument %q", fs.Arg(0))}
	}
	return nil
}

func (c *cli) connect(ctx context.Context, url string) (*pgx.Conn, error) {
	if url == "" {
		url = c.env(DatabaseURLEnv)
	}
	if url == "" {
		return nil, &usageError{"no database: give --database-url or set " + DatabaseURLEnv}
	}
	cfg, err := pgx.ParseConfig(url)
	if err != nil {
		return nil, &usageError{"--database-url: " + err.Error()}
	}
	cfg.RuntimeParams["application_name"] = "lorebase-storage"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("connect to database: %w", err)
	}
	return conn, nil
}

func (c *cli) writeJSON(v any) error {
	enc := json.NewEncoder(c.stdout)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func (c *cli) plan(ctx context.Context, args []string) error {
	fs, common := c.flagSet("plan")
	pf := profileFlags(fs)
	if err := parse(fs, args); err != nil {
		return err
	}
	p, err := pf.resolve()
	if err != nil {
		return err
	}
	conn, err := c.connect(ctx, *common.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	plan, err := PlanProfile(ctx, conn, p)
	if err != nil {
		return err
	}
	if *common.json {
		return c.writeJSON(plan)
	}
	WritePlan(c.stdout, plan)
	return nil
}

func (c *cli) apply(ctx context.Context, args []string) error {
	fs, common := c.flagSet("apply")
	pf := profileFlags(fs)
	lockTimeout := fs.Duration("lock-timeout", 10*time.Second, "longest wait for each partition's lock")
	if err := parse(fs, args); err != nil {
		return err
	}
	p, err := pf.resolve()
	if err != nil {
		return err
	}
	if *lockTimeout <= 0 {
		return &usageError{"--lock-timeout must be positive"}
	}
	conn, err := c.connect(ctx, *common.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	res, err := Apply(ctx, conn, p, ApplyOptions{LockTimeout: *lockTimeout})
	if err != nil {
		return err
	}
	if *common.json {
		return c.writeJSON(res)
	}
	WriteApply(c.stdout, res)
	return nil
}

func (c *cli) prewarm(ctx context.Context, args []string) error {
	fs, common := c.flagSet("prewarm")
	domain := fs.String("domain", "", "the Domain (name or id)")
	budgetFlag := fs.String("budget", "", "most to load (default 80% of shared_buffers)")
	if err := parse(fs, args); err != nil {
		return err
	}
	if *domain == "" {
		return &usageError{"--domain is required"}
	}
	if strings.ContainsRune(*domain, 0) || !utf8.ValidString(*domain) || len(*domain) > 1024 {
		return &usageError{"--domain: not a Domain name (NUL, invalid UTF-8 or too long)"}
	}
	var budget int64
	if *budgetFlag != "" {
		b, err := ParseSize(*budgetFlag)
		if err != nil {
			return &usageError{"--budget: " + err.Error()}
		}
		if b <= 0 {
			return &usageError{"--budget must be positive"}
		}
		budget = b
	}
	conn, err := c.connect(ctx, *common.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	var progress func(PrewarmStep)
	if !*common.json {
		const line = "%-56s %-5s %10s %10s %11s %9s\n"
		fmt.Fprintf(c.stdout, line, "RELATION", "KIND", "SIZE", "LOADED", "CUMULATIVE", "OF BUDGET")
		progress = func(s PrewarmStep) {
			note := ""
			if s.Partial {
				note = " (partial: budget reached)"
			}
			fmt.Fprintf(c.stdout, strings.TrimSuffix(line, "\n")+"%s\n", s.Relation, s.Kind, HumanSize(s.Size),
				HumanSize(s.Loaded), HumanSize(s.Cumulative), fmt.Sprintf("%.1f%%", s.Percent), note)
		}
	}
	res, err := Prewarm(ctx, conn, *domain, budget, progress)
	if err != nil {
		return err
	}
	if *common.json {
		return c.writeJSON(res)
	}
	WritePrewarmSummary(c.stdout, res)
	return nil
}

func (c *cli) report(ctx context.Context, args []string) error {
	fs, common := c.flagSet("report")
	if err := parse(fs, args); err != nil {
		return err
	}
	conn, err := c.connect(ctx, *common.url)
	if err != nil {
		return err
	}
	defer conn.Close(context.WithoutCancel(ctx))
	rep, err := BuildReport(ctx, conn)
	if err != nil {
		return err
	}
	if *common.json {
		return c.writeJSON(rep)
	}
	WriteReport(c.stdout, rep)
	return nil
}

func (c *cli) profiles(_ context.Context, args []string) error {
	fs := newFlagSet(c, "profiles")
	asJSON := fs.Bool("json", false, "write JSON")
	if err := parse(fs, args); err != nil {
		return err
	}
	var ps []*Profile
	for _, n := range ProfileNames() {
		p, err := Named(n)
		if err != nil {
			return err
		}
		ps = append(ps, p)
	}
	if *asJSON {
		return c.writeJSON(ps)
	}
	WriteProfiles(c.stdout, ps)
	return nil
}
