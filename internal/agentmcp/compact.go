package agentmcp

import (
	"encoding/json"

	"github.com/modelcontextprotocol/go-sdk/mcp"
)

// compactSchema keeps the schema document and its Revision, leaving out
// the compiled form (which repeats the document for the server's use).
func compactSchema(res *mcp.CallToolResult) *mcp.CallToolResult {
	if res == nil || res.IsError || len(res.Content) != 1 {
		return res
	}
	tc, ok := res.Content[0].(*mcp.TextContent)
	if !ok {
		return res
	}
	var v struct {
		Document json.RawMessage `json:"document"`
		Revision *string         `json:"revision"`
	}
	if json.Unmarshal([]byte(tc.Text), &v) != nil {
		return res
	}
	out, err := json.Marshal(v)
	if err != nil {
		return res
	}
	tc.Text = string(out)
	return res
}
