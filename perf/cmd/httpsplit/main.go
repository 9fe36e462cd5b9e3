// Command httpsplit splits a get by key over HTTP into its parts, each
// timed paired call by call with the primary-key floor (store.Read of a
// bare primary-key SELECT as lorebase_app), on a loaded database of the
// perf harness:
//
//	go run ./perf/cmd/httpsplit --database-url postgres://.../COPY_OF_THE_SEED
//
// The parts: the get through package reads, with and without the branch
// head read for the ETag (store.WithHead) and under a request's deadline;
// a bare net/http server on loopback answering a constant, and the same
// doing the floor inside its handler; Keeper answering 401 (its
// middlewares, no database), GET /v1/whoami, and the get by key. Keeper
// and both servers run in this process, as in the harness's reads over
// HTTP. Each part's ratio is the median over rounds of each round's median
// pair ratio. It creates a reader token over Keeper's API, so run it on a
// copy of a seed database, not on the seed. --only times only the parts
// whose names hold its text; --cpuprofile profiles the timed rounds.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"os"
	"runtime/pprof"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/config"
	"github.com/lorebase/lorebase/internal/keeper"
	"github.com/lorebase/lorebase/perf"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "httpsplit:", err)
		os.Exit(1)
	}
}

// part is one timed call.
type part struct {
	name string
	call func(key string) error
}

func run() error {
	fs := flag.NewFlagSet("httpsplit", flag.ExitOnError)
	dbURL := fs.String("database-url", "", "database of the perf harness's Domain (a copy: a reader token is created in it)")
	domain := fs.String("domain", "supply", "the Domain")
	rounds := fs.Int("rounds", 7, "rounds over every part (the first is a warm-up)")
	pairs := fs.Int("pairs", 200, "pairs (a floor call and a part's call) per part and round")
	only := fs.String("only", "", "time only the parts whose names contain this text")
	cpuProfile := fs.String("cpuprofile", "", "write a CPU profile of the timed rounds (this process: client, servers and Keeper) to this file")
	_ = fs.Parse(os.Args[1:])
	if *dbURL == "" || *rounds < 2 || *pairs < 1 {
		return errors.New("--database-url is required, --rounds at least 2, --pairs at least 1")
	}
	ctx := context.Background()
	s, err := store.Open(ctx, *dbURL, store.Config{})
	if err != nil {
		return err
	}
	defer s.Close()
	var domainID, branchID int32
	if err := s.Pool.QueryRow(ctx, `SELECT d.id, b.id FROM domains d JOIN refs b ON b.domain_id = d.id AND b.name = 'main' WHERE d.name = $1`,
		*domain).Scan(&domainID, &branchID); err != nil {
		return fmt.Errorf("domain %q: %w", *domain, err)
	}
	rows, err := s.Pool.Query(ctx, `SELECT key FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND NOT deleted ORDER BY md5(key) LIMIT $3`,
		domainID, branchID, *pairs)
	if err != nil {
		return err
	}
	keys, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		return fmt.Errorf("domain %q has no Records on main", *domain)
	}
	drain := func(rows pgx.Rows) error {
		for rows.Next() {
		}
		return rows.Err()
	}
	floor := func(key string) error {
		return s.Read(ctx, domainID, `SELECT key FROM mat_records WHERE domain_id = $1 AND branch_id = $2 AND key = $3`,
			[]any{domainID, branchID, key}, drain)
	}

	cfg := config.Default()
	cfg.AdminToken = fmt.Sprintf("httpsplit-%d", time.Now().UnixNano())
	cfg.HTTP.CacheMaxBytes = 0
	r := reads.New(s, reads.ConfigFrom(cfg))
	k := keeper.New(cfg, keeper.Parts{Store: s, Pipeline: commit.New(s, commit.ConfigFrom(cfg)), Reader: r})
	defer k.Close()
	var servers []*http.Server
	defer func() {
		for _, srv := range servers {
			_ = srv.Close()
		}
	}()
	serve := func(h http.Handler) (string, error) {
		ln, err := (&net.ListenConfig{}).Listen(ctx, "tcp", "127.0.0.1:0")
		if err != nil {
			return "", err
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		servers = append(servers, srv)
		go func() { _ = srv.Serve(ln) }()
		return "http://" + ln.Addr().String(), nil
	}
	keeperURL, err := serve(k.Handler())
	if err != nil {
		return err
	}
	constant := func(w http.ResponseWriter) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"key":"x"}`))
	}
	bareURL, err := serve(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { constant(w) }))
	if err != nil {
		return err
	}
	floorURL, err := serve(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if err := floor(r.URL.Query().Get("key")); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		constant(w)
	}))
	if err != nil {
		return err
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 64}, Timeout: time.Minute}
	get := func(u, token string, want int) error {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil) //nolint:gosec // G704: u is one of the loopback servers started above
		if err != nil {
			return err
		}
		if token != "" {
			req.Header.Set("Authorization", "Bearer "+token)
		}
		resp, err := client.Do(req) //nolint:gosec // G704: u is one of the loopback servers started above
		if err != nil {
			return err
		}
		defer resp.Body.Close() //nolint:errcheck // read to the end
		if _, err := io.Copy(io.Discard, resp.Body); err != nil {
			return err
		}
		if resp.StatusCode != want {
			return fmt.Errorf("GET %s: status %d, want %d", u, resp.StatusCode, want)
		}
		return nil
	}
	token, err := readerToken(ctx, client, keeperURL, cfg.AdminToken, *domain)
	if err != nil {
		return err
	}
	records := keeperURL + "/v1/domains/" + url.PathEscape(*domain) + "/branches/main/records/"
	parts := []part{
		{"floor, again", floor},
		{"reads.Get", func(key string) error { _, err := r.Get(ctx, domainID, "main", key, ""); return err }},
		{"reads.Get with the head (store.WithHead)", func(key string) error {
			c, _ := store.WithHead(ctx, "main")
			_, err := r.Get(c, domainID, "main", key, "")
			return err
		}},
		{"reads.Get with the head, request deadline", func(key string) error {
			c, cancel := context.WithTimeout(ctx, cfg.HTTP.RequestTimeout)
			defer cancel()
			c, _ = store.WithHead(c, "main")
			_, err := r.Get(c, domainID, "main", key, "")
			return err
		}},
		{"net/http GET of a constant", func(string) error { return get(bareURL+"/", "", http.StatusOK) }},
		{"net/http GET, the floor in the handler", func(key string) error {
			return get(floorURL+"/?key="+url.QueryEscape(key), "", http.StatusOK)
		}},
		{"Keeper 401 (middlewares, no database)", func(key string) error {
			return get(records+url.PathEscape(key), "", http.StatusUnauthorized)
		}},
		{"Keeper GET /v1/whoami", func(string) error { return get(keeperURL+"/v1/whoami", token, http.StatusOK) }},
		{"Keeper get by key", func(key string) error { return get(records+url.PathEscape(key), token, http.StatusOK) }},
	}
	if *only != "" {
		parts = slices.DeleteFunc(parts, func(p part) bool { return !strings.Contains(p.name, *only) })
		if len(parts) == 0 {
			return fmt.Errorf("no part's name contains %q", *only)
		}
	}
	fmt.Printf("%d Records' keys, %d rounds (the first a warm-up) of %d pairs per part; load average %s\n",
		len(keys), *rounds, *pairs, perf.ReadLoadAverage())
	fmt.Println("| part | ratio to the floor | rounds | p50 ms | floor p50 ms |")
	fmt.Println("| --- | ---: | --- | ---: | ---: |")
	ratios := make([][]float64, len(parts))
	times := make([][]time.Duration, len(parts))
	floors := make([][]time.Duration, len(parts))
	for round := range *rounds {
		if round == 1 && *cpuProfile != "" {
			f, err := os.Create(*cpuProfile)
			if err != nil {
				return fmt.Errorf("cpu profile: %w", err)
			}
			defer f.Close() //nolint:errcheck // closed after the profile stops
			if err := pprof.StartCPUProfile(f); err != nil {
				return fmt.Errorf("cpu profile: %w", err)
			}
			defer pprof.StopCPUProfile()
		}
		for i, p := range parts {
			var rs []float64
			for j := range *pairs {
				key := keys[j%len(keys)]
				first, second := floor, p.call
				if j%2 == 1 {
					first, second = p.call, floor
				}
				t0 := time.Now()
				if err := first(key); err != nil {
					return fmt.Errorf("%s: %w", p.name, err)
				}
				t1 := time.Now()
				if err := second(key); err != nil {
					return fmt.Errorf("%s: %w", p.name, err)
				}
				df, dp := t1.Sub(t0), time.Since(t1)
				if j%2 == 1 {
					df, dp = dp, df
				}
				if round > 0 {
					rs = append(rs, float64(dp)/float64(max(df, time.Nanosecond)))
					times[i], floors[i] = append(times[i], dp), append(floors[i], df)
				}
			}
			if round > 0 {
				ratios[i] = append(ratios[i], median(rs))
			}
		}
	}
	for i, p := range parts {
		var list []string
		for _, x := range ratios[i] {
			list = append(list, fmt.Sprintf("%.2f", x))
		}
		fmt.Printf("| %s | %.2f× | %s | %.3f | %.3f |\n", p.name, median(ratios[i]), strings.Join(list, " "),
			ms(medianDuration(times[i])), ms(medianDuration(floors[i])))
	}
	fmt.Printf("load average at the end: %s\n", perf.ReadLoadAverage())
	return nil
}

// readerToken creates a reader token of the Domain as the bootstrap admin.
func readerToken(ctx context.Context, client *http.Client, base, admin, domain string) (string, error) {
	body, err := json.Marshal(map[string]string{"name": fmt.Sprintf("httpsplit-%d", time.Now().UnixNano()), "domain": domain, "role": "reader"})
	if err != nil {
		return "", err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, base+"/v1/tokens", strings.NewReader(string(body)))
	if err != nil {
		return "", err
	}
	req.Header.Set("Authorization", "Bearer "+admin)
	req.Header.Set("Content-Type", "application/json")
	resp, err := client.Do(req)
	if err != nil {
		return "", fmt.Errorf("create a reader token: %w", err)
	}
	defer resp.Body.Close() //nolint:errcheck // decoded below
	var out struct {
		Token string `json:"token"`
	}
	if resp.StatusCode != http.StatusCreated {
		b, _ := io.ReadAll(io.LimitReader(resp.Body, 2048))
		return "", fmt.Errorf("create a reader token: status %d: %s", resp.StatusCode, b)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		return "", fmt.Errorf("create a reader token: %w", err)
	}
	return out.Token, nil
}

func median(xs []float64) float64 {
	s := slices.Clone(xs)
	slices.Sort(s)
	return s[len(s)/2]
}

func medianDuration(ds []time.Duration) time.Duration {
	s := slices.Clone(ds)
	slices.Sort(s)
	return s[len(s)/2]
}

func ms(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 }
