package agentmcp

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"

	"github.com/google/jsonschema-go/jsonschema"
	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// branchPath is the escaped path of a branch ("main" when empty).
func branchPath(b string) string {
	if b == "" {
		b = "main"
	}
	return "/branches/" + url.PathEscape(b)
}

// values builds a query from name, value pairs, leaving out empty values.
func values(kv ...string) url.Values {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		if kv[i+1] != "" {
			q.Set(kv[i], kv[i+1])
		}
	}
	return q
}

func num(n int) string {
	if n == 0 {
		return ""
	}
	return strconv.Itoa(n)
}

// Common is what every tool takes.
type Common struct {
	Trace string `json:"trace,omitempty" jsonschema:"an id naming the task; every call with it is recorded as a step of that trace"`
}

type searchIn struct {
	Common
	Branch string `json:"branch,omitempty" jsonschema:"the branch to read (default main)"`
	Q      string `json:"q" jsonschema:"the text to search for; typos are corrected and partial matches ranked"`
	Mode   string `json:"mode,omitempty" jsonschema:"text (default: by words), semantic (by meaning: Kinds that declare an embedding) or hybrid (both, fused)"`
	Kind   string `json:"kind,omitempty" jsonschema:"only Records of this Kind"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many results (default 20)"`
	At     string `json:"at,omitempty" jsonschema:"read as of this Revision id"`
}

type recordIn struct {
	Common
	Branch string `json:"branch,omitempty" jsonschema:"the branch to read (default main)"`
	Key    string `json:"key" jsonschema:"the Record's key"`
	At     string `json:"at,omitempty" jsonschema:"read as of this Revision id"`
}

type neighborhoodIn struct {
	Common
	Branch string `json:"branch,omitempty" jsonschema:"the branch to read (default main)"`
	Key    string `json:"key" jsonschema:"the Record at the center"`
	Depth  int    `json:"depth,omitempty" jsonschema:"hops to follow (default 2)"`
	Limit  int    `json:"limit,omitempty" jsonschema:"at most this many Records (default 200)"`
}

type lineageIn struct {
	Common
	Branch string `json:"branch,omitempty" jsonschema:"the branch to read (default main)"`
	Key    string `json:"key" jsonschema:"the Record's key"`
}

type resolveIn struct {
	Common
	Branch  string `json:"branch,omitempty" jsonschema:"the branch to read (default main)"`
	Mention string `json:"mention" jsonschema:"a name or key as found in a source"`
	Kind    string `json:"kind,omitempty" jsonschema:"only candidates of this Kind"`
	Limit   int    `json:"limit,omitempty" jsonschema:"at most this many candidates (default 10)"`
}

type schemaIn struct {
	Common
	Branch string `json:"branch,omitempty" jsonschema:"the branch (default main)"`
}

type listBranchesIn struct {
	Common
	Limit int    `json:"limit,omitempty" jsonschema:"at most this many branches"`
	After string `json:"after,omitempty" jsonschema:"the next cursor of the previous page"`
}

type createBranchIn struct {
	Common
	Name string `json:"name" jsonschema:"the new branch, e.g. agent/scout-7/task-12"`
	From string `json:"from,omitempty" jsonschema:"the branch to fork (default main)"`
	Mode string `json:"mode,omitempty" jsonschema:"overlay (default, instant) or copy"`
	At   string `json:"at,omitempty" jsonschema:"fork at this Revision instead of the head"`
}

type commitIn struct {
	Common
	Branch         string           `json:"branch" jsonschema:"the branch to commit to"`
	Message        string           `json:"message" jsonschema:"what the commit does"`
	Author         string           `json:"author,omitempty" jsonschema:"who makes it (default the token's name)"`
	ExpectedHead   string           `json:"expected_head,omitempty" jsonschema:"fail with a conflict if the branch head is no longer this Revision"`
	Provenance     map[string]any   `json:"provenance,omitempty" jsonschema:"where the knowledge comes from: source, tool, quote, confidence"`
	Changes        []map[string]any `json:"changes" jsonschema:"the changes: {op:put,kind,key,values}, {op:patch,key,values}, {op:delete,key}, {op:link|unlink,relation,from,to}"`
	IdempotencyKey string           `json:"idempotency_key,omitempty" jsonschema:"a key making a retried commit apply once"`
}

type diffIn struct {
	Common
	Branch  string `json:"branch" jsonschema:"the source branch"`
	Against string `json:"against,omitempty" jsonschema:"the target branch (default main)"`
	Limit   int    `json:"limit,omitempty" jsonschema:"at most this many changed Records"`
	After   string `json:"after,omitempty" jsonschema:"the next cursor of the previous page"`
}

type proposeIn struct {
	Common
	Title       string `json:"title" jsonschema:"what the Proposal brings"`
	Description string `json:"description,omitempty" jsonschema:"why, for the reviewer"`
	Source      string `json:"source" jsonschema:"the branch to merge"`
	Target      string `json:"target,omitempty" jsonschema:"the branch to merge into (default main)"`
}

type conflictsIn struct {
	Common
	Proposal string `json:"proposal" jsonschema:"the Proposal id"`
}

type resolveConflictIn struct {
	Common
	Proposal    string `json:"proposal" jsonschema:"the Proposal id"`
	Conflict    string `json:"conflict" jsonschema:"the conflict id"`
	Choice      string `json:"choice" jsonschema:"target, source or value"`
	Value       any    `json:"value,omitempty" jsonschema:"the value to keep when choice is value"`
	Fingerprint string `json:"fingerprint" jsonschema:"the conflict's fingerprint as listed (a stale one is refused)"`
}

type mergeIn struct {
	Common
	Proposal           string `json:"proposal" jsonschema:"the Proposal id"`
	ExpectedTargetHead string `json:"expected_target_head,omitempty" jsonschema:"fail if the target head is no longer this Revision"`
	Default            string `json:"default,omitempty" jsonschema:"target or source: how to settle conflicts left unresolved"`
	Message            string `json:"message,omitempty" jsonschema:"the merge commit's message"`
}

func ptr[T any](v T) *T { return &v }

func (t *tools) register(s *mcp.Server) {
	read := &mcp.ToolAnnotations{ReadOnlyHint: true, OpenWorldHint: ptr(false)}
	write := func(destructive, idempotent bool) *mcp.ToolAnnotations {
		return &mcp.ToolAnnotations{DestructiveHint: ptr(destructive), IdempotentHint: idempotent, OpenWorldHint: ptr(false)}
	}
	add(s, &mcp.Tool{Name: "search", Annotations: read,
		Description: "Search a branch by words (mode text: typo-tolerant, partial matching), by meaning (mode semantic) or both (mode hybrid): {results:[{key,kind,title,score,match}], corrections, mode, fewer_than_limit, ranked, truncated}; truncated means only the first ranked text matches were ranked, so narrow the query."},
		func(ctx context.Context, req *mcp.CallToolRequest, in searchIn) (*mcp.CallToolResult, any, error) {
			return t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: branchPath(in.Branch) + "/search",
				query: values("q", in.Q, "mode", in.Mode, "kind", in.Kind, "limit", num(in.Limit), "at", in.At)})
		})
	add(s, &mcp.Tool{Name: "get_record", Annotations: read,
		Description: "One Record: {key,kind,title,values,revision}."},
		func(ctx context.Context, req *mcp.CallToolRequest, in recordIn) (*mcp.CallToolResult, any, error) {
			return t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: branchPath(in.Branch) + "/records/" + url.PathEscape(in.Key),
				query: values("at", in.At)})
		})
	add(s, &mcp.Tool{Name: "neighborhood", Annotations: read,
		Description: "The Records and Links around a Record: {records:[{key,kind,title,depth}], links:[{relation,from,to}]}."},
		func(ctx context.Context, req *mcp.CallToolRequest, in neighborhoodIn) (*mcp.CallToolResult, any, error) {
			return t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: branchPath(in.Branch) + "/records/" + url.PathEscape(in.Key) + "/neighborhood",
				query: values("depth", num(in.Depth), "limit", num(in.Limit))})
		})
	add(s, &mcp.Tool{Name: "lineage", Annotations: read,
		Description: "Where each value of a Record comes from: Revision, author, time, provenance (with its trace) and Proposal."},
		func(ctx context.Context, req *mcp.CallToolRequest, in lineageIn) (*mcp.CallToolResult, any, error) {
			return t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: branchPath(in.Branch) + "/records/" + url.PathEscape(in.Key) + "/lineage"})
		})
	add(s, &mcp.Tool{Name: "resolve", Annotations: read,
		Description: "Entity resolution: which existing Records a mention may be, best first: {candidates:[{key,kind,title,score,reason}]}. Call it before creating a Record."},
		func(ctx context.Context, req *mcp.CallToolRequest, in resolveIn) (*mcp.CallToolResult, any, error) {
			return t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: branchPath(in.Branch) + "/resolve",
				query: values("mention", in.Mention, "kind", in.Kind, "limit", num(in.Limit))})
		})
	add(s, &mcp.Tool{Name: "describe_schema", Annotations: read,
		Description: "The branch's schema document: Kinds with their Attributes, and Relations."},
		func(ctx context.Context, req *mcp.CallToolRequest, in schemaIn) (*mcp.CallToolResult, any, error) {
			res, out, err := t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: branchPath(in.Branch) + "/schema"})
			return compactSchema(res), out, err
		})
	add(s, &mcp.Tool{Name: "list_branches", Annotations: read,
		Description: "The Domain's branches by name: {branches:[...], next}; pass next as after for more."},
		func(ctx context.Context, req *mcp.CallToolRequest, in listBranchesIn) (*mcp.CallToolResult, any, error) {
			return t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: "/branches",
				query: values("limit", num(in.Limit), "after", in.After)})
		})
	add(s, &mcp.Tool{Name: "create_branch", Annotations: write(false, false),
		Description: "Fork a branch (an overlay is ready at once): {name,mode,base,fork_revision,head,state}."},
		func(ctx context.Context, req *mcp.CallToolRequest, in createBranchIn) (*mcp.CallToolResult, any, error) {
			from := in.From
			if from == "" {
				from = "main"
			}
			body := map[string]any{"name": in.Name, "from": from}
			if in.Mode != "" {
				body["mode"] = in.Mode
			}
			if in.At != "" {
				body["at"] = in.At
			}
			return t.do(ctx, req, in.Trace, call{method: http.MethodPost, path: "/branches", body: body})
		})
	add(s, &mcp.Tool{Name: "commit", Annotations: write(true, false),
		Description: "Commit changes to a branch atomically: {revision,parents,changes}. Every violation is reported with the index of its change and nothing is written."},
		func(ctx context.Context, req *mcp.CallToolRequest, in commitIn) (*mcp.CallToolResult, any, error) {
			body := map[string]any{"message": in.Message, "changes": in.Changes}
			if in.Author != "" {
				body["author"] = in.Author
			}
			if in.ExpectedHead != "" {
				body["expected_head"] = in.ExpectedHead
			}
			if in.Provenance != nil {
				body["provenance"] = in.Provenance
			}
			if in.Changes == nil {
				body["changes"] = []any{}
			}
			return t.do(ctx, req, in.Trace, call{method: http.MethodPost, path: branchPath(in.Branch) + "/commits", body: body,
				header: map[string]string{"Idempotency-Key": in.IdempotencyKey}})
		})
	add(s, &mcp.Tool{Name: "diff", Annotations: read,
		Description: "What a branch changed since its merge base with another: summary, then Records with Attribute before/after and Links; pass next as after for more."},
		func(ctx context.Context, req *mcp.CallToolRequest, in diffIn) (*mcp.CallToolResult, any, error) {
			against := in.Against
			if against == "" {
				against = "main"
			}
			return t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: branchPath(in.Branch) + "/diff",
				query: values("against", against, "limit", num(in.Limit), "after", in.After)})
		})
	add(s, &mcp.Tool{Name: "propose", Annotations: write(false, false),
		Description: "Open a Proposal to merge a branch: {id,state,summary,conflicts,mergeable}."},
		func(ctx context.Context, req *mcp.CallToolRequest, in proposeIn) (*mcp.CallToolResult, any, error) {
			target := in.Target
			if target == "" {
				target = "main"
			}
			body := map[string]any{"title": in.Title, "source": in.Source, "target": target}
			if in.Description != "" {
				body["description"] = in.Description
			}
			return t.do(ctx, req, in.Trace, call{method: http.MethodPost, path: "/proposals", body: body})
		})
	add(s, &mcp.Tool{Name: "list_conflicts", Annotations: read,
		Description: "A Proposal's conflicts: {conflicts:[{id,code,kind,key,attribute,base,target,source,fingerprint,resolution}]}."},
		func(ctx context.Context, req *mcp.CallToolRequest, in conflictsIn) (*mcp.CallToolResult, any, error) {
			return t.do(ctx, req, in.Trace, call{method: http.MethodGet, path: "/proposals/" + url.PathEscape(in.Proposal) + "/conflicts"})
		})
	add(s, &mcp.Tool{Name: "resolve_conflict", Annotations: write(false, true),
		Description: "Resolve one conflict of a Proposal: keep the target's value, the source's, or a value given."},
		func(ctx context.Context, req *mcp.CallToolRequest, in resolveConflictIn) (*mcp.CallToolResult, any, error) {
			body := map[string]any{"choice": in.Choice, "fingerprint": in.Fingerprint}
			if in.Value != nil {
				body["value"] = in.Value
			}
			return t.do(ctx, req, in.Trace, call{method: http.MethodPut,
				path: "/proposals/" + url.PathEscape(in.Proposal) + "/conflicts/" + url.PathEscape(in.Conflict) + "/resolution", body: body})
		})
	add(s, &mcp.Tool{Name: "merge_proposal", Annotations: write(true, false),
		Description: "Merge a Proposal into its target: {revision,parents,fast_forward}; unresolved conflicts are listed in the error."},
		func(ctx context.Context, req *mcp.CallToolRequest, in mergeIn) (*mcp.CallToolResult, any, error) {
			body := map[string]any{}
			if in.ExpectedTargetHead != "" {
				body["expected_target_head"] = in.ExpectedTargetHead
			}
			if in.Default != "" {
				body["default"] = in.Default
			}
			if in.Message != "" {
				body["message"] = in.Message
			}
			return t.do(ctx, req, in.Trace, call{method: http.MethodPost, path: "/proposals/" + url.PathEscape(in.Proposal) + "/merge", body: body})
		})
}

// add registers a tool whose input schema refuses unknown arguments (a
// misspelt or invented argument is an error, never silently ignored).
func add[In any](s *mcp.Server, tool *mcp.Tool, h mcp.ToolHandlerFor[In, any]) {
	schema, err := jsonschema.For[In](nil)
	if err != nil {
		// The input types are fixed at build time; tests list every tool.
		panic(fmt.Sprintf("input schema of %s: %v", tool.Name, err))
	}
	schema.AdditionalProperties = &jsonschema.Schema{Not: &jsonschema.Schema{}}
	tool.InputSchema = schema
	mcp.AddTool(s, tool, h)
}
