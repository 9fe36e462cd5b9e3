package storagecli

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgerrcode"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Actions of a setting in a plan.
const (
	// ActionNone: the server has the wanted value.
	ActionNone = "none"
	// ActionReload: ALTER SYSTEM and a configuration reload set it.
	ActionReload = "reload"
	// ActionRestart: ALTER SYSTEM sets it; it takes effect at the next
	// restart.
	ActionRestart = "restart"
	// ActionPendingRestart: the configuration already has the wanted value;
	// the server runs with another until it restarts.
	ActionPendingRestart = "pending restart"
	// ActionOverridden: the configuration has the wanted value, but a
	// database, role or connection setting overrides it for this session.
	ActionOverridden = "overridden"
)

// SettingChange is one server setting of a plan.
type SettingChange struct {
	Name string `json:"name"`
	// Current is the value the server runs with (pg_settings).
	Current string `json:"current"`
	// Configured is the value of the configuration files
	// (pg_file_settings), "" when unknown or not set there.
	Configured string `json:"configured,omitempty"`
	Wanted     string `json:"wanted"`
	// Context is pg_settings.context; postmaster settings need a restart.
	Context string `json:"context"`
	Source  string `json:"source"`
	Action  string `json:"action"`
	// Change is whether apply writes it (ALTER SYSTEM).
	Change  bool `json:"change"`
	Restart bool `json:"restart"`
	// PendingRestart is pg_settings.pending_restart.
	PendingRestart bool `json:"pending_restart"`
}

// TableChange is one storage parameter of one partition in a plan.
type TableChange struct {
	Table string `json:"table"`
	Param string `json:"param"`
	// Current is the value of pg_class.reloptions, "" for the default.
	Current string `json:"current"`
	Wanted  string `json:"wanted"`
	Change  bool   `json:"change"`
}

// Plan is what applying a profile would change.
type Plan struct {
	Profile  *Profile        `json:"profile"`
	Settings []SettingChange `json:"settings"`
	Tables   []TableChange   `json:"tables"`
	// FileSettings tells whether pg_file_settings could be read; without it
	// Configured is unknown and a restart-only setting already written by
	// ALTER SYSTEM shows as a change again.
	FileSettings bool `json:"file_settings"`
	// HugePages is said when the profile's shared buffers are
	// HugePagesFrom or more (nil below).
	HugePages *HugePagesNote `json:"huge_pages,omitempty"`
}

// HugePagesFrom is the size of shared buffers from which a server wants
// its shared memory on huge pages: at 10M with 16GB, searches' first runs
// took 1.2 to 1.5 times as long on 4 kB pages (docs/performance.md, "Huge
// pages at 10M").
const HugePagesFrom = int64(8) << 30

// HugePagesNote is the server's huge_pages and the huge pages its shared
// memory needs at its current shared buffers
// (shared_memory_size_in_huge_pages, -1 where the server cannot use
// them). Whether the host has reserved them (vm.nr_hugepages) a
// connection cannot tell.
type HugePagesNote struct {
	Setting       string `json:"huge_pages"`
	Needed        string `json:"shared_memory_size_in_huge_pages"`
	SharedBuffers string `json:"shared_buffers"`
}

// Changes counts the settings and table parameters apply would write.
func (p *Plan) Changes() (settings, tables int) {
	for _, s := range p.Settings {
		if s.Change {
			settings++
		}
	}
	for _, t := range p.Tables {
		if t.Change {
			tables++
		}
	}
	return settings, tables
}

// pgSetting is a row of pg_settings.
type pgSetting struct {
	name, setting, unit, vartype, context, source string
	minVal, maxVal                                *string
	enumVals                                      []string
	pendingRestart                                bool
}

// value is a setting's value made comparable: a number in base units
// (bytes, microseconds) or a lower-case text.
type value struct {
	num   float64
	text  string
	isNum bool
}

func (v value) equal(o value) bool {
	if v.isNum != o.isNum {
		return false
	}
	if v.isNum {
		return v.num == o.num || math.Abs(v.num-o.num) <= 1e-9*math.Max(math.Abs(v.num), math.Abs(o.num))
	}
	return v.text == o.text
}

// unitScale is the size of a pg_settings unit in base units and whether it
// is a memory unit.
func unitScale(unit string) (scale float64, memory bool, ok bool) {
	switch unit {
	case "B":
		return 1, true, true
	case "kB":
		return float64(kB), true, true
	case "8kB":
		return float64(8 * kB), true, true
	case "MB":
		return float64(mB), true, true
	case "us", "ms", "s", "min", "h", "d":
		return timeUnits[unit], false, true
	case "":
		return 1, false, true
	}
	// Other block sizes ("16kB", "32kB").
	if strings.HasSuffix(unit, "kB") {
		if n, err := strconv.Atoi(strings.TrimSuffix(unit, "kB")); err == nil {
			return float64(int64(n) * kB), true, true
		}
	}
	return 0, false, false
}

// parseValue reads raw (a value of ALTER SYSTEM, pg_settings or
// pg_file_settings) as a value of setting s.
func parseValue(s *pgSetting, raw string) (value, error) {
	t := strings.TrimSpace(raw)
	switch s.vartype {
	case "bool":
		switch strings.ToLower(t) {
		case "on", "true", "yes", "1", "t", "y":
			return value{text: "on"}, nil
		case "off", "false", "no", "0", "f", "n":
			return value{text: "off"}, nil
		}
		return value{}, fmt.Errorf("%s: %q is not a boolean", s.name, raw)
	case "integer", "real":
		scale, memory, ok := unitScale(s.unit)
		if !ok {
			return value{}, fmt.Errorf("%s: unknown unit %q", s.name, s.unit)
		}
		n, unit, err := splitQuantity(t)
		if err != nil {
			return value{}, fmt.Errorf("%s: %w", s.name, err)
		}
		base := n * scale
		if unit != "" {
			switch {
			case memory:
				m, ok := sizeUnits[strings.ToLower(unit)]
				if !ok {
					return value{}, fmt.Errorf("%s: unknown unit %q (use B, kB, MB, GB or TB)", s.name, unit)
				}
				base = n * float64(m)
			case s.unit != "":
				m, ok := timeUnits[unit]
				if !ok {
					return value{}, fmt.Errorf("%s: unknown unit %q (use us, ms, s, min, h or d)", s.name, unit)
				}
				base = n * m
			default:
				return value{}, fmt.Errorf("%s: %q takes no unit", s.name, raw)
			}
		}
		return value{num: base, isNum: true}, nil
	default:
		return value{text: strings.ToLower(strings.Trim(t, "'"))}, nil
	}
}

// validate checks a wanted value against pg_settings: the unit, the range
// and, for enums, the allowed values.
func validate(s *pgSetting, raw string) (value, error) {
	if s.context == "internal" {
		return value{}, fmt.Errorf("%s cannot be set (it is fixed when PostgreSQL is built or initialized)", s.name)
	}
	v, err := parseValue(s, raw)
	if err != nil {
		return value{}, err
	}
	switch s.vartype {
	case "integer", "real":
		scale, _, _ := unitScale(s.unit)
		inUnits := v.num / scale
		if s.vartype == "integer" && s.unit == "" && inUnits != math.Trunc(inUnits) {
			return value{}, fmt.Errorf("%s: %q is not an integer", s.name, raw)
		}
		if s.minVal != nil {
			if lo, err := strconv.ParseFloat(*s.minVal, 64); err == nil && inUnits < lo {
				return value{}, fmt.Errorf("%s: %q is below the minimum %s%s", s.name, raw, *s.minVal, s.unit)
			}
		}
		if s.maxVal != nil {
			if hi, err := strconv.ParseFloat(*s.maxVal, 64); err == nil && inUnits > hi {
				return value{}, fmt.Errorf("%s: %q is above the maximum %s%s", s.name, raw, *s.maxVal, s.unit)
			}
		}
	case "enum":
		for _, e := range s.enumVals {
			if strings.EqualFold(e, v.text) {
				return v, nil
			}
		}
		return value{}, fmt.Errorf("%s: %q is not one of %s", s.name, raw, strings.Join(s.enumVals, ", "))
	}
	return v, nil
}

// display writes a pg_settings value with its unit the way it is set
// ("128MB", "0.9", "off").
func display(s *pgSetting, raw string) string {
	v, err := parseValue(s, raw)
	if err != nil || !v.isNum {
		return raw
	}
	if _, memory, _ := unitScale(s.unit); memory && v.num == math.Trunc(v.num) && v.num >= 0 {
		return FormatSetting(int64(v.num))
	}
	if s.unit != "" && s.unit != "B" {
		return raw + s.unit
	}
	return raw
}

func loadSettings(ctx context.Context, conn *pgx.Conn, names []string) (map[string]*pgSetting, error) {
	rows, err := conn.Query(ctx, `SELECT name, setting, coalesce(unit, ''), vartype, context, source,
		min_val, max_val, coalesce(enumvals, '{}'), coalesce(pending_restart, false)
		FROM pg_settings WHERE name = ANY($1)`, names)
	if err != nil {
		return nil, fmt.Errorf("read pg_settings: %w", err)
	}
	list, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (*pgSetting, error) {
		s := &pgSetting{}
		err := row.Scan(&s.name, &s.setting, &s.unit, &s.vartype, &s.context, &s.source,
			&s.minVal, &s.maxVal, &s.enumVals, &s.pendingRestart)
		return s, err
	})
	if err != nil {
		return nil, fmt.Errorf("read pg_settings: %w", err)
	}
	out := make(map[string]*pgSetting, len(list))
	for _, s := range list {
		out[s.name] = s
	}
	return out, nil
}

// loadFileSettings reads the winning value of each setting in the
// configuration files (the last one read, which ALTER SYSTEM's
// postgresql.auto.conf is). ok is false when the role may not read
// pg_file_settings.
func loadFileSettings(ctx context.Context, conn *pgx.Conn, names []string) (map[string]string, bool, error) {
	rows, err := conn.Query(ctx, `SELECT DISTINCT ON (name) name, setting FROM pg_file_settings
		WHERE name = ANY($1) AND setting IS NOT NULL ORDER BY name, seqno DESC`, names)
	if err != nil {
		return nil, false, fileSettingsErr(err)
	}
	out := map[string]string{}
	var n, v string
	if _, err := pgx.ForEachRow(rows, []any{&n, &v}, func() error {
		out[n] = v
		return nil
	}); err != nil {
		return nil, false, fileSettingsErr(err)
	}
	return out, true, nil
}

func fileSettingsErr(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == pgerrcode.InsufficientPrivilege {
		return nil
	}
	return fmt.Errorf("read pg_file_settings: %w", err)
}

// PlanProfile compares a profile with the server and the partitions'
// storage parameters. Invalid or unknown settings are an error naming each.
func PlanProfile(ctx context.Context, conn *pgx.Conn, p *Profile) (*Plan, error) {
	if err := p.Validate(); err != nil {
		return nil, err
	}
	names := make([]string, len(p.Settings))
	for i, s := range p.Settings {
		names[i] = s.Name
	}
	current, err := loadSettings(ctx, conn, names)
	if err != nil {
		return nil, err
	}
	files, fileOK, err := loadFileSettings(ctx, conn, names)
	if err != nil {
		return nil, err
	}
	plan := &Plan{Profile: p, FileSettings: fileOK}
	var problems []string
	for _, want := range p.Settings {
		s, ok := current[want.Name]
		if !ok {
			problems = append(problems, fmt.Sprintf("%s: no such setting on this server", want.Name))
			continue
		}
		wv, err := validate(s, want.Value)
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		cv, err := parseValue(s, s.setting)
		if err != nil {
			return nil, fmt.Errorf("read current %s: %w", s.name, err)
		}
		c := SettingChange{
			Name:           s.name,
			Current:        display(s, s.setting),
			Wanted:         want.Value,
			Context:        s.context,
			Source:         s.source,
			Restart:        s.context == "postmaster",
			PendingRestart: s.pendingRestart,
		}
		target := cv
		if raw, ok := files[s.name]; ok {
			c.Configured = raw
			if fv, err := parseValue(s, raw); err == nil {
				target = fv
			}
		}
		switch {
		case !wv.equal(target):
			c.Change = true
			c.Action = ActionReload
			if c.Restart {
				c.Action = ActionRestart
			}
		case wv.equal(cv):
			c.Action = ActionNone
		case c.Restart:
			c.Action = ActionPendingRestart
		default:
			if overriddenBy(s.source) {
				c.Action = ActionOverridden
			} else {
				// Written and reloaded, not yet seen by this session.
				c.Action = ActionNone
			}
		}
		plan.Settings = append(plan.Settings, c)
	}
	if len(problems) > 0 {
		return nil, fmt.Errorf("profile %s does not fit this server: %s", p.Name, strings.Join(problems, "; "))
	}
	if sb, err := ParseSize(p.Setting("shared_buffers")); err == nil && sb >= HugePagesFrom {
		n := &HugePagesNote{}
		if err := conn.QueryRow(ctx, `SELECT current_setting('huge_pages'),
			coalesce(current_setting('shared_memory_size_in_huge_pages', true), '-1'), current_setting('shared_buffers')`).
			Scan(&n.Setting, &n.Needed, &n.SharedBuffers); err != nil {
			return nil, fmt.Errorf("read huge_pages: %w", err)
		}
		plan.HugePages = n
	}
	for _, tp := range p.Tables {
		parts, err := partitionOptions(ctx, conn, tp.Table)
		if err != nil {
			return nil, err
		}
		for _, part := range parts {
			for _, prm := range tp.Params {
				want, _ := parseTableParam(prm.Name, prm.Value)
				c := TableChange{Table: part.name, Param: prm.Name, Current: part.options[prm.Name], Wanted: prm.Value}
				cur, err := strconv.ParseFloat(c.Current, 64)
				c.Change = c.Current == "" || err != nil || cur != want
				plan.Tables = append(plan.Tables, c)
			}
		}
	}
	return plan, nil
}

type partition struct {
	name    string
	options map[string]string
}

// partitionOptions lists the partitions of a table (in partition order)
// with their reloptions.
func partitionOptions(ctx context.Context, conn *pgx.Conn, table string) ([]partition, error) {
	rows, err := conn.Query(ctx, `SELECT c.relname::text, coalesce(c.reloptions, '{}')
		FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = to_regclass($1)
		ORDER BY length(c.relname), c.relname`, table)
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", table, err)
	}
	out, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (partition, error) {
		p := partition{options: map[string]string{}}
		var opts []string
		if err := row.Scan(&p.name, &opts); err != nil {
			return p, err
		}
		for _, o := range opts {
			if k, v, ok := strings.Cut(o, "="); ok {
				p.options[k] = v
			}
		}
		return p, nil
	})
	if err != nil {
		return nil, fmt.Errorf("list partitions of %s: %w", table, err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("table %s has no partitions (is the database migrated?)", table)
	}
	return out, nil
}

// overriddenBy tells whether a pg_settings source overrides the
// configuration files for this session.
func overriddenBy(source string) bool {
	switch source {
	case "database", "user", "database user", "client", "session":
		return true
	}
	return false
}
