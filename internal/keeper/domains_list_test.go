package keeper_test

import (
	"context"
	"net/http"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/jobkind"
)

// TestListDomainsDeleting: GET /v1/domains lists the Domains with their
// state and leaves out one being deleted; ?deleting=true lists it too,
// with its deletion's progress and job (the job's own error text stays in
// the server log). Bad values are 400; a Domain admin gets 403.
func TestListDomainsDeleting(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	ctx := context.Background()
	e.createDomain("alpha")
	e.createDomain("held")
	admin := e.token("alpha", "a", "admin")
	// Marked deleting, its job waiting for a retry an hour out: it stays
	// deleting for the whole test.
	d, err := e.Store.DeleteDomain(ctx, "held", func(ctx context.Context, tx pgx.Tx, id int32) error {
		_, err := tx.Exec(ctx, `INSERT INTO river_job (kind, args, state, attempt, max_attempts, scheduled_at, errors)
			VALUES ($1, jsonb_build_object('domain_id', $2::int), 'retryable', 1, 25, now() + interval '1 hour',
			        ARRAY['{"at": "2026-01-01T00:00:00Z", "attempt": 1, "error": "secret internals"}'::jsonb])`, jobkind.DomainDelete, id)
		return err
	})
	require.NoError(t, err)
	_, err = e.Store.Pool.Exec(ctx, `UPDATE domains SET progress = '{"phase": "mat_records", "tables_done": 3, "tables": 17, "rows": 1234}'
		WHERE id = $1`, d.ID)
	require.NoError(t, err)

	alpha := map[string]any{"name": "alpha", "state": "ready"}
	held := map[string]any{"name": "held", "state": "deleting",
		"progress": map[string]any{"phase": "mat_records", "tables_done": float64(3), "tables": float64(17), "rows": float64(1234)},
		"job": map[string]any{"kind": jobkind.DomainDelete, "state": "retryable", "attempt": float64(1),
			"last_error": "attempt 1 failed; the job is retried automatically"}}
	for _, tc := range []struct {
		name   string
		query  string
		token  string
		status int
		want   []map[string]any
	}{
		{"ready ones", "", e.Admin, http.StatusOK, []map[string]any{alpha}},
		{"deleting=false", "?deleting=false", e.Admin, http.StatusOK, []map[string]any{alpha}},
		{"deleting=true", "?deleting=true", e.Admin, http.StatusOK, []map[string]any{alpha, held}},
		{"a bad value", "?deleting=yes", e.Admin, http.StatusBadRequest, nil},
		{"a Domain admin", "?deleting=true", admin, http.StatusForbidden, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r := e.do("GET", "/v1/domains"+tc.query, tc.token, nil)
			require.Equal(t, tc.status, r.Status, r.String())
			if tc.status != http.StatusOK {
				require.NotContains(t, r.String(), "held")
				return
			}
			var got []map[string]any
			for _, d := range r.JSON(t)["domains"].([]any) {
				m := d.(map[string]any)
				require.NotEmpty(t, m["created_at"])
				delete(m, "created_at")
				got = append(got, m)
			}
			require.Equal(t, tc.want, got)
		})
	}
	require.Equal(t, http.StatusNotFound, e.do("GET", "/v1/domains/held", e.Admin, nil).Status, "gone for every other request")
}
