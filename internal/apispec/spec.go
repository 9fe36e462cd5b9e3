package apispec

import (
	_ "embed"
	"fmt"

	"github.com/goccy/go-yaml"
)

//go:embed openapi.yaml
var document []byte

// YAML is the OpenAPI document as written.
func YAML() []byte { return append([]byte(nil), document...) }

// JSON is the OpenAPI document as JSON, as GET /v1/openapi.json serves it.
func JSON() ([]byte, error) {
	out, err := yaml.YAMLToJSON(document)
	if err != nil {
		return nil, fmt.Errorf("convert the OpenAPI document to JSON: %w", err)
	}
	return out, nil
}
