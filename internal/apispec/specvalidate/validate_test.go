package specvalidate_test

import (
	"net/http"
	"net/http/httptest"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/apispec/specvalidate"
)

func TestCheck(t *testing.T) {
	t.Parallel()
	v, err := specvalidate.New()
	require.NoError(t, err)
	const problem = `{"type":"urn:lorebase:problem:not-found","title":"Not found","status":404,"errors":[]}`
	const record = `{"key":"S-1","kind":"Supplier","title":"Acme","values":{"name":"Acme"},"revision":"01J"}`
	for _, tc := range []struct {
		name, method, path string
		status             int
		contentType, body  string
		ok                 bool
	}{
		{"documented record", "GET", "/v1/domains/d/branches/main/records/S-1", 200, "application/json", record, true},
		{"escaped branch", "GET", "/v1/domains/d/branches/agent%2Fscout/records/a%2Fb", 200, "application/json", record, true},
		{"missing field", "GET", "/v1/domains/d/branches/main/records/S-1", 200, "application/json",
			`{"key":"S-1","kind":"Supplier","values":{},"revision":"01J"}`, false},
		{"extra field", "GET", "/v1/domains/d/branches/main/records/S-1", 200, "application/json",
			`{"key":"S-1","kind":"Supplier","title":"","values":{},"revision":"01J","secret":1}`, false},
		{"wrong type", "GET", "/v1/domains/d/branches/main/records/S-1", 200, "application/json",
			`{"key":"S-1","kind":"Supplier","title":3,"values":{},"revision":"01J"}`, false},
		{"undocumented status", "GET", "/v1/domains/d/branches/main/records/S-1", 418, "application/problem+json", problem, false},
		{"problem", "GET", "/v1/domains/d/branches/main/records/S-1", 404, "application/problem+json", problem, true},
		{"problem as json", "GET", "/v1/domains/d/branches/main/records/S-1", 404, "application/json", problem, false},
		{"bad problem", "GET", "/v1/domains/d/branches/main/records/S-1", 404, "application/problem+json", `{"title":"x"}`, false},
		{"unknown route answered 404", "GET", "/v1/nothing", 404, "application/problem+json", problem, true},
		{"unknown route answered 200", "GET", "/v1/nothing", 200, "application/json", `{}`, false},
		{"outside the API", "GET", "/d/supply", 200, "text/html", `<html>`, true},
		{"whoami", "GET", "/v1/whoami?branch=main", 200, "application/json",
			`{"name":"a","domain":"d","role":"writer","branches":["*"],"bootstrap":false,"write":{"main":true}}`, true},
		{"undocumented method answered 200", "PATCH", "/v1/domains/d", 200, "application/json", `{}`, false},
		{"undocumented method answered 405", "PATCH", "/v1/domains/d", 405, "application/problem+json",
			`{"type":"x","title":"Method not allowed","status":405,"errors":[]}`, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			req := httptest.NewRequest(tc.method, tc.path, nil)
			h := http.Header{}
			h.Set("Content-Type", tc.contentType)
			err := v.Check(t.Context(), req, tc.status, h, []byte(tc.body))
			if tc.ok {
				require.NoError(t, err)
			} else {
				require.Error(t, err)
			}
		})
	}
}

func TestWrapReportsDrift(t *testing.T) {
	t.Parallel()
	v, err := specvalidate.New()
	require.NoError(t, err)
	var reported []error
	h := v.Wrap(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(`{"status":"maybe"}`))
	}), func(err error) { reported = append(reported, err) })
	rec := httptest.NewRecorder()
	h.ServeHTTP(rec, httptest.NewRequest("GET", "/healthz", nil))
	require.Equal(t, `{"status":"maybe"}`, rec.Body.String(), "the response passes through")
	require.Len(t, reported, 1)
}
