package embed_test

import (
	"context"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/embed"
)

func dot(a, b []float32) float64 {
	var s float64
	for i := range a {
		s += float64(a[i]) * float64(b[i])
	}
	return s
}

func TestHashVector(t *testing.T) {
	t.Parallel()
	v := embed.HashVector("Hex bolt, M8 zinc plated", 64)
	require.Len(t, v, 64)
	require.InDelta(t, 1, dot(v, v), 1e-5, "unit length")
	require.Equal(t, v, embed.HashVector("hex BOLT m8 zinc plated!", 64), "words are lower-cased runs of letters and digits")
	for _, c := range []struct {
		a, b string
		min  float64
		max  float64
	}{
		{"hex bolt", "hex bolt", 0.999, 1.001},
		{"hex bolt", "hex bolts", 0.5, 0.999},
		{"hex bolt", "copper wire", -0.5, 0.35},
		{"Köln Straße", "köln straße", 0.999, 1.001},
	} {
		s := dot(embed.HashVector(c.a, 256), embed.HashVector(c.b, 256))
		require.GreaterOrEqual(t, s, c.min, "%q~%q", c.a, c.b)
		require.LessOrEqual(t, s, c.max, "%q~%q", c.a, c.b)
	}
	require.Nil(t, embed.HashVector("", 64))
	require.Nil(t, embed.HashVector(" ,;- ", 64))
	require.Nil(t, embed.HashVector("word", 0))
	// Signed features: some coordinates are negative.
	neg := false
	for _, x := range embed.HashVector("the quick brown fox jumps over the lazy dog", 64) {
		neg = neg || x < 0
	}
	require.True(t, neg)
}

func TestUnit(t *testing.T) {
	t.Parallel()
	v := []float32{3, 4}
	require.True(t, embed.Unit(v))
	require.InDelta(t, 0.6, v[0], 1e-6)
	require.False(t, embed.Unit([]float32{0, 0}))
	require.False(t, embed.Unit([]float32{float32(math.Inf(1)), 0}))
}

func TestSet(t *testing.T) {
	t.Parallel()
	s, err := embed.FromConfig(config.Embeddings{})
	require.NoError(t, err)
	require.True(t, s.Known("hash"))
	require.True(t, s.Known("client"))
	require.False(t, s.Known("text-embedding-3-small"))
	_, err = s.For("client")
	require.Error(t, err)
	_, err = s.For("nope")
	require.Error(t, err)
	_, err = embed.FromConfig(config.Embeddings{URL: "http://127.0.0.1:1/v1/embeddings"})
	require.Error(t, err, "a URL needs a model")
	_, err = embed.FromConfig(config.Embeddings{URL: "http://127.0.0.1:1/v1/embeddings", Model: "hash"})
	require.Error(t, err, "built-in names are reserved")
	s, err = embed.FromConfig(config.Embeddings{URL: "http://127.0.0.1:1/v1/embeddings", Model: "m1"})
	require.NoError(t, err)
	require.True(t, s.Known("m1"))
}

// fakeServer answers OpenAI-compatible embeddings with the hash vectors,
// after failing the first fail requests with status.
func fakeServer(t *testing.T, fail int32, status int, calls *atomic.Int32) *httptest.Server {
	t.Helper()
	hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := calls.Add(1)
		if n <= fail {
			w.WriteHeader(status)
			return
		}
		var req struct {
			Model      string   `json:"model"`
			Input      []string `json:"input"`
			Dimensions int      `json:"dimensions"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		type item struct {
			Index     int       `json:"index"`
			Embedding []float32 `json:"embedding"`
		}
		var out struct {
			Data []item `json:"data"`
		}
		// Answered in reverse order: the index places them.
		for i := len(req.Input) - 1; i >= 0; i-- {
			out.Data = append(out.Data, item{Index: i, Embedding: embed.HashVector(req.Input[i], req.Dimensions)})
		}
		_ = json.NewEncoder(w).Encode(out)
	}))
	t.Cleanup(hs.Close)
	return hs
}

func TestHTTPEmbedder(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		fail    int32
		status  int
		retries int
		wantErr bool
		calls   int32
	}{
		{"ok", 0, 0, 3, false, 2},
		{"retries 503", 2, http.StatusServiceUnavailable, 3, false, 4},
		{"retries 429", 1, http.StatusTooManyRequests, 3, false, 3},
		{"gives up", 5, http.StatusBadGateway, 2, true, 3},
		{"400 is final", 1, http.StatusBadRequest, 3, true, 1},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var calls atomic.Int32
			hs := fakeServer(t, c.fail, c.status, &calls)
			h, err := embed.NewHTTP(embed.HTTPConfig{URL: hs.URL, Model: "m", BatchSize: 3, RatePerSec: 1000,
				MaxRetries: c.retries, Backoff: time.Millisecond})
			require.NoError(t, err)
			texts := []string{"hex bolt", "", "copper wire", "rubber seal", "steel nut"}
			vs, err := h.Embed(context.Background(), texts, 32)
			require.Equal(t, c.calls, calls.Load())
			if c.wantErr {
				require.Error(t, err)
				return
			}
			require.NoError(t, err)
			require.Len(t, vs, len(texts))
			require.Nil(t, vs[1], "an empty text has no embedding")
			for i, tx := range texts {
				if tx != "" {
					require.InDeltaSlice(t, embed.HashVector(tx, 32), vs[i], 1e-6, tx)
				}
			}
		})
	}
}

func TestHTTPEmbedderWrongAnswers(t *testing.T) {
	t.Parallel()
	for name, body := range map[string]string{
		"too few":    `{"data": []}`,
		"wrong dims": `{"data": [{"index": 0, "embedding": [1, 2]}]}`,
		"bad index":  `{"data": [{"index": 7, "embedding": [1, 2, 3]}]}`,
		"not json":   `<html>`,
	} {
		hs := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = w.Write([]byte(body)) }))
		h, err := embed.NewHTTP(embed.HTTPConfig{URL: hs.URL, Model: "m", MaxRetries: 3, Backoff: time.Millisecond, RatePerSec: 1000})
		require.NoError(t, err)
		_, err = h.Embed(context.Background(), []string{"x"}, 3)
		require.Error(t, err, name)
		hs.Close()
	}
}
