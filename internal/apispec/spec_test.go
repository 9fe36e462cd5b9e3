package apispec_test

import (
	"context"
	"encoding/json"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/apispec"
)

func TestDocumentIsValidOpenAPI31(t *testing.T) {
	t.Parallel()
	data, err := apispec.JSON()
	require.NoError(t, err)
	var m map[string]any
	require.NoError(t, json.Unmarshal(data, &m))
	require.Equal(t, "3.1.0", m["openapi"])
	doc, err := openapi3.NewLoader().LoadFromData(data)
	require.NoError(t, err)
	require.NoError(t, doc.Validate(context.Background()))
	// Every operation has an id (the client and the MCP tools name them).
	ids := map[string]bool{}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			require.NotEmpty(t, op.OperationID, "%s %s", method, path)
			require.False(t, ids[op.OperationID], "duplicate operationId %s", op.OperationID)
			ids[op.OperationID] = true
		}
	}
}
