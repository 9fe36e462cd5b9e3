package keeper

import (
	"fmt"
	"net/http"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/go-chi/chi/v5"

	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

var (
	domainNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._-]{0,62}$`)
	patternRE    = regexp.MustCompile(`^[A-Za-z0-9*][A-Za-z0-9._/*-]{0,127}$`)
)

// maxParamBytes bounds the strings of query parameters (after, before, at,
// value).
const maxParamBytes = 256

// pathParam is a URL path parameter, unescaped. Routing runs on the escaped
// path, so an escaped "/" (%2F) stays inside its segment; an invalid escape
// is a 400.
func pathParam(r *http.Request, name string) (string, error) {
	raw := chi.URLParam(r, name)
	v, err := url.PathUnescape(raw)
	if err != nil {
		return "", badRequest(name, "invalid_escape", fmt.Sprintf("The path segment %s has an invalid %%-escape.", quote(raw)))
	}
	return v, nil
}

// validDomainName reports whether s can name a Domain.
func validDomainName(s string) bool { return domainNameRE.MatchString(s) }

// checkBranch validates a branch name from a path.
func checkBranch(field, name string) error {
	if !store.ValidBranchName(name) {
		return badRequest(field, "invalid_branch",
			fmt.Sprintf("%s is not a branch name: use letters, digits and . _ / - (starting with a letter or digit, at most 128), without // or .. or a trailing /; escape / as %%2F in paths.", quote(name)))
	}
	return nil
}

// checkKey validates a Record key: non-empty, at most 256 bytes, valid
// UTF-8, no control characters.
func checkKey(field, key string) error {
	switch {
	case key == "":
		return badRequest(field, "invalid_key", "A key must not be empty.")
	case len(key) > 256:
		return badRequest(field, "invalid_key", fmt.Sprintf("A key is at most 256 bytes; this one has %d.", len(key)))
	}
	return checkText(field, key, 256)
}

// checkText validates a free string: valid UTF-8, no control characters,
// at most max bytes.
func checkText(field, s string, max int) error {
	if len(s) > max {
		return badRequest(field, "too_long", fmt.Sprintf("%s is at most %d bytes; got %d.", field, max, len(s)))
	}
	if !utf8.ValidString(s) {
		return badRequest(field, "invalid_utf8", fmt.Sprintf("%s is not valid UTF-8.", field))
	}
	for _, r := range s {
		if unicode.IsControl(r) {
			return badRequest(field, "control_character", fmt.Sprintf("%s must not contain control characters (such as NUL or newline).", field))
		}
	}
	return nil
}

// checkName validates a Kind, Attribute or Relation name.
func checkName(field, s string) error {
	if !schema.ValidName(s) {
		return badRequest(field, "invalid_name",
			fmt.Sprintf("%s is not a valid %s: a letter, then letters, digits or _ (at most 63).", quote(s), field))
	}
	return nil
}

// queryString reads an optional query parameter, validated as free text.
func queryString(r *http.Request, name string) (string, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return "", nil
	}
	if err := checkText(name, v, maxParamBytes); err != nil {
		return "", err
	}
	return v, nil
}

// queryLimit reads the limit parameter: def when absent, else 1..max.
func queryLimit(r *http.Request, def, max int) (int, error) {
	v := r.URL.Query().Get("limit")
	if v == "" {
		return def, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 || n > max {
		return 0, badRequest("limit", "invalid_limit", fmt.Sprintf("limit must be an integer from 1 to %d; got %s.", max, quote(v)))
	}
	return n, nil
}

// checkQuery rejects query parameters the route does not know, so a typo
// (?kidn=Part) is not silently ignored, and repeated parameters.
func checkQuery(r *http.Request, allowed ...string) error {
	for k, vs := range r.URL.Query() {
		known := false
		for _, a := range allowed {
			if k == a {
				known = true
				break
			}
		}
		if !known {
			return badRequest(k, "unknown_parameter",
				fmt.Sprintf("Unknown query parameter %s; this route takes %s.", quote(k), strings.Join(allowed, ", ")))
		}
		if len(vs) > 1 {
			return badRequest(k, "repeated_parameter", fmt.Sprintf("The query parameter %s is given more than once.", quote(k)))
		}
	}
	return nil
}

// matchPattern reports whether a branch name matches a token's pattern,
// where * matches any run of characters, / included.
func matchPattern(pattern, name string) bool {
	parts := strings.Split(pattern, "*")
	if len(parts) == 1 {
		return pattern == name
	}
	if !strings.HasPrefix(name, parts[0]) {
		return false
	}
	name = name[len(parts[0]):]
	last := parts[len(parts)-1]
	for _, p := range parts[1 : len(parts)-1] {
		i := strings.Index(name, p)
		if i < 0 {
			return false
		}
		name = name[i+len(p):]
	}
	return len(name) >= len(last) && strings.HasSuffix(name, last)
}

// keysetPage cuts a list read with limit+1 rows to its page: the first
// limit items (never nil) and, when more follow, the cursor of the next
// page (the key of the last item kept).
func keysetPage[T any](items []T, limit int, key func(T) string) ([]T, string) {
	if len(items) > limit {
		return items[:limit], key(items[limit-1])
	}
	if items == nil {
		items = []T{}
	}
	return items, ""
}
