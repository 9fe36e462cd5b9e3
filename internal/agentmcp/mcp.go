package agentmcp

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strconv"
	"strings"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// Options configure the endpoint.
type Options struct {
	// API serves Keeper's JSON API; tools call it in-process.
	API http.Handler
	// Domain names the Domain of a request's Authorization header, or
	// fails (the token is not valid, or is not a Domain's).
	Domain func(ctx context.Context, authorization string) (string, error)
	// MaxBodyBytes bounds a JSON-RPC message.
	MaxBodyBytes int64
	// Version is reported to clients.
	Version string
	// Logger receives the SDK's logs; nil discards them.
	Logger *slog.Logger
}

// New returns the /mcp handler. Authentication is the caller's: the
// request must already carry a valid bearer token of a Domain.
func New(o Options) http.Handler {
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	if o.Version == "" {
		o.Version = "1"
	}
	srv := mcp.NewServer(&mcp.Implementation{Name: "lorebase", Title: "Lorebase", Version: o.Version}, &mcp.ServerOptions{
		Instructions: "Lorebase is a versioned knowledge graph. Work on a branch of your own (create_branch from main), " +
			"search and resolve before writing so you reuse existing keys, commit with provenance, then propose " +
			"your branch into main, list and resolve conflicts, and merge. Pass the same trace on every call of a task.",
		Logger: o.Logger,
	})
	t := &tools{o: o}
	t.register(srv)
	return mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return srv }, &mcp.StreamableHTTPOptions{
		Stateless:           true,
		JSONResponse:        true,
		Logger:              o.Logger,
		MaxRequestBodyBytes: o.MaxBodyBytes,
	})
}

// tools holds what every tool needs.
type tools struct{ o Options }

// call is one in-process API call.
type call struct {
	method string
	path   string // escaped, under /v1/domains/{domain}
	query  url.Values
	body   any
	header map[string]string
}

// do serves an API call with the caller's token and answers its result:
// the API's JSON on success, a tool error with the problem otherwise.
func (t *tools) do(ctx context.Context, req *mcp.CallToolRequest, trace string, c call) (*mcp.CallToolResult, any, error) {
	auth := ""
	if req.Extra != nil && req.Extra.Header != nil {
		auth = req.Extra.Header.Get("Authorization")
	}
	domain, err := t.o.Domain(ctx, auth)
	if err != nil {
		return toolError(err.Error()), nil, nil
	}
	target := "/v1/domains/" + url.PathEscape(domain) + c.path
	if len(c.query) > 0 {
		target += "?" + c.query.Encode()
	}
	var body io.Reader
	if c.body != nil {
		data, err := json.Marshal(c.body)
		if err != nil {
			return toolError("The arguments cannot be encoded: " + err.Error()), nil, nil
		}
		body = bytes.NewReader(data)
	}
	hr, err := http.NewRequestWithContext(ctx, c.method, "http://keeper"+target, body)
	if err != nil {
		return toolError("The arguments do not make a valid request: " + err.Error()), nil, nil
	}
	hr.Host = "localhost"
	hr.Header.Set("Authorization", auth)
	if body != nil {
		hr.Header.Set("Content-Type", "application/json")
	}
	if trace != "" {
		hr.Header.Set("X-Lorebase-Trace", trace)
	}
	for k, v := range c.header {
		if v != "" {
			hr.Header.Set(k, v)
		}
	}
	rw := newBuffer()
	t.o.API.ServeHTTP(rw, hr)
	if rw.status >= 400 {
		return toolError(describeProblem(rw.status, rw.body.Bytes())), nil, nil
	}
	text := strings.TrimSpace(rw.body.String())
	if text == "" {
		text = `{"status":` + strconv.Itoa(rw.status) + `}`
	}
	return &mcp.CallToolResult{Content: []mcp.Content{&mcp.TextContent{Text: text}}}, nil, nil
}

// toolError is an error result a model reads and can act on.
func toolError(msg string) *mcp.CallToolResult {
	return &mcp.CallToolResult{IsError: true, Content: []mcp.Content{&mcp.TextContent{Text: msg}}}
}

// describeProblem renders a problem document as a tool error: the status,
// what is wrong and each field at fault, then the document itself.
func describeProblem(status int, body []byte) string {
	var p struct {
		Title  string `json:"title"`
		Detail string `json:"detail"`
		Errors []struct {
			Index   *int   `json:"index"`
			Field   string `json:"field"`
			Code    string `json:"code"`
			Message string `json:"message"`
		} `json:"errors"`
	}
	if err := json.Unmarshal(body, &p); err != nil || p.Title == "" {
		return fmt.Sprintf("HTTP %d: %s", status, strings.TrimSpace(string(body)))
	}
	var b strings.Builder
	fmt.Fprintf(&b, "HTTP %d %s: %s", status, p.Title, p.Detail)
	for _, e := range p.Errors {
		b.WriteString("\n- ")
		if e.Index != nil {
			fmt.Fprintf(&b, "changes[%d] ", *e.Index)
		}
		if e.Field != "" {
			b.WriteString(e.Field + " ")
		}
		fmt.Fprintf(&b, "(%s): %s", e.Code, e.Message)
	}
	b.WriteString("\nproblem: ")
	b.Write(bytes.TrimSpace(body))
	return b.String()
}

// buffer is a ResponseWriter keeping the whole answer.
type buffer struct {
	header http.Header
	status int
	body   bytes.Buffer
}

func newBuffer() *buffer { return &buffer{header: http.Header{}} }

func (b *buffer) Header() http.Header { return b.header }

func (b *buffer) WriteHeader(status int) {
	if b.status == 0 {
		b.status = status
	}
}

func (b *buffer) Write(p []byte) (int, error) {
	if b.status == 0 {
		b.status = http.StatusOK
	}
	return b.body.Write(p)
}

// ErrNoDomain is answered for a token that names no Domain (the bootstrap
// admin): MCP tools work inside one Domain.
var ErrNoDomain = errors.New("MCP needs a token of a Domain; the bootstrap admin token has none")
