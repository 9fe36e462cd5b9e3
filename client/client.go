package client

import (
	"bytes"
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// Client calls one Keeper with one token. It is safe for concurrent use.
type Client struct {
	base    string
	token   string
	hc      *http.Client
	retries int
	backoff time.Duration
	trace   string
}

// Option configures a Client.
type Option func(*Client)

// WithHTTPClient sets the HTTP client (default http.DefaultClient).
func WithHTTPClient(hc *http.Client) Option { return func(c *Client) { c.hc = hc } }

// WithRetries sets how many times a retryable call is retried (default 3)
// and the first backoff (default 100ms; it doubles, with jitter).
func WithRetries(n int, backoff time.Duration) Option {
	return func(c *Client) { c.retries, c.backoff = n, backoff }
}

// New returns a Client of the Keeper at baseURL (e.g.
// http://127.0.0.1:8080) acting with token.
func New(baseURL, token string, opts ...Option) *Client {
	c := &Client{base: strings.TrimRight(baseURL, "/"), token: token, hc: http.DefaultClient, retries: 3, backoff: 100 * time.Millisecond}
	for _, o := range opts {
		o(c)
	}
	return c
}

// WithTrace returns a copy of the client whose calls are steps of the
// trace id (sent as X-Lorebase-Trace).
func (c *Client) WithTrace(id string) *Client {
	cp := *c
	cp.trace = id
	return &cp
}

// Problem is an error answer of the API: an RFC 9457 problem document.
type Problem struct {
	// Status is the HTTP status.
	Status int `json:"status"`
	// Type is the problem's type URI (urn:lorebase:problem:...).
	Type string `json:"type"`
	// Title names the kind of problem.
	Title string `json:"title"`
	// Detail says what is wrong, for a person or a model to act on.
	Detail string `json:"detail"`
	// Errors are the fields at fault (a change's index for commits).
	Errors []FieldError `json:"errors"`
	// Conflicts lists unresolved conflicts of a refused merge.
	Conflicts []Conflict `json:"conflicts,omitempty"`
	// RetryAfter is the wait a 429 or 503 asked for (0 when none).
	RetryAfter time.Duration `json:"-"`
}

// FieldError is one field at fault.
type FieldError struct {
	Index   *int   `json:"index,omitempty"`
	Field   string `json:"field,omitempty"`
	Code    string `json:"code"`
	Message string `json:"message"`
}

func (p *Problem) Error() string {
	msg := fmt.Sprintf("lorebase: %d %s", p.Status, p.Title)
	if p.Detail != "" {
		msg += ": " + p.Detail
	}
	return msg
}

// request is one API call.
type request struct {
	method string
	path   string // escaped
	query  url.Values
	body   any
	header http.Header
	retry  bool // safe to send again
}

// do sends a call and decodes a 2xx answer into out (when not nil).
func (c *Client) do(ctx context.Context, rq request, out any) (http.Header, error) {
	var data []byte
	if rq.body != nil {
		var err error
		if raw, ok := rq.body.(json.RawMessage); ok {
			data = raw
		} else if data, err = json.Marshal(rq.body); err != nil {
			return nil, fmt.Errorf("lorebase: encode request: %w", err)
		}
	}
	target := c.base + rq.path
	if len(rq.query) > 0 {
		target += "?" + rq.query.Encode()
	}
	attempts := 1
	if rq.retry {
		attempts += c.retries
	}
	var lastErr error
	for attempt := 0; attempt < attempts; attempt++ {
		if attempt > 0 {
			wait := c.backoff << (attempt - 1)
			wait += time.Duration(rand.Int64N(int64(wait/2) + 1)) //nolint:gosec // G404: backoff jitter needs no secrecy
			var p *Problem
			if errors.As(lastErr, &p) && p.RetryAfter > wait {
				wait = p.RetryAfter
			}
			t := time.NewTimer(wait)
			select {
			case <-ctx.Done():
				t.Stop()
				return nil, errors.Join(ctx.Err(), lastErr)
			case <-t.C:
			}
		}
		h, err := c.send(ctx, rq, target, data, out)
		if err == nil {
			return h, nil
		}
		lastErr = err
		if ctx.Err() != nil || !retryable(err) {
			return h, err
		}
	}
	return nil, lastErr
}

// retryable reports whether a failed call may be sent again.
func retryable(err error) bool {
	var p *Problem
	if errors.As(err, &p) {
		switch p.Status {
		case http.StatusTooManyRequests, http.StatusBadGateway, http.StatusServiceUnavailable, http.StatusGatewayTimeout:
			return true
		}
		return false
	}
	return true // the transport failed: nothing was answered
}

func (c *Client) send(ctx context.Context, rq request, target string, data []byte, out any) (http.Header, error) {
	var body io.Reader
	if data != nil {
		body = bytes.NewReader(data)
	}
	req, err := http.NewRequestWithContext(ctx, rq.method, target, body)
	if err != nil {
		return nil, fmt.Errorf("lorebase: build request: %w", err)
	}
	for k, vs := range rq.header {
		req.Header[k] = vs
	}
	if c.token != "" {
		req.Header.Set("Authorization", "Bearer "+c.token)
	}
	if data != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	req.Header.Set("Accept", "application/json")
	if c.trace != "" {
		req.Header.Set("X-Lorebase-Trace", c.trace)
	}
	resp, err := c.hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("lorebase: %s %s: %w", rq.method, rq.path, err)
	}
	defer func() { _ = resp.Body.Close() }()
	payload, err := io.ReadAll(resp.Body)
	if err != nil {
		return resp.Header, fmt.Errorf("lorebase: %s %s: read answer: %w", rq.method, rq.path, err)
	}
	if resp.StatusCode >= 400 {
		p := &Problem{}
		if json.Unmarshal(payload, p) != nil || p.Title == "" {
			p = &Problem{Title: http.StatusText(resp.StatusCode), Detail: strings.TrimSpace(string(payload))}
		}
		p.Status = resp.StatusCode
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			p.RetryAfter = time.Duration(s) * time.Second
		}
		return resp.Header, p
	}
	if out != nil && resp.StatusCode != http.StatusNoContent && resp.StatusCode != http.StatusNotModified && len(payload) > 0 {
		if raw, ok := out.(*[]byte); ok {
			*raw = payload
			return resp.Header, nil
		}
		if err := json.Unmarshal(payload, out); err != nil {
			return resp.Header, fmt.Errorf("lorebase: %s %s: decode answer: %w", rq.method, rq.path, err)
		}
	}
	return resp.Header, nil
}

// newIdempotencyKey is a random key for a commit sent without one.
func newIdempotencyKey() string {
	var b [16]byte
	_, _ = crand.Read(b[:])
	return "lb-" + hex.EncodeToString(b[:])
}

// esc escapes one path segment, / included.
func esc(s string) string { return url.PathEscape(s) }

// query builds a query from name, value pairs, leaving out empty values.
func query(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}

func itoa(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}
