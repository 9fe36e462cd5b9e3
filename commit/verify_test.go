package commit_test

import (
	"encoding/json"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
)

// TestVerify: an untouched chain verifies; each tampering by the owner (the
// only role that can still change history) is caught and the first bad
// Revision named.
func TestVerify(t *testing.T) {
	t.Parallel()
	for name, c := range map[string]struct {
		tamper string // SQL run as the owner; $1 is the Domain, $2 the middle Revision
		reason string
	}{
		"message":            {`UPDATE revisions SET message = 'rewritten' WHERE domain_id = $1 AND id = $2`, "does not match"},
		"time":               {`UPDATE revisions SET at = at - interval '1 day' WHERE domain_id = $1 AND id = $2`, "does not match"},
		"branch":             {`UPDATE revisions SET branch_id = branch_id + 1 WHERE domain_id = $1 AND id = $2`, "does not match"},
		"change provenance":  {`UPDATE revisions SET changes = jsonb_set(changes, '{0,provenance}', '{"source": "forged"}') WHERE domain_id = $1 AND id = $2`, "does not match"},
		"hash":               {`UPDATE revisions SET hash = sha256('x') WHERE domain_id = $1 AND id = $2`, "does not match"},
		"object body":        {`UPDATE objects SET body = jsonb_set(body, '{values,country}', '"XX"') WHERE domain_id = $1 AND hash = (SELECT decode(changes -> 0 ->> 'object', 'hex') FROM revisions WHERE domain_id = $1 AND id = $2)`, "does not hash"},
		"object gone":        {`DELETE FROM objects WHERE domain_id = $1 AND hash = (SELECT decode(changes -> 0 ->> 'object', 'hex') FROM revisions WHERE domain_id = $1 AND id = $2)`, "does not exist"},
		"older hash version": {`UPDATE revisions SET hash_version = 1 WHERE domain_id = $1 AND id = $2`, "does not match"},
	} {
		t.Run(name, func(t *testing.T) {
			t.Parallel()
			b := setup(t, commit.Config{})
			seed(t, b)
			_, err := b.p.Commit(b.ctx, b.domain, "main", &commit.Request{Message: "middle", Author: "agent:x",
				Provenance: json.RawMessage(`{"tool": "web.fetch", "confidence": 1e-1}`),
				Changes: []commit.Change{{Op: "patch", Key: "S-1", Values: json.RawMessage(`{"country": "FR"}`),
					Provenance: json.RawMessage(`{"source": "https://example.com/fr", "confidence": 0.75}`)}}}, "")
			require.NoError(t, err)
			var middle string
			require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT head FROM refs WHERE domain_id = $1 AND name = 'main'`, b.domain).Scan(&middle))
			b.commit(t, patch("S-2", `{"country": "NL", "tier": "silver"}`))

			rep, err := commit.Verify(b.ctx, b.store, b.domain)
			require.NoError(t, err)
			require.Nil(t, rep.Bad, "an untouched chain verifies")
			require.Equal(t, 4, rep.Revisions)
			require.Contains(t, rep.Heads, "main")

			_, err = b.store.Pool.Exec(b.ctx, c.tamper, b.domain, middle)
			require.NoError(t, err)
			rep, err = commit.Verify(b.ctx, b.store, b.domain)
			require.NoError(t, err)
			require.NotNil(t, rep.Bad, "tampering is caught")
			require.Equal(t, middle, rep.Bad.ID, "the first bad Revision is named")
			require.Contains(t, rep.Bad.Reason, c.reason)
		})
	}
}
