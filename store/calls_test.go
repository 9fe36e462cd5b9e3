package store_test

import (
	"go/scanner"
	"go/token"
	"io/fs"
	"os"
	"path"
	"regexp"
	"sort"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/store"
)

// sqlText is SQL without its comment lines.
func sqlText(text string) string {
	var kept []string
	for _, line := range strings.Split(text, "\n") {
		if !strings.HasPrefix(strings.TrimSpace(line), "--") {
			kept = append(kept, line)
		}
	}
	return strings.Join(kept, "\n")
}

// goStrings is the string literals of a Go file, one a line (comments and
// identifiers do not call SQL functions).
func goStrings(t *testing.T, name string, src []byte) string {
	t.Helper()
	var s scanner.Scanner
	fset := token.NewFileSet()
	s.Init(fset.AddFile(name, -1, len(src)), src, func(pos token.Position, msg string) { t.Fatalf("%s: %s", pos, msg) }, 0)
	var out strings.Builder
	for {
		_, tok, lit := s.Scan()
		if tok == token.EOF {
			return out.String()
		}
		if tok == token.STRING {
			out.WriteString(lit + "\n")
		}
	}
}

// TestEveryFunctionIsCalled: every function file is called, directly or
// through other functions, from the Go code (tests included), a numbered
// migration or after/*.sql (grants and drops name a function without
// calling it). A function nothing calls is dropped by a migration and its
// file removed.
func TestEveryFunctionIsCalled(t *testing.T) {
	t.Parallel()
	root := os.DirFS("..")
	_, err := fs.Stat(root, "go.mod")
	require.NoError(t, err, "the test runs in store/, below the module root")

	files, err := store.FunctionFiles()
	require.NoError(t, err)
	names := make([]string, len(files))
	word := map[string]*regexp.Regexp{}
	body := map[string]string{}
	for i, f := range files {
		names[i] = f.Name
		word[f.Name] = regexp.MustCompile(`\b` + f.Name + `\b`)
		body[f.Name] = sqlText(f.SQL)
	}
	calls := func(text, self string) []string {
		var out []string
		for _, n := range names {
			if n != self && word[n].MatchString(text) {
				out = append(out, n)
			}
		}
		return out
	}

	var callers strings.Builder
	err = fs.WalkDir(root, ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if p == ".git" || p == "migrations/functions" || strings.HasPrefix(d.Name(), ".") && p != "." {
				return fs.SkipDir
			}
			return nil
		}
		text, err := fs.ReadFile(root, p)
		if err != nil {
			return err
		}
		switch {
		case strings.HasSuffix(p, ".go"):
			callers.WriteString(goStrings(t, p, text))
		case path.Dir(p) == "migrations" && strings.HasSuffix(p, ".up.sql"), path.Dir(p) == "migrations/after":
			callers.WriteString(calling(string(text)))
		}
		callers.WriteString("\n")
		return nil
	})
	require.NoError(t, err)

	reached := map[string]bool{}
	todo := calls(callers.String(), "")
	for len(todo) > 0 {
		n := todo[len(todo)-1]
		todo = todo[:len(todo)-1]
		if !reached[n] {
			reached[n] = true
			todo = append(todo, calls(body[n], n)...)
		}
	}
	var dead []string
	for _, n := range names {
		if !reached[n] {
			dead = append(dead, n)
		}
	}
	sort.Strings(dead)
	require.Empty(t, dead, "functions nothing calls (no Go string, numbered migration or other function names them): "+
		"drop them in a migration and remove their files")
}

// notCallRE matches the statements that name a function without calling
// it: grants, drops, comments and owner changes.
var notCallRE = regexp.MustCompile(`(?is)\b(GRANT|REVOKE|DROP\s+FUNCTION|COMMENT\s+ON\s+FUNCTION|ALTER\s+FUNCTION)\b[^;]*;`)

// calling is SQL text without the statements that only name functions.
func calling(text string) string { return notCallRE.ReplaceAllString(sqlText(text), "") }
