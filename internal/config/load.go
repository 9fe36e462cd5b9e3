package config

import (
	"errors"
	"fmt"
	"net"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"
)

// FileEnv names the environment variable holding the configuration file's
// path when no --config flag is given.
const FileEnv = "LOREBASE_CONFIG"

// EnvName is the environment variable overriding a key: LOREBASE_ + the key
// upper-cased with dots replaced by underscores
// (store.reads.search_candidates → LOREBASE_STORE_READS_SEARCH_CANDIDATES).
func EnvName(key string) string {
	return "LOREBASE_" + strings.ToUpper(strings.ReplaceAll(key, ".", "_"))
}

// Keys is the table of every key, in documentation order.
func Keys() []Key { return append([]Key(nil), keys...) }

// Names lists every key, dotted.
func Names() []string {
	names := make([]string, len(keys))
	for i, k := range keys {
		names[i] = k.Name
	}
	return names
}

// Type names the type of a key's values: string, integer or duration.
func (k Key) Type() string {
	var c Config
	switch k.field(&c).(type) {
	case *time.Duration:
		return "duration"
	case *int, *int64:
		return "integer"
	default:
		return "string"
	}
}

// set parses s into the key's field of c.
func (k Key) set(c *Config, s string) error {
	switch p := k.field(c).(type) {
	case *string:
		*p = s
	case *int:
		n, err := strconv.Atoi(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		*p = n
	case *int64:
		n, err := strconv.ParseInt(strings.TrimSpace(s), 10, 64)
		if err != nil {
			return fmt.Errorf("%q is not an integer", s)
		}
		*p = n
	case *time.Duration:
		d, err := time.ParseDuration(strings.TrimSpace(s))
		if err != nil {
			return fmt.Errorf("%q is not a duration (for example 30s, 200ms, 1m)", s)
		}
		*p = d
	default:
		return fmt.Errorf("unsupported field type %T", p)
	}
	return nil
}

// Default is the configuration without file or environment: every key at
// the default of its row.
func Default() Config {
	var c Config
	for _, k := range keys {
		if err := k.set(&c, k.Default); err != nil {
			// The table is checked by TestDefaultsParse; a bad default is a
			// programming error.
			panic(fmt.Sprintf("config: default of %s: %v", k.Name, err))
		}
	}
	return c
}

// Load reads the configuration: the defaults, then the YAML file at path
// (skipped when path is empty), then the environment (getenv, usually
// os.Getenv; nil means os.Getenv), then validates it.
func Load(path string, getenv func(string) string) (Config, error) {
	if getenv == nil {
		getenv = os.Getenv
	}
	cfg := Default()
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return cfg, fmt.Errorf("read configuration file: %w", err)
		}
		if err := cfg.applyYAML(path, data); err != nil {
			return cfg, err
		}
	}
	if err := cfg.applyEnv(getenv); err != nil {
		return cfg, err
	}
	if err := cfg.Validate(); err != nil {
		return cfg, err
	}
	return cfg, nil
}

// applyYAML sets the keys the file names; an unknown key, a section where
// a value belongs or a value that does not parse is an error naming its
// line.
func (c *Config) applyYAML(path string, data []byte) error {
	f, err := parser.ParseBytes(data, 0)
	if err != nil {
		return fmt.Errorf("configuration file %s: %w", path, err)
	}
	byName := map[string]Key{}
	sections := map[string]bool{}
	for _, k := range keys {
		byName[k.Name] = k
		parts := strings.Split(k.Name, ".")
		for i := 1; i < len(parts); i++ {
			sections[strings.Join(parts[:i], ".")] = true
		}
	}
	var errs []error
	var walk func(prefix string, n ast.Node)
	walk = func(prefix string, n ast.Node) {
		for _, mv := range pairs(n) {
			name := strings.TrimSpace(mv.Key.String())
			if prefix != "" {
				name = prefix + "." + name
			}
			line := mv.Key.GetToken().Position.Line
			if sections[name] {
				if pairs(mv.Value) == nil {
					errs = append(errs, fmt.Errorf("configuration file %s, line %d: %s is a section of keys, not a value", path, line, name))
					continue
				}
				walk(name, mv.Value)
				continue
			}
			k, ok := byName[name]
			if !ok {
				errs = append(errs, fmt.Errorf("configuration file %s, line %d: unknown key %s", path, line, name))
				continue
			}
			v, ok := scalar(mv.Value)
			if !ok {
				errs = append(errs, fmt.Errorf("configuration file %s, line %d: %s takes a single %s value", path, line, name, k.Type()))
				continue
			}
			if err := k.set(c, v); err != nil {
				errs = append(errs, fmt.Errorf("configuration file %s, line %d: %s: %w", path, line, name, err))
			}
		}
	}
	for _, doc := range f.Docs {
		if doc.Body == nil {
			continue
		}
		if _, isNull := doc.Body.(*ast.NullNode); isNull {
			continue
		}
		if pairs(doc.Body) == nil {
			errs = append(errs, fmt.Errorf("configuration file %s: the document must be a mapping of keys", path))
			continue
		}
		walk("", doc.Body)
	}
	return errors.Join(errs...)
}

// pairs returns the key-value pairs of a mapping node, nil for any other.
func pairs(n ast.Node) []*ast.MappingValueNode {
	switch m := n.(type) {
	case *ast.MappingNode:
		return m.Values
	case *ast.MappingValueNode:
		return []*ast.MappingValueNode{m}
	case *ast.CommentGroupNode, nil:
		return nil
	}
	return nil
}

// scalar is a scalar node's text; ok is false for mappings and sequences.
func scalar(n ast.Node) (string, bool) {
	switch v := n.(type) {
	case nil, *ast.NullNode:
		return "", true
	case *ast.StringNode:
		return v.Value, true
	case *ast.MappingNode, *ast.MappingValueNode, *ast.SequenceNode, *ast.AnchorNode, *ast.AliasNode, *ast.TagNode:
		return "", false
	default:
		return v.GetToken().Value, true
	}
}

func (c *Config) applyEnv(getenv func(string) string) error {
	var errs []error
	for _, k := range keys {
		env := EnvName(k.Name)
		v := getenv(env)
		if v == "" {
			// An empty variable counts as unset, so `LOREBASE_X= keeper
			// serve` keeps the file's or the default value.
			continue
		}
		if err := k.set(c, v); err != nil {
			errs = append(errs, fmt.Errorf("%s (%s): %w", env, k.Name, err))
		}
	}
	return errors.Join(errs...)
}

// Validate checks every key and reports all that are wrong.
func (c *Config) Validate() error {
	var errs []error
	bad := func(key, msg string) {
		errs = append(errs, fmt.Errorf("%s (%s): %s", key, EnvName(key), msg))
	}
	for _, k := range keys {
		if k.Check == nil {
			continue
		}
		if msg := k.Check(k.field(c)); msg != "" {
			bad(k.Name, msg)
		}
	}
	for _, r := range relations {
		if msg := r.fail(c); msg != "" {
			bad(r.key, msg)
		}
	}
	return errors.Join(errs...)
}

// Check returns what is wrong with a key's value (a pointer to its field),
// or "".
type Check func(v any) string

// number reads an integer or duration field as an int64.
func number(v any) int64 {
	switch p := v.(type) {
	case *int:
		return int64(*p)
	case *int64:
		return *p
	case *time.Duration:
		return int64(*p)
	}
	panic(fmt.Sprintf("config: %T is not a number", v))
}

func show(v any) string {
	switch p := v.(type) {
	case *int:
		return strconv.Itoa(*p)
	case *int64:
		return strconv.FormatInt(*p, 10)
	case *time.Duration:
		return p.String()
	case *string:
		return strconv.Quote(*p)
	}
	return fmt.Sprint(v)
}

func positive(v any) string {
	if number(v) <= 0 {
		return "must be positive, got " + show(v)
	}
	return ""
}

func nonNegative(v any) string {
	if number(v) < 0 {
		return "must be 0 or positive, got " + show(v)
	}
	return ""
}

func atLeast(n int64) Check {
	return func(v any) string {
		if number(v) < n {
			return fmt.Sprintf("must be at least %d, got %s", n, show(v))
		}
		return ""
	}
}

func between(lo, hi int64) Check {
	return func(v any) string {
		if n := number(v); n < lo || n > hi {
			return fmt.Sprintf("must be between %d and %d, got %s", lo, hi, show(v))
		}
		return ""
	}
}

func hostPort(v any) string {
	s := *v.(*string)
	if _, _, err := net.SplitHostPort(s); err != nil {
		return fmt.Sprintf("%q is not host:port (for example 127.0.0.1:8080)", s)
	}
	return ""
}

func adminToken(v any) string {
	s := *v.(*string)
	if s != "" && len(s) < 16 {
		return "must be at least 16 characters (or empty to disable the bootstrap admin)"
	}
	for _, r := range s {
		if r <= ' ' || r == 0x7f {
			return "must not contain spaces or control characters"
		}
	}
	return ""
}

// exceeds says that a value is larger than the key other's.
func exceeds[T int | time.Duration](v, limit T, other string) string {
	if v > limit {
		return fmt.Sprintf("%v exceeds %s %v", v, other, limit)
	}
	return ""
}
