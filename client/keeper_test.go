package client_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"sync"
	"testing"

	"github.com/lorebase/lorebase/client"
	"github.com/lorebase/lorebase/internal/apispec/specvalidate"
	"github.com/lorebase/lorebase/internal/keepertest"
	"github.com/lorebase/lorebase/internal/pgcluster"
	"github.com/lorebase/lorebase/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.MainCleanup(m, stopShared) }

// adminToken is the bootstrap admin token of the shared Keeper.
const adminToken = "client-test-bootstrap-admin-token"

// shared is the Keeper every test and example of this package talks to
// (examples have no *testing.T to start one of their own). Each test makes
// Domains of its own.
var shared struct {
	once sync.Once
	url  string
	err  error
	stop []func()
}

// stopShared stops the shared Keeper and its jobs.
func stopShared() {
	for i := len(shared.stop) - 1; i >= 0; i-- {
		shared.stop[i]()
	}
}

// keeperURL starts the shared Keeper on first use. Every response it sends
// is checked against the OpenAPI document; one that does not match is
// replaced by a 500 naming the mismatch, so the call fails.
func keeperURL() (string, error) {
	shared.once.Do(func() {
		ctx := context.Background()
		// The database lives as long as the test process; the throwaway
		// cluster holding it stops in pgtest.Main.
		dbURL, _, err := pgtest.Database(ctx)
		if err != nil {
			shared.err = err
			return
		}
		appURL, err := pgcluster.WithUser(dbURL, pgtest.RequestRole, pgtest.RequestPassword)
		if err != nil {
			shared.err = err
			return
		}
		v, err := specvalidate.New()
		if err != nil {
			shared.err = err
			return
		}
		// The jobs run, so branch deletions and large merges complete.
		k, err := keepertest.Start(ctx, dbURL, appURL, keepertest.Options{AdminToken: adminToken,
			Log:     slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelError})),
			Handler: func(h http.Handler) http.Handler { return strictSpec(v, h) }})
		if err != nil {
			shared.err = err
			return
		}
		shared.stop = append(shared.stop, k.Close)
		shared.url = k.URL
	})
	return shared.url, shared.err
}

// strictSpec serves h and answers 500 instead of any response that does
// not match the OpenAPI document.
func strictSpec(v *specvalidate.Validator, h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, r)
		if err := v.Check(r.Context(), r, rec.Code, rec.Header(), rec.Body.Bytes()); err != nil {
			w.Header().Set("Content-Type", "application/problem+json")
			w.WriteHeader(http.StatusInternalServerError)
			_ = json.NewEncoder(w).Encode(map[string]any{"type": "urn:test:openapi-drift", "title": "OpenAPI drift",
				"status": 500, "detail": err.Error(), "errors": []any{}})
			return
		}
		for k, vs := range rec.Header() {
			w.Header()[k] = vs
		}
		w.WriteHeader(rec.Code)
		_, _ = w.Write(rec.Body.Bytes())
	})
}

// supplySchema is the schema document of DESIGN.md section 5.
const supplySchema = `{"kinds": [
   {"name": "Supplier", "title": "name", "attributes": [
      {"name": "name", "type": "text", "required": true, "search": true},
      {"name": "vat", "type": "text", "unique": true},
      {"name": "country", "type": "text", "indexed": true},
      {"name": "tier", "type": "enum", "values": ["gold", "silver"]}]},
   {"name": "Part", "title": "name", "attributes": [
      {"name": "name", "type": "text", "required": true, "search": true},
      {"name": "maker", "type": "ref", "kind": "Supplier", "indexed": true},
      {"name": "weight_kg", "type": "number"}]}],
 "relations": [
   {"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many",
    "inverse": "supplies"}]}`

// fixture is a fresh Domain with the supply schema and an admin token.
type fixture struct {
	url    string
	domain string
	admin  string // the Domain's admin token
	boot   *client.Client
}

// newDomain makes a Domain named prefix-<random> with the supply schema.
func newDomain(prefix string) (*fixture, error) {
	u, err := keeperURL()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	var b [4]byte
	_, _ = rand.Read(b[:])
	f := &fixture{url: u, domain: prefix + "-" + hex.EncodeToString(b[:]), boot: client.New(u, adminToken)}
	if _, err := f.boot.CreateDomain(ctx, f.domain); err != nil {
		return nil, err
	}
	tok, err := f.boot.CreateToken(ctx, client.TokenRequest{Name: "admin", Domain: f.domain, Role: "admin"})
	if err != nil {
		return nil, err
	}
	f.admin = tok.Secret
	if _, err := client.New(u, f.admin).Domain(f.domain).Branch("main").PutSchema(ctx, json.RawMessage(supplySchema), "Supply schema", ""); err != nil {
		return nil, err
	}
	return f, nil
}

// mustDomain is newDomain for tests.
func mustDomain(t *testing.T, prefix string) *fixture {
	t.Helper()
	f, err := newDomain(prefix)
	if err != nil {
		t.Fatalf("fixture: %v", err)
	}
	return f
}

// token mints a token of the fixture's Domain.
func (f *fixture) token(t testing.TB, name, role string, branches ...string) string {
	t.Helper()
	tok, err := f.boot.CreateToken(context.Background(), client.TokenRequest{Name: name, Domain: f.domain, Role: role, Branches: branches})
	if err != nil {
		t.Fatalf("token: %v", err)
	}
	return tok.Secret
}
