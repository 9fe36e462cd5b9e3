package perf

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/reads"
)

// HTTPKeeper is a Keeper serving the workload's store on a loopback port,
// with a reader token of the workload's Domain.
type HTTPKeeper struct {
	URL    string
	token  string
	client *http.Client
	srv    *http.Server
	keeper *keeper.Server
	done   chan error
}

// StartKeeper starts a Keeper over the workload's store on 127.0.0.1 (an
// ephemeral port) with the default configuration, except that the
// response cache is off (every call reaches PostgreSQL) and the bootstrap
// admin token is random; it creates a reader token of the Domain over
// HTTP. Close stops it.
func (w *Workload) StartKeeper(ctx context.Context) (*HTTPKeeper, error) {
	cfg := config.Default()
	secret := make([]byte, 24)
	if _, err := rand.Read(secret); err != nil {
		return nil, fmt.Errorf("keeper: admin token: %w", err)
	}
	cfg.AdminToken = hex.EncodeToString(secret)
	cfg.HTTP.CacheMaxBytes = 0
	k := keeper.New(cfg, keeper.Parts{Store: w.Store, Pipeline: commit.New(w.Store, commit.ConfigFrom(cfg)),
		Reader: reads.New(w.Store, reads.ConfigFrom(cfg))})
	ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
	if err != nil {
		k.Close()
		return nil, fmt.Errorf("keeper: listen: %w", err)
	}
	hk := &HTTPKeeper{URL: "http://" + ln.Addr().String(), keeper: k, done: make(chan error, 1),
		srv:    &http.Server{Handler: k.Handler(), ReadHeaderTimeout: 10 * time.Second},
		client: &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}}
	go func() { hk.done <- hk.srv.Serve(ln) }()
	var tok struct {
		Token string `json:"token"`
	}
	body := map[string]any{"name": "perf-http-" + hex.EncodeToString(secret[:4]), "domain": w.DomainName, "role": "reader"}
	if err := hk.do(ctx, http.MethodPost, "/v1/tokens", cfg.AdminToken, body, http.StatusCreated, &tok); err != nil {
		return nil, errors.Join(fmt.Errorf("keeper: create token: %w", err), hk.Close())
	}
	hk.token = tok.Token
	return hk, nil
}

// Close stops the server and the Keeper.
func (hk *HTTPKeeper) Close() error {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := hk.srv.Shutdown(ctx)
	if serr := <-hk.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) {
		err = errors.Join(err, serr)
	}
	hk.keeper.Close()
	hk.client.CloseIdleConnections()
	return err
}

// do sends one request and decodes the answer into out (nil: drained).
func (hk *HTTPKeeper) do(ctx context.Context, method, path, token string, body any, want int, out any) error {
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequestWithContext(ctx, method, hk.URL+path, rd)
	if err != nil {
		return err
	}
	req.Header.Set("Authorization", "Bearer "+token)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	resp, err := hk.client.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close() //nolint:errcheck // read to the end below
	if resp.StatusCode != want {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return fmt.Errorf("%s %s: status %d, want %d: %s", method, path, resp.StatusCode, want, b)
	}
	if out == nil {
		_, err = io.Copy(io.Discard, resp.Body)
		return err
	}
	return json.NewDecoder(resp.Body).Decode(out)
}

// HTTPReads are the reads of design section 6 through the Keeper over
// loopback HTTP, each a GET with the reader token whose JSON body is
// decoded as a client would, on the inputs the reads of Reads draw (the
// same streams, in the same order), then the search of the common word
// `steel` (the word the budgets name). Each is named "HTTP: " and its
// read's name, with the read's budget.
func (w *Workload) HTTPReads(hk *HTTPKeeper) []Op {
	base := "/v1/domains/" + url.PathEscape(w.DomainName) + "/branches/" + url.PathEscape(Branch)
	op := func(name string, target time.Duration, path func() string) Op {
		answer := func(ctx context.Context) (any, error) {
			var out any
			err := hk.do(ctx, http.MethodGet, base+path(), hk.token, nil, http.StatusOK, &out)
			return out, err
		}
		return Op{Name: "HTTP: " + name, Target: target, Answer: answer, RLS: func(ctx context.Context) error {
			_, err := answer(ctx)
			return err
		}}
	}
	draws := w.readDraws(Branch)
	ops := make([]Op, 0, len(draws)+1)
	for _, d := range draws {
		ops = append(ops, op(d.name, d.target, func() string { return d.draw().path() }))
	}
	return append(ops, op("search q=steel", 50*time.Millisecond, func() string { return "/search?q=steel" }))
}

// writeHTTP writes the section of the reads over HTTP.
func (r *Report) writeHTTP(p func(string, ...any)) {
	if len(r.HTTP) == 0 && r.HTTPSkipped == "" {
		return
	}
	p("")
	p("## Reads over HTTP (milliseconds)")
	p("")
	if len(r.HTTP) == 0 {
		p("Not measured: %s", r.HTTPSkipped)
		return
	}
	p("A Keeper (default configuration, response cache off so every call reaches PostgreSQL) on a loopback port, one client with keep-alive connections and a reader token; each call is a GET whose JSON body is decoded into generic JSON values, on the keys and queries the reads above draw (in a cold and warm run, those of the rls passes), in the same order. In process: the same read's rls p50 through package reads above (its warm pass in a cold and warm run); HTTP adds: the difference of the two p50s. Ratio to floor: p50 over the floor's rls p50 (the bare primary-key SELECT through store.Read).")
	p("")
	p("| Operation | Target p95 | p50 | p95 | p99 | in process p50 | HTTP adds at p50 | ratio to floor |")
	p("| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |")
	for _, x := range r.HTTP {
		inProcess, adds := "—", "—"
		for _, rd := range r.Reads {
			if "HTTP: "+rd.Name == x.Name && rd.RLS != nil {
				inProcess = stat(rd.RLS, 50)
				if x.RLS != nil {
					adds = ms(x.RLS.P50 - rd.RLS.P50)
				}
			}
		}
		p("| %s | %s | %s | %s | %s | %s | %s | %s |", x.Name, target(x.Target), stat(x.RLS, 50), stat(x.RLS, 95), stat(x.RLS, 99),
			inProcess, adds, ratio(x.FloorRatio))
	}
	if g := r.HTTPGate; g != nil {
		o := g.Options
		p("")
		p("Paired with the floor: after %d untimed pairs per read, %d rounds over the reads, each read %d pairs per round on the same keys and queries (%s in all); a pair is one floor call (rls, the bare primary-key SELECT through store.Read) and one HTTP call, the floor first in even pairs and the HTTP call first in odd ones. A pair's ratio is the HTTP call's time over the floor's; a round's ratio is the median of its pairs; the read's ratio is the median of its rounds.",
			o.Warmup, o.Rounds, o.Pairs, g.Took.Round(time.Second))
		p("")
		p("| Read | ratio | rounds | spread | read p50 | read p95 | read p99 | floor p50 | pairs |")
		p("| --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: |")
		for _, x := range g.Reads {
			if x.Error != "" {
				p("| %s | — | failed: %s | — | — | — | — | — | — |", x.Name, x.Error)
				continue
			}
			p("| %s | %.2f× | %s | %.2f | %s | %s | %s | %s | %s |", x.Name, x.Ratio, roundList(x.Rounds), x.Spread,
				stat(x.Read, 50), stat(x.Read, 95), stat(x.Read, 99), stat(x.Floor, 50), count(x.Read))
		}
	}
}
