package keeper_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
)

// TestMergeUnderTrace: a merge asked under X-Lorebase-Trace names the
// trace in its Revision's provenance and in every change's, as a commit
// does; lineage leads from a merged value to the merge Revision, the
// Proposal, the merge's trace and the source commit's trace. So for a
// Proposal merged at once, one merged by the merge job and a direct merge.
func TestMergeUnderTrace(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Merge.JobThreshold = 8 })
	admin := e.withSupply("supply")
	e.commit("supply", "main", admin, commitBody("seed", put("Supplier", "S-0", map[string]any{"name": "Zero", "country": "DE", "vat": "V0"})))

	type provenance map[string]any
	var lin struct {
		Values map[string]struct {
			Revision   string     `json:"revision"`
			Provenance provenance `json:"provenance"`
		} `json:"values"`
	}
	for _, c := range []struct {
		name    string
		changes int  // Suppliers the source writes
		job     bool // past merge.job_threshold: 202 and the merge job
		direct  bool // POST .../branches/main/merges, no Proposal
	}{
		{"proposal", 1, false, false},
		{"proposal merged by the job", 12, true, false},
		{"direct merge", 1, false, true},
	} {
		branch := "agent/" + fmt.Sprint(len(c.name))
		key := fmt.Sprintf("S-%d", len(c.name))
		e.createBranchReq("supply", admin, map[string]any{"name": branch, "from": "main"})
		var changes []map[string]any
		for i := range c.changes {
			changes = append(changes, put("Supplier", fmt.Sprintf("%s-%d", key, i), map[string]any{"name": "n", "country": "FR", "vat": fmt.Sprintf("%s-%d", key, i)}))
		}
		sourceTrace := "task-" + fmt.Sprint(len(c.name))
		e.must(http.StatusCreated, "POST", branchPath("supply", branch)+"/commits", admin, commitBody("source", changes...),
			"X-Lorebase-Trace", sourceTrace)
		mergeTrace := "merge-" + fmt.Sprint(len(c.name))
		var proposal string
		switch {
		case c.direct:
			e.must(http.StatusCreated, "POST", branchPath("supply", "main")+"/merges", admin, map[string]any{"from": branch},
				"X-Lorebase-Trace", mergeTrace)
		default:
			var p proposalView
			e.must(http.StatusCreated, "POST", proposalsPath("supply"), admin, map[string]any{"title": c.name, "source": branch, "target": "main"}).Decode(t, &p)
			proposal = p.ID
			status := http.StatusCreated
			if c.job {
				status = http.StatusAccepted
			}
			e.must(status, "POST", proposalsPath("supply")+"/"+p.ID+"/merge", admin, nil, "X-Lorebase-Trace", mergeTrace)
			e.waitFor("the merge of "+c.name, func() bool {
				var now proposalView
				e.must(http.StatusOK, "GET", proposalsPath("supply")+"/"+p.ID, admin, nil).Decode(t, &now)
				return now.State == "merged"
			})
		}
		head := e.head("supply", "main", admin)
		var rv struct {
			Provenance provenance `json:"provenance"`
			Parents    []string   `json:"parents"`
		}
		e.must(http.StatusOK, "GET", "/v1/domains/supply/revisions/"+head, admin, nil).Decode(t, &rv)
		require.Len(t, rv.Parents, 2, "%s: a merge Revision", c.name)
		require.Equal(t, mergeTrace, rv.Provenance["trace"], "%s: the merge Revision names its trace", c.name)
		merged := rv.Provenance["merge"].(map[string]any)
		require.Equal(t, branch, merged["merged_from"], c.name)

		e.must(http.StatusOK, "GET", branchPath("supply", "main")+"/records/"+key+"-0/lineage", admin, nil).Decode(t, &lin)
		v := lin.Values["country"]
		require.Equal(t, head, v.Revision, "%s: the value comes from the merge Revision", c.name)
		require.Equal(t, mergeTrace, v.Provenance["trace"], "%s: lineage names the merge's trace", c.name)
		if proposal != "" {
			require.Equal(t, proposal, v.Provenance["proposal"], "%s: lineage names the Proposal", c.name)
			require.Equal(t, proposal, merged["proposal"], c.name)
		} else {
			require.NotContains(t, v.Provenance, "proposal", c.name)
		}
		require.Equal(t, map[string]any{"trace": sourceTrace}, v.Provenance["source_provenance"],
			"%s: and the source commit's trace", c.name)

		// The merge request is a step of its trace.
		steps := e.traceSteps("supply", admin, mergeTrace, 1)
		require.Equal(t, "POST", steps[0].Method, c.name)
		if !c.job {
			require.Equal(t, head, steps[0].Revision, "%s: the step names the Revision it wrote", c.name)
		}
	}
	// A merge without a trace names none.
	e.createBranchReq("supply", admin, map[string]any{"name": "agent/plain", "from": "main"})
	e.commit("supply", "agent/plain", admin, commitBody("plain", put("Supplier", "S-plain", map[string]any{"name": "p", "country": "FR", "vat": "VP"})))
	e.must(http.StatusCreated, "POST", branchPath("supply", "main")+"/merges", admin, map[string]any{"from": "agent/plain"})
	var rv struct {
		Provenance provenance `json:"provenance"`
	}
	e.must(http.StatusOK, "GET", "/v1/domains/supply/revisions/"+e.head("supply", "main", admin), admin, nil).Decode(t, &rv)
	require.NotContains(t, rv.Provenance, "trace")
	// A bad trace id on a merge is 400 naming the header, nothing merged.
	before := e.head("supply", "main", admin)
	e.must(http.StatusBadRequest, "POST", branchPath("supply", "main")+"/merges", admin, map[string]any{"from": "agent/plain"},
		"X-Lorebase-Trace", "")
	require.Equal(t, before, e.head("supply", "main", admin))
}
