package config

import (
	"fmt"
	"strings"
)

// Doc markers: docs/configuration.md holds Markdown() between them.
const (
	DocBegin = "<!-- config keys: generated from internal/config/keys.go; do not edit by hand -->"
	DocEnd   = "<!-- end of config keys -->"
)

// Markdown is the part of docs/configuration.md the table gives: a YAML
// file holding every default, and one row per key.
func Markdown() string {
	var b strings.Builder
	b.WriteString(DocBegin + "\n\n```yaml\n")
	var open []string
	for _, k := range keys {
		parts := strings.Split(k.Name, ".")
		sec := parts[:len(parts)-1]
		common := 0
		for common < len(open) && common < len(sec) && open[common] == sec[common] {
			common++
		}
		open = open[:common]
		for _, s := range sec[common:] {
			fmt.Fprintf(&b, "%s%s:\n", strings.Repeat("  ", len(open)), s)
			open = append(open, s)
		}
		v := k.Default
		if k.Type() == "string" {
			v = fmt.Sprintf("%q", v)
		}
		fmt.Fprintf(&b, "%s%s: %s\n", strings.Repeat("  ", len(open)), parts[len(parts)-1], v)
	}
	b.WriteString("```\n\n")
	b.WriteString("| key | environment variable | type | default | meaning |\n| --- | --- | --- | --- | --- |\n")
	for _, k := range keys {
		def := "(none)"
		if k.Default != "" {
			def = "`" + k.Default + "`"
		}
		fmt.Fprintf(&b, "| `%s` | `%s` | %s | %s | %s |\n", k.Name, EnvName(k.Name), k.Type(), def, k.Doc)
	}
	b.WriteString("\n" + DocEnd)
	return b.String()
}
