package keeper_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"
)

func TestWhoami(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	e.withSupply("supply")
	scout := e.token("supply", "scout", "writer", "agent/scout/*")
	reader := e.token("supply", "reader", "reader")

	tests := []struct {
		name, token, query string
		status             int
		role, domain       string
		bootstrap          bool
		write              map[string]bool
	}{
		{"bootstrap", e.Admin, "?branch=main", http.StatusOK, "admin", "", true, map[string]bool{"main": true}},
		{"scout", scout, "?branch=main&branch=agent%2Fscout%2F7", http.StatusOK, "writer", "supply", false, map[string]bool{"main": false, "agent/scout/7": true}},
		{"reader", reader, "?branch=main", http.StatusOK, "reader", "supply", false, map[string]bool{"main": false}},
		{"no branches asked", reader, "", http.StatusOK, "reader", "supply", false, map[string]bool{}},
		{"unknown parameter", reader, "?domain=x", http.StatusBadRequest, "", "", false, nil},
		{"too many", reader, "?" + strings.Repeat("branch=b&", 101), http.StatusBadRequest, "", "", false, nil},
		{"no token", "", "", http.StatusUnauthorized, "", "", false, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			r := e.must(tc.status, "GET", "/v1/whoami"+tc.query, tc.token, nil)
			if tc.status != http.StatusOK {
				require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"))
				return
			}
			var got struct {
				Role      string          `json:"role"`
				Domain    string          `json:"domain"`
				Bootstrap bool            `json:"bootstrap"`
				Write     map[string]bool `json:"write"`
			}
			r.Decode(t, &got)
			require.Equal(t, tc.role, got.Role)
			require.Equal(t, tc.domain, got.Domain)
			require.Equal(t, tc.bootstrap, got.Bootstrap)
			require.Equal(t, tc.write, got.Write)
		})
	}
}
