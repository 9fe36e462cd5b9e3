package keeper

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"unicode/utf8"
)

// readBody reads a whole request body, at most http.max_body_bytes (more is
// a 413), and checks that it is valid UTF-8 without NUL escapes.
func (s *Server) readBody(w http.ResponseWriter, r *http.Request) ([]byte, error) {
	body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, s.cfg.HTTP.MaxBodyBytes))
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return nil, err
		}
		return nil, badRequest("body", "unreadable", "The request body could not be read: "+err.Error()+".")
	}
	if len(bytes.TrimSpace(body)) == 0 {
		return nil, badRequest("body", "empty", "The request body is empty; send a JSON object.")
	}
	if !utf8.Valid(body) {
		off := invalidUTF8Offset(body)
		return nil, badRequest("body", "invalid_utf8", fmt.Sprintf("The request body is not valid UTF-8 (at byte offset %d).", off))
	}
	if off := nulEscapeOffset(body); off >= 0 {
		return nil, badRequest("body", "nul_character",
			fmt.Sprintf("The request body holds a NUL character (\\u0000 at byte offset %d); text cannot contain NUL.", off))
	}
	return body, nil
}

func invalidUTF8Offset(b []byte) int {
	for i := 0; i < len(b); {
		r, size := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && size == 1 {
			return i
		}
		i += size
	}
	return -1
}

// nulEscapeOffset finds a JSON \u0000 escape (one not itself escaped by a
// preceding backslash), or -1.
func nulEscapeOffset(b []byte) int {
	from := 0
	for {
		i := bytes.Index(b[from:], []byte(`u0000`))
		if i < 0 {
			return -1
		}
		at := from + i
		n := 0
		for j := at - 1; j >= 0 && b[j] == '\\'; j-- {
			n++
		}
		if n%2 == 1 {
			return at - 1
		}
		from = at + 1
	}
}

// decodeJSON decodes body into v strictly: unknown fields, trailing data and
// values of the wrong type are 400s naming the field and the byte offset.
func decodeJSON(body []byte, v any) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return jsonError(err, dec.InputOffset())
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badRequest("body", "trailing_data",
			fmt.Sprintf("The request body has data after its JSON value (at byte offset %d); send exactly one JSON object.", dec.InputOffset()))
	}
	return nil
}

// checkJSON checks that body is one JSON object without decoding it into a
// type (for documents passed on whole).
func checkJSON(body []byte) error {
	var raw json.RawMessage
	if err := decodeJSON(body, &raw); err != nil {
		return err
	}
	if raw[0] != '{' {
		return badRequest("body", "invalid_json", "The request body must be a JSON object.")
	}
	return nil
}

func jsonError(err error, offset int64) error {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return badRequest("body", "invalid_json", fmt.Sprintf("The request body is not valid JSON at byte offset %d: %s.", se.Offset, se.Error()))
	case errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF):
		return badRequest("body", "invalid_json", fmt.Sprintf("The request body ends early (at byte offset %d): incomplete JSON.", offset))
	case errors.As(err, &te):
		field := te.Field
		if field == "" {
			field = "body"
		}
		return badRequest(field, "invalid_type",
			fmt.Sprintf("The field %s must be %s, not a JSON %s (at byte offset %d).", quote(field), describeGoType(te.Type.Kind().String()), te.Value, te.Offset))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		return badRequest("body", "unknown_field", fmt.Sprintf("The request body has an unknown field %s (near byte offset %d).", name, offset))
	}
	return badRequest("body", "invalid_json", fmt.Sprintf("The request body could not be decoded (near byte offset %d): %s.", offset, err.Error()))
}

func describeGoType(kind string) string {
	switch kind {
	case "string":
		return "a string"
	case "slice", "array":
		return "an array"
	case "struct", "map":
		return "an object"
	case "bool":
		return "a boolean"
	case "ptr":
		return "a value"
	default:
		return "a number"
	}
}

// decodeBounded reads the body (readBody), refuses one over max bytes
// naming what it is ("A Proposal request"), and decodes it into v.
func (s *Server) decodeBounded(w http.ResponseWriter, r *http.Request, max int, what string, v any) error {
	body, err := s.readBody(w, r)
	if err != nil {
		return err
	}
	if len(body) > max {
		return badRequest("body", "too_long", fmt.Sprintf("%s is at most %d bytes.", what, max))
	}
	return decodeJSON(body, v)
}
