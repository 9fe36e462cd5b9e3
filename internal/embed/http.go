package embed

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"time"

	"golang.org/x/time/rate"
)

// HTTPConfig configures the OpenAI-compatible embedder.
type HTTPConfig struct {
	URL        string        // the embeddings endpoint, e.g. https://host/v1/embeddings
	Model      string        // the model name sent, and the name Kinds declare
	APIKey     string        // sent as a bearer token when not empty
	BatchSize  int           // texts per request (default 64)
	RatePerSec float64       // requests per second (default 5)
	MaxRetries int           // retries of a failed request (default 4)
	Backoff    time.Duration // first retry delay, doubled each retry (default 250ms)
	Timeout    time.Duration // per request (default 30s)
	Client     *http.Client  // default: one with Timeout
}

// HTTP calls an OpenAI-compatible embeddings endpoint: POST
// {"model","input":[...],"dimensions"} answered by
// {"data":[{"index","embedding"}]}. Texts go in batches of BatchSize,
// requests are limited to RatePerSec, and a request answered 429, 5xx or
// not at all is retried after a doubling backoff (or the Retry-After the
// server sent).
type HTTP struct {
	cfg     HTTPConfig
	limiter *rate.Limiter
	client  *http.Client
}

// NewHTTP returns the embedder, or an error naming what is missing.
func NewHTTP(cfg HTTPConfig) (*HTTP, error) {
	if cfg.URL == "" || cfg.Model == "" {
		return nil, errors.New("embed: the HTTP embedder needs embeddings.url and embeddings.model")
	}
	if cfg.BatchSize <= 0 {
		cfg.BatchSize = 64
	}
	if cfg.RatePerSec <= 0 {
		cfg.RatePerSec = 5
	}
	if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	} else if cfg.MaxRetries == 0 {
		cfg.MaxRetries = 4
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = 250 * time.Millisecond
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = 30 * time.Second
	}
	c := cfg.Client
	if c == nil {
		c = &http.Client{Timeout: cfg.Timeout}
	}
	return &HTTP{cfg: cfg, limiter: rate.NewLimiter(rate.Limit(cfg.RatePerSec), 1), client: c}, nil
}

// Model is the model name Kinds declare to use this embedder.
func (h *HTTP) Model() string { return h.cfg.Model }

// Embed implements Embedder.
func (h *HTTP) Embed(ctx context.Context, texts []string, dims int) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for start := 0; start < len(texts); start += h.cfg.BatchSize {
		end := min(start+h.cfg.BatchSize, len(texts))
		// Empty texts have no embedding; send the others.
		var idx []int
		var batch []string
		for i := start; i < end; i++ {
			if texts[i] != "" {
				idx = append(idx, i)
				batch = append(batch, texts[i])
			}
		}
		if len(batch) == 0 {
			continue
		}
		vecs, err := h.call(ctx, batch, dims)
		if err != nil {
			return nil, err
		}
		for j, v := range vecs {
			if Unit(v) {
				out[idx[j]] = v
			}
		}
	}
	return out, nil
}

type httpRequest struct {
	Model      string   `json:"model"`
	Input      []string `json:"input"`
	Dimensions int      `json:"dimensions,omitempty"`
}

type httpResponse struct {
	Data []struct {
		Index     int       `json:"index"`
		Embedding []float32 `json:"embedding"`
	} `json:"data"`
}

// permanent is an answer that retrying will not change.
type permanent struct{ error }

// call sends one batch, retrying what may pass on a later try.
func (h *HTTP) call(ctx context.Context, batch []string, dims int) ([][]float32, error) {
	body, err := json.Marshal(httpRequest{Model: h.cfg.Model, Input: batch, Dimensions: dims})
	if err != nil {
		return nil, fmt.Errorf("embed: encode request: %w", err)
	}
	delay := h.cfg.Backoff
	for attempt := 0; ; attempt++ {
		if err := h.limiter.Wait(ctx); err != nil {
			return nil, fmt.Errorf("embed: wait for rate limit: %w", err)
		}
		vecs, retryAfter, err := h.once(ctx, body, len(batch), dims)
		if err == nil {
			return vecs, nil
		}
		var p permanent
		if errors.As(err, &p) || attempt >= h.cfg.MaxRetries || ctx.Err() != nil {
			return nil, fmt.Errorf("embed: %s (after %d attempts): %w", h.cfg.URL, attempt+1, err)
		}
		wait := delay
		if retryAfter > 0 {
			wait = retryAfter
		}
		delay *= 2
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("embed: %w", ctx.Err())
		case <-t.C:
		}
	}
}

// once sends one request: the vectors, or an error and the delay the
// server asked for.
func (h *HTTP) once(ctx context.Context, body []byte, n, dims int) ([][]float32, time.Duration, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, h.cfg.URL, bytes.NewReader(body))
	if err != nil {
		return nil, 0, permanent{fmt.Errorf("build request: %w", err)}
	}
	req.Header.Set("Content-Type", "application/json")
	if h.cfg.APIKey != "" {
		req.Header.Set("Authorization", "Bearer "+h.cfg.APIKey)
	}
	resp, err := h.client.Do(req)
	if err != nil {
		return nil, 0, fmt.Errorf("send request: %w", err)
	}
	defer func() { _ = resp.Body.Close() }()
	data, err := io.ReadAll(io.LimitReader(resp.Body, 64<<20))
	if err != nil {
		return nil, 0, fmt.Errorf("read answer: %w", err)
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		var after time.Duration
		if s, err := strconv.Atoi(resp.Header.Get("Retry-After")); err == nil && s > 0 {
			after = time.Duration(min(s, 60)) * time.Second
		}
		return nil, after, fmt.Errorf("answered %d", resp.StatusCode)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, 0, permanent{fmt.Errorf("answered %d: %.200s", resp.StatusCode, data)}
	}
	var r httpResponse
	if err := json.Unmarshal(data, &r); err != nil {
		return nil, 0, permanent{fmt.Errorf("decode answer: %w", err)}
	}
	if len(r.Data) != n {
		return nil, 0, permanent{fmt.Errorf("answered %d embeddings for %d texts", len(r.Data), n)}
	}
	out := make([][]float32, n)
	for _, d := range r.Data {
		if d.Index < 0 || d.Index >= n || out[d.Index] != nil {
			return nil, 0, permanent{fmt.Errorf("answered an embedding with index %d for %d texts", d.Index, n)}
		}
		if len(d.Embedding) != dims {
			return nil, 0, permanent{fmt.Errorf("answered %d dimensions; the kind embeds %d", len(d.Embedding), dims)}
		}
		out[d.Index] = d.Embedding
	}
	return out, 0, nil
}
