package keeper_test

import (
	"context"
	"fmt"
	"io/fs"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/migrations"
)

// TestRevisionNumbersPerDomain: two Domains writing interleaved each see
// their own Revisions numbered 1, 2, 3... in every place a number is shown:
// one Revision, the log, a Record's history and its
// lineage. No number shows the other Domain's writes.
func TestRevisionNumbersPerDomain(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admins := map[string]string{"alpha": e.withSupply("alpha"), "beta": e.withSupply("beta")}
	// withSupply wrote the schema: Revision 1 of each Domain.
	want := map[string]int{"alpha": 1, "beta": 1}
	for i := range 4 {
		for _, d := range []string{"alpha", "beta", "beta"} { // beta writes twice as often
			want[d]++
			body := commitBody(fmt.Sprintf("c%d", i),
				put("Supplier", "S-1", map[string]any{"name": fmt.Sprintf("Acme %d", want[d]), "country": "DE", "vat": "V1"}))
			got := e.must(http.StatusCreated, "POST", branchPath(d, "main")+"/commits", admins[d], body).JSON(t)
			rev := e.must(http.StatusOK, "GET", "/v1/domains/"+d+"/revisions/"+got["revision"].(string), admins[d], nil).JSON(t)
			require.EqualValues(t, want[d], rev["seq"], "commit %d of %s", want[d], d)
		}
	}
	for d, last := range want {
		var log struct {
			Revisions []struct {
				Seq int `json:"seq"`
			} `json:"revisions"`
		}
		e.must(http.StatusOK, "GET", branchPath(d, "main")+"/revisions?limit=100", admins[d], nil).Decode(t, &log)
		require.Len(t, log.Revisions, last, d)
		for i, r := range log.Revisions {
			require.Equal(t, last-i, r.Seq, "%s: the log, newest first, counts down to 1 without gaps", d)
		}
		var hist struct {
			Entries []struct {
				Seq int `json:"seq"`
			} `json:"entries"`
		}
		e.must(http.StatusOK, "GET", branchPath(d, "main")+"/records/S-1/history", admins[d], nil).Decode(t, &hist)
		require.NotEmpty(t, hist.Entries)
		for i, h := range hist.Entries {
			require.Equal(t, last-i, h.Seq, "%s: history", d)
		}
		lin := e.must(http.StatusOK, "GET", branchPath(d, "main")+"/records/S-1/lineage", admins[d], nil).JSON(t)
		require.EqualValues(t, last, lin["values"].(map[string]any)["name"].(map[string]any)["seq"], "%s: lineage", d)
	}
	require.Equal(t, map[string]int{"alpha": 5, "beta": 9}, want)
}

// TestRevisionNumbersMigration: migration 0006 numbers the Revisions that
// exist when it runs per Domain in their order (1, 2, 3... without gaps)
// and starts each Domain's sequence after its last number, so the next
// commit continues the count.
func TestRevisionNumbersMigration(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	ctx := context.Background()
	admins := map[string]string{"alpha": e.withSupply("alpha"), "beta": e.withSupply("beta")}
	for i := range 3 {
		for _, d := range []string{"beta", "alpha", "beta"} {
			e.commit(d, "main", admins[d], commitBody("c", put("Supplier", fmt.Sprintf("S-%d", i), map[string]any{"name": d, "country": "DE", "vat": fmt.Sprintf("V%d", i)})))
		}
	}
	e.createDomain("empty") // no Revision: its sequence starts at 1
	read := func(name string) string {
		b, err := fs.ReadFile(migrations.FS, name)
		require.NoError(t, err)
		return string(b)
	}
	// Back to the numbers before the migration, then the migration again
	// (and the function its down step dropped).
	for _, f := range []string{"0006_gaps.down.sql", "0006_gaps.up.sql", "functions/lb_next_revision_number.sql"} {
		_, err := e.Store.Pool.Exec(ctx, read(f))
		require.NoError(t, err, f)
	}
	rows, err := e.Store.Pool.Query(ctx, `SELECT d.name, array_agg(r.number ORDER BY r.seq)
		FROM revisions r JOIN domains d ON d.id = r.domain_id GROUP BY d.name ORDER BY d.name`)
	require.NoError(t, err)
	got := map[string][]int64{}
	for rows.Next() {
		var name string
		var numbers []int64
		require.NoError(t, rows.Scan(&name, &numbers))
		got[name] = numbers
	}
	require.NoError(t, rows.Err())
	require.Equal(t, map[string][]int64{"alpha": {1, 2, 3, 4}, "beta": {1, 2, 3, 4, 5, 6, 7}}, got)

	admins["empty"] = e.token("empty", "admin", "admin")
	for d, next := range map[string]int{"alpha": 5, "beta": 8, "empty": 1} {
		var rev struct {
			Seq int `json:"seq"`
		}
		var id string
		if d == "empty" {
			id = e.putSchema(d, "main", admins[d], supplySchema)
		} else {
			id = e.commit(d, "main", admins[d], commitBody("after", put("Supplier", "S-new", map[string]any{"name": "n", "country": "DE", "vat": "VN"})))
		}
		e.must(http.StatusOK, "GET", "/v1/domains/"+d+"/revisions/"+id, admins[d], nil).Decode(t, &rev)
		require.Equal(t, next, rev.Seq, d)
	}
}
