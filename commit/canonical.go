package commit

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"unicode/utf8"
)

// CanonicalJSON encodes v as canonical JSON: object keys sorted by their
// UTF-8 bytes, no insignificant whitespace, no HTML escaping, numbers
// written as given (json.Number is kept verbatim) and invalid UTF-8 replaced
// by U+FFFD. v may be a value decoded by encoding/json (with or without
// UseNumber), a json.RawMessage, or anything json.Marshal accepts.
func CanonicalJSON(v any) ([]byte, error) {
	var buf bytes.Buffer
	if err := appendCanonical(&buf, v); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// decodeJSON decodes one JSON value with UseNumber and refuses trailing data.
func decodeJSON(data []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("unexpected data after the JSON value")
	}
	return v, nil
}

func appendCanonical(buf *bytes.Buffer, v any) error {
	switch x := v.(type) {
	case nil:
		buf.WriteString("null")
	case bool:
		if x {
			buf.WriteString("true")
		} else {
			buf.WriteString("false")
		}
	case string:
		appendString(buf, x)
	case json.Number:
		if x == "" || !json.Valid([]byte(x)) {
			return fmt.Errorf("canonical json: invalid number %q", string(x))
		}
		buf.WriteString(string(x))
	case float64:
		if math.IsInf(x, 0) || math.IsNaN(x) {
			return fmt.Errorf("canonical json: number %v is not JSON", x)
		}
		buf.WriteString(strconv.FormatFloat(x, 'g', -1, 64))
	case int:
		buf.WriteString(strconv.Itoa(x))
	case int64:
		buf.WriteString(strconv.FormatInt(x, 10))
	case int32:
		buf.WriteString(strconv.FormatInt(int64(x), 10))
	case []any:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			if err := appendCanonical(buf, e); err != nil {
				return err
			}
		}
		buf.WriteByte(']')
	case []string:
		buf.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				buf.WriteByte(',')
			}
			appendString(buf, e)
		}
		buf.WriteByte(']')
	case map[string]any:
		keys := make([]string, 0, len(x))
		for k := range x {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		buf.WriteByte('{')
		for i, k := range keys {
			if i > 0 {
				buf.WriteByte(',')
			}
			appendString(buf, k)
			buf.WriteByte(':')
			if err := appendCanonical(buf, x[k]); err != nil {
				return err
			}
		}
		buf.WriteByte('}')
	case canonicalBytes:
		buf.Write(x)
	case json.RawMessage:
		d, err := decodeJSON(x)
		if err != nil {
			return fmt.Errorf("canonical json: %w", err)
		}
		return appendCanonical(buf, d)
	default:
		b, err := json.Marshal(v)
		if err != nil {
			return fmt.Errorf("canonical json: %w", err)
		}
		d, err := decodeJSON(b)
		if err != nil {
			return fmt.Errorf("canonical json: %w", err)
		}
		return appendCanonical(buf, d)
	}
	return nil
}

// canonicalBytes is JSON already canonical, written as it is.
type canonicalBytes []byte

// plainCanonical reports whether b, valid JSON without insignificant
// whitespace, can stand for the canonical JSON of its decoded value as it
// is: it is canonical JSON (the caller knows), holds no number (jsonb
// writes numbers its own way) and no \ufffd escape (CanonicalJSON writes
// invalid UTF-8 so, and U+FFFD itself as the character). Anything it is
// unsure of answers false.
func plainCanonical(b []byte) bool {
	in := false
	for i := 0; i < len(b); i++ {
		c := b[i]
		if in {
			switch c {
			case '"':
				in = false
			case '\\':
				if i+1 >= len(b) {
					return false
				}
				// CanonicalJSON escapes control characters (\u0000 to
				// \u001f), U+2028, U+2029 and invalid UTF-8 (\ufffd).
				if b[i+1] == 'u' && (i+5 >= len(b) || !controlEscape(b[i+2:i+6])) {
					return false
				}
				i++
			}
			continue
		}
		switch c {
		case '"':
			in = true
		case '{', '}', '[', ']', ',', ':':
		case 't', 'f', 'n':
			// true, false, null: skip the letters.
			for i+1 < len(b) && b[i+1] >= 'a' && b[i+1] <= 'z' {
				i++
			}
		default:
			return false
		}
	}
	return !in
}

// controlEscape reports whether the four hex digits of a \u escape name
// a control character, U+2028 or U+2029.
func controlEscape(h []byte) bool {
	s := string(h)
	return s[:3] == "000" || s[:3] == "001" || s == "2028" || s == "2029"
}

const hexDigits = "0123456789abcdef"

// appendString writes s as a JSON string the way encoding/json does, minus
// the HTML escaping.
func appendString(buf *bytes.Buffer, s string) {
	buf.WriteByte('"')
	start := 0
	for i := 0; i < len(s); {
		if b := s[i]; b < utf8.RuneSelf {
			if b >= 0x20 && b != '"' && b != '\\' {
				i++
				continue
			}
			buf.WriteString(s[start:i])
			switch b {
			case '"', '\\':
				buf.WriteByte('\\')
				buf.WriteByte(b)
			case '\n':
				buf.WriteString(`\n`)
			case '\r':
				buf.WriteString(`\r`)
			case '\t':
				buf.WriteString(`\t`)
			default:
				buf.WriteString(`\u00`)
				buf.WriteByte(hexDigits[b>>4])
				buf.WriteByte(hexDigits[b&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && size == 1 {
			buf.WriteString(s[start:i])
			buf.WriteString(`\ufffd`)
			i += size
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			buf.WriteString(s[start:i])
			buf.WriteString(`\u202`)
			buf.WriteByte(hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	buf.WriteString(s[start:])
	buf.WriteByte('"')
}
