package commit

import (
	"encoding/json"
	"unicode/utf8"
)

// fastDecodeMaxDepth bounds the nesting the fast decoder follows; deeper
// values go to encoding/json.
const fastDecodeMaxDepth = 64

// decodeFast decodes one JSON value the way encoding/json does into an
// interface with UseNumber (objects as map[string]any, arrays as []any,
// numbers as json.Number holding their text), for the JSON the pipeline
// reads most: strings without escapes, numbers, literals, objects and
// arrays, with whitespace around them and nothing after. It answers
// ok=false for anything else (an escape, a control character, invalid
// UTF-8, deep nesting, invalid or trailing data), which the caller hands
// to encoding/json.
func decodeFast(b []byte) (v any, ok bool) {
	d := fastDecoder{b: b}
	d.ws()
	v, ok = d.value(0)
	if !ok {
		return nil, false
	}
	d.ws()
	return v, d.i == len(d.b)
}

type fastDecoder struct {
	b []byte
	i int
}

func (d *fastDecoder) ws() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *fastDecoder) value(depth int) (any, bool) {
	if d.i >= len(d.b) || depth > fastDecodeMaxDepth {
		return nil, false
	}
	switch c := d.b[d.i]; {
	case c == '{':
		return d.object(depth + 1)
	case c == '[':
		return d.array(depth + 1)
	case c == '"':
		return d.str()
	case c == 't':
		return true, d.literal("true")
	case c == 'f':
		return false, d.literal("false")
	case c == 'n':
		return nil, d.literal("null")
	case c == '-' || c >= '0' && c <= '9':
		return d.number()
	}
	return nil, false
}

// delimited reports whether a literal or number may end where d.i is.
func (d *fastDecoder) delimited() bool {
	if d.i == len(d.b) {
		return true
	}
	switch d.b[d.i] {
	case ' ', '\t', '\n', '\r', ',', '}', ']':
		return true
	}
	return false
}

func (d *fastDecoder) literal(lit string) bool {
	if len(d.b)-d.i < len(lit) || string(d.b[d.i:d.i+len(lit)]) != lit {
		return false
	}
	d.i += len(lit)
	return d.delimited()
}

func (d *fastDecoder) digits() int {
	n := 0
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
		n++
	}
	return n
}

// number reads -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)?.
func (d *fastDecoder) number() (any, bool) {
	start := d.i
	if d.b[d.i] == '-' {
		d.i++
	}
	if d.i >= len(d.b) {
		return nil, false
	}
	if d.b[d.i] == '0' {
		d.i++
	} else if d.digits() == 0 {
		return nil, false
	}
	if d.i < len(d.b) && d.b[d.i] == '.' {
		d.i++
		if d.digits() == 0 {
			return nil, false
		}
	}
	if d.i < len(d.b) && (d.b[d.i] == 'e' || d.b[d.i] == 'E') {
		d.i++
		if d.i < len(d.b) && (d.b[d.i] == '+' || d.b[d.i] == '-') {
			d.i++
		}
		if d.digits() == 0 {
			return nil, false
		}
	}
	if !d.delimited() {
		return nil, false
	}
	return json.Number(string(d.b[start:d.i])), true
}

// str reads a string without escapes or control characters, in valid UTF-8.
func (d *fastDecoder) str() (string, bool) {
	d.i++ // the opening quote
	start := d.i
	ascii := true
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			s := string(d.b[start:d.i])
			d.i++
			if !ascii && !utf8.ValidString(s) {
				return "", false
			}
			return s, true
		case c == '\\' || c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			ascii = false
		}
		d.i++
	}
	return "", false
}

func (d *fastDecoder) object(depth int) (any, bool) {
	d.i++ // {
	m := map[string]any{}
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == '}' {
		d.i++
		return m, true
	}
	for {
		if d.i >= len(d.b) || d.b[d.i] != '"' {
			return nil, false
		}
		k, ok := d.str()
		if !ok {
			return nil, false
		}
		d.ws()
		if d.i >= len(d.b) || d.b[d.i] != ':' {
			return nil, false
		}
		d.i++
		d.ws()
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		m[k] = v
		d.ws()
		if d.i >= len(d.b) {
			return nil, false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.ws()
		case '}':
			d.i++
			return m, true
		default:
			return nil, false
		}
	}
}

func (d *fastDecoder) array(depth int) (any, bool) {
	d.i++ // [
	a := make([]any, 0)
	d.ws()
	if d.i < len(d.b) && d.b[d.i] == ']' {
		d.i++
		return a, true
	}
	for {
		v, ok := d.value(depth)
		if !ok {
			return nil, false
		}
		a = append(a, v)
		d.ws()
		if d.i >= len(d.b) {
			return nil, false
		}
		switch d.b[d.i] {
		case ',':
			d.i++
			d.ws()
		case ']':
			d.i++
			return a, true
		default:
			return nil, false
		}
	}
}
