package commit

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/store"
)

// Limits of a commit's texts.
const (
	maxMessageBytes    = 10 << 10 // message and author
	maxKeyBytes        = 256      // a Record key
	maxIdemKeyBytes    = 255      // an Idempotency-Key
	maxProvenanceBytes = 64 << 10 // a provenance object
)

// problemSet collects the Problems of one request. A malformed problem makes
// the error lberr.Invalid; otherwise it is lberr.Unprocessable.
type problemSet struct {
	ps        []store.Problem
	malformed bool
}

func (s *problemSet) add(index int, field, code, format string, args ...any) {
	p := store.Problem{Field: field, Code: code, Message: fmt.Sprintf(format, args...)}
	if index >= 0 {
		i := index
		p.Index = &i
	}
	s.ps = append(s.ps, p)
}

// bad adds a malformed-request problem (lberr.Invalid).
func (s *problemSet) bad(index int, field, code, format string, args ...any) {
	s.malformed = true
	s.add(index, field, code, format, args...)
}

func (s *problemSet) empty() bool { return len(s.ps) == 0 }

// err returns the *lberr.Error of the problems, ordered by change index.
func (s *problemSet) err() error {
	if len(s.ps) == 0 {
		return nil
	}
	sort.SliceStable(s.ps, func(i, j int) bool {
		a, b := -1, -1
		if s.ps[i].Index != nil {
			a = *s.ps[i].Index
		}
		if s.ps[j].Index != nil {
			b = *s.ps[j].Index
		}
		return a < b
	})
	if s.malformed {
		return lberr.Fields(lberr.Invalid, "malformed commit", s.ps...)
	}
	return lberr.Fields(lberr.Unprocessable, "the commit violates the schema or the data", s.ps...)
}

// checkText checks a free text (message, author): non-empty, valid UTF-8,
// no NUL, at most limit bytes. It returns a code and a message, or "".
func checkText(what, s string, limit int) (string, string) {
	switch {
	case s == "":
		return "required", fmt.Sprintf("A commit needs a %s.", what)
	case !utf8.ValidString(s) || strings.ContainsRune(s, 0):
		return "invalid_text", fmt.Sprintf("The %s must be valid UTF-8 text without NUL characters.", what)
	case len(s) > limit:
		return "too_long", fmt.Sprintf("The %s may hold at most %d bytes; this one holds %d.", what, limit, len(s))
	}
	return "", ""
}

// checkKey checks a Record key: non-empty, at most 256 bytes, valid UTF-8,
// no NUL or other control characters.
func checkKey(key string) (string, string) {
	switch {
	case key == "":
		return "required", "A Record key is required."
	case len(key) > maxKeyBytes:
		return "invalid_key", fmt.Sprintf("A Record key may hold at most %d bytes; this one holds %d.", maxKeyBytes, len(key))
	case !utf8.ValidString(key):
		return "invalid_key", "A Record key must be valid UTF-8."
	}
	for _, r := range key {
		if unicode.IsControl(r) {
			return "invalid_key", "A Record key may not contain NUL or other control characters."
		}
	}
	return "", ""
}

// short quotes a name for a message, cut to a readable length.
func short(s string) string {
	const limit = 80
	if len(s) > limit {
		cut := limit
		for cut > 0 && !utf8.RuneStart(s[cut]) {
			cut--
		}
		s = s[:cut] + "…"
	}
	return fmt.Sprintf("%q", s)
}

// changeField names field name of change i ("changes[3].key").
func changeField(i int, name string) string {
	return "changes[" + strconv.Itoa(i) + "]." + name
}
