package web

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"github.com/go-chi/chi/v5"
)

// apiClient calls Keeper's JSON API in process, through its http.Handler,
// with the signed-in person's token: the UI sees exactly what the token may
// see, under the same grants, validation and problem documents.
type apiClient struct {
	h http.Handler
}

// apiError is a problem document (DESIGN.md section 5) answered by the API.
type apiError struct {
	Status int            `json:"status"`
	Title  string         `json:"title"`
	Detail string         `json:"detail"`
	Errors []problemEntry `json:"errors"`
	// Body is the whole answer, for problem documents with extra members
	// (a 409 on merge lists its conflicts).
	Body []byte `json:"-"`
}

// problemEntry is one violation of a problem document.
type problemEntry struct {
	Index   *int   `json:"index"`
	Field   string `json:"field"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (e *apiError) Error() string {
	if e.Detail != "" {
		return fmt.Sprintf("%d %s: %s", e.Status, e.Title, e.Detail)
	}
	return fmt.Sprintf("%d %s", e.Status, e.Title)
}

// statusOf is the HTTP status an error from the API carries (0 if none).
func statusOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.Status
	}
	return 0
}

// bufferedResponse is an http.ResponseWriter that keeps the answer.
type bufferedResponse struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func (b *bufferedResponse) Header() http.Header { return b.header }

func (b *bufferedResponse) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *bufferedResponse) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// seg escapes one path segment, / included (branch names and keys).
func seg(s string) string { return url.PathEscape(s) }

// call sends one request to the API: path is escaped already, query may be
// nil, body (when not nil) is sent as JSON. A 2xx answer is decoded into
// out (when not nil); any other answer is an *apiError.
func (c *apiClient) call(ctx context.Context, token, method, path string, query url.Values, body, out any) error {
	var rd io.Reader
	if body != nil {
		data, err := json.Marshal(body)
		if err != nil {
			return fmt.Errorf("encode %s %s: %w", method, path, err)
		}
		rd = bytes.NewReader(data)
	}
	target := "http://keeper.internal" + path
	if len(query) > 0 {
		target += "?" + query.Encode()
	}
	// The internal request must not reuse the routing state of the page
	// request it serves: chi keeps it in the context.
	ctx = context.WithValue(ctx, chi.RouteCtxKey, nil)
	req, err := http.NewRequestWithContext(ctx, method, target, rd) //nolint:gosec // G704: served in process by the API router, never sent over a network
	if err != nil {
		return fmt.Errorf("build %s %s: %w", method, path, err)
	}
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Accept", "application/json")
	if rd != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.RemoteAddr = "web"
	resp := &bufferedResponse{header: http.Header{}}
	c.h.ServeHTTP(resp, req)
	if resp.status == 0 {
		resp.status = http.StatusOK
	}
	if resp.status < 200 || resp.status > 299 {
		ae := &apiError{Status: resp.status, Body: resp.body.Bytes()}
		if strings.Contains(resp.header.Get("Content-Type"), "json") {
			_ = json.Unmarshal(resp.body.Bytes(), ae)
		}
		ae.Status = resp.status
		if ae.Title == "" {
			ae.Title = http.StatusText(resp.status)
		}
		return ae
	}
	if out == nil {
		return nil
	}
	if err := json.Unmarshal(resp.body.Bytes(), out); err != nil {
		return fmt.Errorf("decode %s %s: %w", method, path, err)
	}
	return nil
}

// get is call with GET and no body.
func (c *apiClient) get(ctx context.Context, token, path string, query url.Values, out any) error {
	return c.call(ctx, token, http.MethodGet, path, query, nil, out)
}
