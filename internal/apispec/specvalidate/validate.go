package specvalidate

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"sync"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/lorebase/lorebase/internal/apispec"
)

// Validator checks responses against the OpenAPI document.
type Validator struct {
	doc   *openapi3.T
	paths []template
}

// template is one documented path, split into segments.
type template struct {
	path     string
	segments []string
	literals int
}

// New loads and validates the document.
func New() (*Validator, error) {
	data, err := apispec.JSON()
	if err != nil {
		return nil, err
	}
	doc, err := openapi3.NewLoader().LoadFromData(data)
	if err != nil {
		return nil, fmt.Errorf("load the OpenAPI document: %w", err)
	}
	if err := doc.Validate(context.Background()); err != nil {
		return nil, fmt.Errorf("the OpenAPI document is invalid: %w", err)
	}
	v := &Validator{doc: doc}
	for _, p := range doc.Paths.InMatchingOrder() {
		t := template{path: p, segments: strings.Split(strings.Trim(p, "/"), "/")}
		for _, s := range t.segments {
			if !strings.HasPrefix(s, "{") {
				t.literals++
			}
		}
		v.paths = append(v.paths, t)
	}
	return v, nil
}

// Document is the loaded OpenAPI document.
func (v *Validator) Document() *openapi3.T { return v.doc }

// Operation finds the documented path template and operation of a method
// and escaped path; ok is false when the document does not know them.
func (v *Validator) Operation(method, escapedPath string) (path string, op *openapi3.Operation, ok bool) {
	segs := strings.Split(strings.Trim(escapedPath, "/"), "/")
	best := -1
	for _, t := range v.paths {
		if len(t.segments) != len(segs) {
			continue
		}
		match := true
		for i, s := range t.segments {
			if strings.HasPrefix(s, "{") {
				if segs[i] == "" {
					match = false
					break
				}
				continue
			}
			if s != segs[i] {
				match = false
				break
			}
		}
		if match && t.literals > best {
			best, path = t.literals, t.path
		}
	}
	if best < 0 {
		return "", nil, false
	}
	item := v.doc.Paths.Value(path)
	op = item.GetOperation(method)
	return path, op, op != nil
}

// InAPI reports whether an escaped path belongs to the API the document
// describes: /v1/..., /mcp and the service endpoints. Other paths are the
// browser UI's (HTML pages, assets), which the document leaves out.
func InAPI(escapedPath string) bool {
	switch escapedPath {
	case "/v1", "/mcp", "/healthz", "/readyz", "/metrics":
		return true
	}
	return strings.HasPrefix(escapedPath, "/v1/")
}

// Check validates one response to req. Responses outside the API (InAPI)
// are not checked.
func (v *Validator) Check(ctx context.Context, req *http.Request, status int, header http.Header, body []byte) error {
	if req.Method == http.MethodHead || !InAPI(req.URL.EscapedPath()) {
		return nil
	}
	path, op, ok := v.Operation(req.Method, req.URL.EscapedPath())
	if !ok {
		if (status == http.StatusNotFound || status == http.StatusMethodNotAllowed) && isProblem(header) {
			return nil
		}
		return fmt.Errorf("%s %s: undocumented route answered %d (document it in internal/apispec/openapi.yaml)",
			req.Method, req.URL.EscapedPath(), status)
	}
	if status == http.StatusNotModified {
		if len(body) > 0 {
			return fmt.Errorf("%s %s: a 304 carries a body", req.Method, path)
		}
		if op.Responses.Status(http.StatusNotModified) == nil {
			return fmt.Errorf("%s %s: 304 is not documented", req.Method, path)
		}
		return nil
	}
	in := &openapi3filter.ResponseValidationInput{
		RequestValidationInput: &openapi3filter.RequestValidationInput{
			Request: req,
			Route: &routers.Route{
				Spec: v.doc, Path: path, PathItem: v.doc.Paths.Value(path),
				Method: req.Method, Operation: op,
			},
		},
		Status:  status,
		Header:  header,
		Body:    io.NopCloser(bytes.NewReader(body)),
		Options: &openapi3filter.Options{IncludeResponseStatus: true, MultiError: true},
	}
	if err := openapi3filter.ValidateResponse(ctx, in); err != nil {
		return fmt.Errorf("%s %s (%s) answered %d against the OpenAPI document: %w\nbody: %s",
			req.Method, req.URL.EscapedPath(), path, status, err, truncate(body))
	}
	return nil
}

func isProblem(h http.Header) bool {
	mt, _, _ := mime.ParseMediaType(h.Get("Content-Type"))
	return mt == "application/problem+json"
}

func truncate(b []byte) string {
	if len(b) > 2000 {
		return string(b[:2000]) + "…"
	}
	return string(b)
}

// Wrap returns a handler that serves next and checks every response it
// writes, calling report with each violation.
func (v *Validator) Wrap(next http.Handler, report func(error)) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := &recorder{ResponseWriter: w}
		next.ServeHTTP(rec, r)
		rec.mu.Lock()
		status, body := rec.status, rec.body.Bytes()
		rec.mu.Unlock()
		if status == 0 {
			status = http.StatusOK
		}
		if err := v.Check(r.Context(), r, status, w.Header(), body); err != nil {
			report(err)
		}
	})
}

// recorder passes a response through and keeps a copy of it.
type recorder struct {
	http.ResponseWriter
	mu     sync.Mutex
	status int
	body   bytes.Buffer
}

func (r *recorder) WriteHeader(status int) {
	r.mu.Lock()
	if r.status == 0 {
		r.status = status
	}
	r.mu.Unlock()
	r.ResponseWriter.WriteHeader(status)
}

func (r *recorder) Write(p []byte) (int, error) {
	r.mu.Lock()
	if r.status == 0 {
		r.status = http.StatusOK
	}
	r.body.Write(p)
	r.mu.Unlock()
	return r.ResponseWriter.Write(p)
}

// Flush passes flushes through (streamed responses).
func (r *recorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// Unwrap lets http.ResponseController reach the underlying writer.
func (r *recorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }
