package web

import (
	"context"

	"github.com/lorebase/lorebase/client"
)

// The pages decode the API's answers into the Go client's types (package
// client): one set of types for the API's JSON. Only the envelopes of
// list answers that the client decodes privately are named here.

type branchList struct {
	Branches []client.BranchInfo `json:"branches"`
	Next     string              `json:"next,omitempty"`
}

type linkList struct {
	Links []client.Link `json:"links"`
}

type proposalList struct {
	Proposals []client.Proposal `json:"proposals"`
	Next      string            `json:"next,omitempty"`
}

type conflictList struct {
	Conflicts []client.Conflict `json:"conflicts"`
}

// schemaRead is a branch's schema with its document decoded.
type schemaRead struct {
	client.Schema
	Doc client.SchemaDocument
}

// schema reads the schema of the branch at API path bp.
func (c *apiClient) schema(ctx context.Context, token, bp string, out *schemaRead) error {
	if err := c.get(ctx, token, bp+"/schema", nil, &out.Schema); err != nil {
		return err
	}
	doc, err := out.Definition()
	if err != nil {
		return err
	}
	out.Doc = doc
	return nil
}
