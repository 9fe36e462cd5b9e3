package embed

import (
	"context"
	"fmt"
	"math"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/schema"
)

// Embedder turns texts into vectors of dims dimensions, one per text, in
// order. A text that yields no direction (empty) gets a nil vector.
type Embedder interface {
	Embed(ctx context.Context, texts []string, dims int) ([][]float32, error)
}

// Set is the embedders a process serves, by model name: schema.ModelHash
// always, and the HTTP embedder's model when one is configured.
type Set struct {
	hash Hash
	http *HTTP
}

// NewSet returns the embedders: the hash embedder, and h when not nil.
func NewSet(h *HTTP) *Set { return &Set{http: h} }

// Known reports whether model is served (schema.ModelClient is: its vectors
// come with the changes).
func (s *Set) Known(model string) bool {
	switch {
	case model == schema.ModelHash || model == schema.ModelClient:
		return true
	case s != nil && s.http != nil:
		return model == s.http.Model()
	}
	return false
}

// For returns the embedder of model. schema.ModelClient has none: it is
// lberr.Unprocessable, as is a model no embedder serves.
func (s *Set) For(model string) (Embedder, error) {
	switch {
	case model == schema.ModelHash:
		return s.hash, nil
	case model == schema.ModelClient:
		return nil, lberr.New(lberr.Unprocessable, "this kind embeds with model \"client\": its vectors come from the client; send the query as vector=")
	case s != nil && s.http != nil && model == s.http.Model():
		return s.http, nil
	}
	return nil, lberr.New(lberr.Unprocessable, fmt.Sprintf("no embedder serves model %q: configure embeddings.url and embeddings.model", model))
}

// Unit scales v to unit length in place and reports whether it had one
// (a zero vector has none).
func Unit(v []float32) bool {
	var n float64
	for _, x := range v {
		n += float64(x) * float64(x)
	}
	if n == 0 || math.IsInf(n, 0) || math.IsNaN(n) {
		return false
	}
	n = math.Sqrt(n)
	for i := range v {
		v[i] = float32(float64(v[i]) / n)
	}
	return true
}

// FromConfig returns the embedders Keeper's configuration names: the hash
// embedder, and the HTTP embedder when embeddings.url is set.
func FromConfig(c config.Embeddings) (*Set, error) {
	if c.URL == "" && c.Model == "" {
		return NewSet(nil), nil
	}
	if c.Model == schema.ModelHash || c.Model == schema.ModelClient {
		return nil, fmt.Errorf("embed: embeddings.model %q is reserved for the built-in models; name the HTTP model", c.Model)
	}
	h, err := NewHTTP(HTTPConfig{URL: c.URL, Model: c.Model, APIKey: c.APIKey, BatchSize: c.BatchSize,
		RatePerSec: float64(c.RequestsPerSecond), MaxRetries: c.MaxRetries})
	if err != nil {
		return nil, err
	}
	return NewSet(h), nil
}
