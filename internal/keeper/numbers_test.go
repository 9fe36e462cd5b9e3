package keeper_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"
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
