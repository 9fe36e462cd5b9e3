package storagecli

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// ApplyResult is what Apply changed.
type ApplyResult struct {
	Plan *Plan `json:"plan"`
	// Settings are the settings written with ALTER SYSTEM.
	Settings []SettingChange `json:"settings_changed"`
	// Tables are the partition parameters written with ALTER TABLE.
	Tables []TableChange `json:"tables_changed"`
	// Reloaded tells whether pg_reload_conf() ran.
	Reloaded bool `json:"reloaded"`
	// RestartNeeded names the profile's settings that take effect only after
	// a restart (pg_settings.pending_restart, or written now and of context
	// postmaster).
	RestartNeeded []string `json:"restart_needed"`
}

// Changed tells whether Apply wrote anything.
func (r *ApplyResult) Changed() bool { return len(r.Settings)+len(r.Tables) > 0 }

// ApplyOptions tune Apply.
type ApplyOptions struct {
	// LockTimeout bounds the wait for each partition's lock (ALTER TABLE
	// SET takes SHARE UPDATE EXCLUSIVE, which reads and writes do not
	// conflict with; a running VACUUM or index build does). Default 10s.
	LockTimeout time.Duration
	// ReloadWait bounds the wait for the server to take the reloaded
	// configuration before pending restarts are read. Default 5s.
	ReloadWait time.Duration
}

// Apply brings the server in line with a profile: the partitions'
// storage parameters in one transaction, then ALTER SYSTEM SET for every
// setting that differs and one pg_reload_conf(). Nothing is written when a
// value is invalid. A second Apply finds nothing to change.
func Apply(ctx context.Context, conn *pgx.Conn, p *Profile, opts ApplyOptions) (*ApplyResult, error) {
	if opts.LockTimeout <= 0 {
		opts.LockTimeout = 10 * time.Second
	}
	if opts.ReloadWait <= 0 {
		opts.ReloadWait = 5 * time.Second
	}
	plan, err := PlanProfile(ctx, conn, p)
	if err != nil {
		return nil, err
	}
	res := &ApplyResult{Plan: plan}
	stmts, err := tableStatements(plan.Tables)
	if err != nil {
		return nil, err
	}
	if len(stmts) > 0 {
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			ms := strconv.FormatInt(opts.LockTimeout.Milliseconds(), 10)
			if _, err := tx.Exec(ctx, "SET LOCAL lock_timeout = "+ms); err != nil {
				return fmt.Errorf("set lock_timeout: %w", err)
			}
			for _, st := range stmts {
				if _, err := tx.Exec(ctx, st); err != nil {
					return fmt.Errorf("%s: %w", st, err)
				}
			}
			return nil
		})
		if err != nil {
			return nil, fmt.Errorf("apply table parameters: %w", err)
		}
		for _, t := range plan.Tables {
			if t.Change {
				res.Tables = append(res.Tables, t)
			}
		}
	}
	for _, s := range plan.Settings {
		if !s.Change {
			continue
		}
		if _, err := conn.Exec(ctx, AlterSystemSQL(s.Name, s.Wanted)); err != nil {
			return res, fmt.Errorf("set %s = %s: %w", s.Name, s.Wanted, err)
		}
		res.Settings = append(res.Settings, s)
	}
	if len(res.Settings) > 0 {
		if _, err := conn.Exec(ctx, "SELECT pg_reload_conf()"); err != nil {
			return res, fmt.Errorf("reload configuration: %w", err)
		}
		res.Reloaded = true
	}
	restart, err := awaitReload(ctx, conn, res, opts.ReloadWait)
	if err != nil {
		return res, err
	}
	res.RestartNeeded = restart
	return res, nil
}

// AlterSystemSQL is the statement setting one server setting. The name is
// quoted as an identifier and the value as a literal.
func AlterSystemSQL(name, value string) string {
	return "ALTER SYSTEM SET " + pgx.Identifier{name}.Sanitize() + " = " + store.QuoteLiteral(value)
}

// tableStatements groups the changed parameters per partition into one
// ALTER TABLE each, values written from their parsed numbers.
func tableStatements(changes []TableChange) ([]string, error) {
	var stmts []string
	var order []string
	sets := map[string][]string{}
	for _, c := range changes {
		if !c.Change {
			continue
		}
		f, err := parseTableParam(c.Param, c.Wanted)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.Table, err)
		}
		if _, ok := sets[c.Table]; !ok {
			order = append(order, c.Table)
		}
		sets[c.Table] = append(sets[c.Table], c.Param+" = "+strconv.FormatFloat(f, 'f', -1, 64))
	}
	for _, t := range order {
		stmts = append(stmts, "ALTER TABLE "+pgx.Identifier{t}.Sanitize()+" SET ("+strings.Join(sets[t], ", ")+")")
	}
	return stmts, nil
}

// awaitReload waits (at most wait) until the server shows the reloaded
// values: settings written now with the wanted value or pending_restart.
// It returns the profile's settings that need a restart, from pg_settings;
// settings written now of context postmaster are always among them.
func awaitReload(ctx context.Context, conn *pgx.Conn, res *ApplyResult, wait time.Duration) ([]string, error) {
	names := make([]string, len(res.Plan.Settings))
	for i, s := range res.Plan.Settings {
		names[i] = s.Name
	}
	deadline := time.Now().Add(wait)
	for {
		cur, err := loadSettings(ctx, conn, names)
		if err != nil {
			return nil, err
		}
		settled := true
		for _, s := range res.Settings {
			ps, ok := cur[s.Name]
			if !ok {
				continue
			}
			if s.Restart {
				settled = settled && ps.pendingRestart
				continue
			}
			if overriddenBy(ps.source) {
				continue
			}
			want, err1 := parseValue(ps, s.Wanted)
			have, err2 := parseValue(ps, ps.setting)
			settled = settled && err1 == nil && err2 == nil && want.equal(have)
		}
		if settled || time.Now().After(deadline) {
			var restart []string
			seen := map[string]bool{}
			for _, s := range res.Plan.Settings {
				ps := cur[s.Name]
				if (ps != nil && ps.pendingRestart) || (s.Change && s.Restart) || s.Action == ActionPendingRestart {
					if !seen[s.Name] {
						restart = append(restart, s.Name)
						seen[s.Name] = true
					}
				}
			}
			return restart, nil
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(50 * time.Millisecond):
		}
	}
}
