package web_test

import "crypto/tls"

// tlsInsecure trusts httptest's self-signed certificate.
func tlsInsecure() *tls.Config { return &tls.Config{InsecureSkipVerify: true} } //nolint:gosec // test server only
