package keeper_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/config"
)

func proposalsPath(domain string) string { return "/v1/domains/" + esc(domain) + "/proposals" }

// proposalView is a Proposal as the routes answer it.
type proposalView struct {
	ID         string         `json:"id"`
	Title      string         `json:"title"`
	Source     string         `json:"source"`
	Target     string         `json:"target"`
	State      string         `json:"state"`
	Author     string         `json:"author"`
	Summary    map[string]any `json:"summary"`
	Conflicts  int            `json:"conflicts"`
	Unresolved int            `json:"unresolved"`
	Mergeable  bool           `json:"mergeable"`
	ComputedAt struct {
		Source *string `json:"source"`
		Target *string `json:"target"`
	} `json:"computed_at"`
	MergedRevision *string `json:"merged_revision"`
}

type conflictView struct {
	ID          string `json:"id"`
	Code        string `json:"code"`
	Kind        string `json:"kind"`
	Key         string `json:"key"`
	Attribute   string `json:"attribute"`
	Fingerprint string `json:"fingerprint"`
	Base        struct {
		Value any `json:"value"`
	} `json:"base"`
	Target struct {
		Value    any    `json:"value"`
		Revision string `json:"revision"`
		Author   string `json:"author"`
	} `json:"target"`
	Source struct {
		Value    any    `json:"value"`
		Revision string `json:"revision"`
		Author   string `json:"author"`
	} `json:"source"`
	Resolution *struct {
		Choice string `json:"choice"`
	} `json:"resolution"`
}

func (e *env) conflicts(domain, id, token string) []conflictView {
	e.t.Helper()
	var out struct {
		Conflicts []conflictView `json:"conflicts"`
	}
	e.must(http.StatusOK, "GET", proposalsPath(domain)+"/"+id+"/conflicts", token, nil).Decode(e.t, &out)
	return out.Conflicts
}

func TestProposalLifecycleOverHTTP(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	scout := e.token("supply", "scout", "writer", "agent/scout/*")
	e.commit("supply", "main", admin, commitBody("seed",
		put("Supplier", "S-1", map[string]any{"name": "Acme", "country": "DE"}),
		put("Part", "P-1", map[string]any{"name": "Bolt"})))
	e.createBranchReq("supply", scout, map[string]any{"name": "agent/scout/1", "from": "main"})
	e.commit("supply", "agent/scout/1", scout, map[string]any{"message": "research", "author": "agent:scout",
		"provenance": map[string]any{"source": "https://example.com/acme"},
		"changes": []any{
			map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": "FR"}},
			put("Supplier", "S-2", map[string]any{"name": "Beta"}),
			map[string]any{"op": "link", "relation": "supplied_by", "from": "P-1", "to": "S-2"},
		}})

	// The scout may propose into main but not merge.
	var p proposalView
	e.must(http.StatusCreated, "POST", proposalsPath("supply"), scout, map[string]any{
		"title": "Acme moved", "source": "agent/scout/1", "target": "main"}).Decode(t, &p)
	require.Equal(t, "open", p.State)
	require.Equal(t, "scout", p.Author)
	require.True(t, p.Mergeable)
	require.Equal(t, 0, p.Conflicts)
	require.EqualValues(t, 1, p.Summary["records"].(map[string]any)["added"])
	require.EqualValues(t, 1, p.Summary["records"].(map[string]any)["updated"])
	require.EqualValues(t, 1, p.Summary["links"].(map[string]any)["added"])
	require.Equal(t, e.head("supply", "main", admin), *p.ComputedAt.Target)

	// A proposal from a branch the token may not write is refused.
	e.must(http.StatusForbidden, "POST", proposalsPath("supply"), scout, map[string]any{
		"title": "x", "source": "main", "target": "agent/scout/1"})

	list := e.must(http.StatusOK, "GET", proposalsPath("supply")+"?state=open", scout, nil).JSON(t)
	require.Len(t, list["proposals"], 1)

	diff := e.must(http.StatusOK, "GET", proposalsPath("supply")+"/"+p.ID+"/diff?limit=1", scout, nil).JSON(t)
	changes := diff["changes"].([]any)
	require.Len(t, changes, 1)
	require.Equal(t, "P-1", changes[0].(map[string]any)["key"])
	require.Equal(t, "P-1", diff["next"])
	diff = e.must(http.StatusOK, "GET", proposalsPath("supply")+"/"+p.ID+"/diff?after=P-1", scout, nil).JSON(t)
	changes = diff["changes"].([]any)
	require.Len(t, changes, 2)
	s1 := changes[0].(map[string]any)
	require.Equal(t, "S-1", s1["key"])
	require.Equal(t, "updated", s1["op"])
	require.Equal(t, []any{map[string]any{"name": "country", "before": "DE", "after": "FR"}}, s1["attributes"])

	e.must(http.StatusForbidden, "POST", proposalsPath("supply")+"/"+p.ID+"/merge", scout, nil)
	mainHead := e.head("supply", "main", admin)
	e.must(http.StatusConflict, "POST", proposalsPath("supply")+"/"+p.ID+"/merge", admin,
		map[string]any{"expected_target_head": "01ARZ3NDEKTSV4RRFFQ69G5FAV"})
	res := e.must(http.StatusCreated, "POST", proposalsPath("supply")+"/"+p.ID+"/merge", admin,
		map[string]any{"expected_target_head": mainHead}).JSON(t)
	require.Equal(t, []any{mainHead, e.head("supply", "agent/scout/1", admin)}, res["parents"])
	require.Equal(t, true, res["fast_forward"])

	e.must(http.StatusOK, "GET", proposalsPath("supply")+"/"+p.ID, scout, nil).Decode(t, &p)
	require.Equal(t, "merged", p.State)
	require.Equal(t, res["revision"], *p.MergedRevision)
	e.must(http.StatusConflict, "POST", proposalsPath("supply")+"/"+p.ID+"/merge", admin, nil)
	e.must(http.StatusConflict, "POST", proposalsPath("supply")+"/"+p.ID+"/close", admin, nil)

	// The merged value keeps its author and provenance and names the Proposal.
	lin := e.must(http.StatusOK, "GET", branchPath("supply", "main")+"/records/S-1/lineage", admin, nil).JSON(t)
	country := lin["values"].(map[string]any)["country"].(map[string]any)
	prov := country["provenance"].(map[string]any)
	require.Equal(t, p.ID, prov["proposal"])
	require.Equal(t, "agent:scout", prov["source_author"])
	require.Equal(t, "https://example.com/acme", prov["source_provenance"].(map[string]any)["source"])
	require.Equal(t, "FR", country["value"])
}

func TestProposalConflictsOverHTTP(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	e.commit("supply", "main", admin, commitBody("seed", put("Supplier", "S-1", map[string]any{"name": "Acme", "country": "DE"})))
	e.createBranchReq("supply", admin, map[string]any{"name": "agent/a", "from": "main"})
	patchBody := func(country string) map[string]any {
		return commitBody("c", map[string]any{"op": "patch", "key": "S-1", "values": map[string]any{"country": country}})
	}
	e.commit("supply", "agent/a", admin, patchBody("FR"))
	e.commit("supply", "main", admin, patchBody("NL"))

	var p proposalView
	e.must(http.StatusCreated, "POST", proposalsPath("supply"), admin, map[string]any{
		"title": "t", "source": "agent/a", "target": "main"}).Decode(t, &p)
	require.False(t, p.Mergeable)
	require.Equal(t, 1, p.Unresolved)
	cs := e.conflicts("supply", p.ID, admin)
	require.Len(t, cs, 1)
	c := cs[0]
	require.Equal(t, "attribute", c.Code)
	require.Equal(t, "country", c.Attribute)
	require.Equal(t, "DE", c.Base.Value)
	require.Equal(t, "NL", c.Target.Value)
	require.Equal(t, "FR", c.Source.Value)

	res := e.do("POST", proposalsPath("supply")+"/"+p.ID+"/merge", admin, nil)
	require.Equal(t, http.StatusConflict, res.Status, res.String())
	require.Len(t, res.JSON(t)["conflicts"], 1)

	resPath := proposalsPath("supply") + "/" + p.ID + "/conflicts/" + c.ID + "/resolution"
	e.must(http.StatusConflict, "PUT", resPath, admin, map[string]any{"choice": "source", "fingerprint": "0000"})
	e.must(http.StatusUnprocessableEntity, "PUT", resPath, admin, map[string]any{"choice": "value", "fingerprint": c.Fingerprint})
	e.must(http.StatusOK, "PUT", resPath, admin, map[string]any{"choice": "value", "value": "SE", "fingerprint": c.Fingerprint})
	cs = e.conflicts("supply", p.ID, admin)
	require.Equal(t, "value", cs[0].Resolution.Choice)
	e.must(http.StatusOK, "GET", proposalsPath("supply")+"/"+p.ID, admin, nil).Decode(t, &p)
	require.True(t, p.Mergeable)

	// The target changes the value again: the fingerprint changes and the
	// resolution stops counting.
	e.commit("supply", "main", admin, patchBody("BE"))
	e.must(http.StatusOK, "GET", proposalsPath("supply")+"/"+p.ID, admin, nil).Decode(t, &p)
	require.False(t, p.Mergeable)
	cs = e.conflicts("supply", p.ID, admin)
	require.NotEqual(t, c.Fingerprint, cs[0].Fingerprint)
	require.Equal(t, c.ID, cs[0].ID)
	require.Nil(t, cs[0].Resolution)
	e.must(http.StatusConflict, "PUT", resPath, admin, map[string]any{"choice": "source", "fingerprint": c.Fingerprint})

	// Cleared, then resolved anew, then merged.
	e.must(http.StatusNoContent, "DELETE", resPath, admin, nil)
	e.must(http.StatusNotFound, "DELETE", resPath, admin, nil)
	e.must(http.StatusOK, "PUT", resPath, admin, map[string]any{"choice": "source", "fingerprint": cs[0].Fingerprint})
	e.must(http.StatusCreated, "POST", proposalsPath("supply")+"/"+p.ID+"/merge", admin, nil)
	rec := e.must(http.StatusOK, "GET", branchPath("supply", "main")+"/records/S-1", admin, nil).JSON(t)
	require.Equal(t, "FR", rec["values"].(map[string]any)["country"])

	// A direct merge brings the branch up to date with main; a default
	// resolves what conflicts.
	e.commit("supply", "main", admin, patchBody("PL"))
	e.commit("supply", "agent/a", admin, patchBody("CZ"))
	r := e.do("POST", branchPath("supply", "agent/a")+"/merges", admin, map[string]any{"from": "main"})
	require.Equal(t, http.StatusConflict, r.Status, r.String())
	e.must(http.StatusCreated, "POST", branchPath("supply", "agent/a")+"/merges", admin, map[string]any{"from": "main", "default": "source"})
	rec = e.must(http.StatusOK, "GET", branchPath("supply", "agent/a")+"/records/S-1", admin, nil).JSON(t)
	require.Equal(t, "PL", rec["values"].(map[string]any)["country"])
}

func TestProposalGrantsAndIsolation(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	otherAdmin := e.withSupply("other")
	reader := e.token("supply", "reader", "reader")
	e.commit("supply", "main", admin, commitBody("seed", put("Supplier", "S-1", map[string]any{"name": "Acme"})))
	e.createBranchReq("supply", admin, map[string]any{"name": "agent/a", "from": "main"})
	e.commit("supply", "agent/a", admin, commitBody("c", put("Supplier", "S-2", map[string]any{"name": "B"})))
	var p proposalView
	e.must(http.StatusCreated, "POST", proposalsPath("supply"), admin, map[string]any{
		"title": "t", "source": "agent/a", "target": "main"}).Decode(t, &p)
	e.must(http.StatusForbidden, "POST", proposalsPath("supply"), reader, map[string]any{"title": "t", "source": "agent/a", "target": "main"})
	e.must(http.StatusOK, "GET", proposalsPath("supply")+"/"+p.ID, reader, nil)
	e.must(http.StatusForbidden, "POST", proposalsPath("supply")+"/"+p.ID+"/merge", reader, nil)
	e.must(http.StatusForbidden, "POST", branchPath("supply", "main")+"/merges", reader, map[string]any{"from": "agent/a"})

	before := e.rowCounts()
	// Another Domain's token: 404 on every Proposal path, by either Domain name.
	for _, dom := range []string{"supply", "other"} {
		base := proposalsPath(dom) + "/" + p.ID
		for _, c := range []struct{ method, path string }{
			{"GET", base}, {"GET", base + "/diff"}, {"GET", base + "/conflicts"},
			{"PUT", base + "/conflicts/c1/resolution"}, {"DELETE", base + "/conflicts/c1/resolution"},
			{"POST", base + "/merge"}, {"POST", base + "/close"},
		} {
			body := any(nil)
			if c.method == "PUT" {
				body = map[string]any{"choice": "target", "fingerprint": "x"}
			}
			r := e.do(c.method, c.path, otherAdmin, body)
			require.Equal(t, http.StatusNotFound, r.Status, "%s %s: %s", c.method, c.path, r.Body)
		}
	}
	r := e.must(http.StatusOK, "GET", proposalsPath("other"), otherAdmin, nil).JSON(t)
	require.Empty(t, r["proposals"])
	// A Proposal between another Domain's branches is refused as missing.
	e.must(http.StatusNotFound, "POST", proposalsPath("other"), otherAdmin, map[string]any{"title": "t", "source": "agent/a", "target": "main"})
	require.Equal(t, before, e.rowCounts())
}

func TestProposalHostileInput(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	e.createBranchReq("supply", admin, map[string]any{"name": "agent/a", "from": "main"})
	e.commit("supply", "agent/a", admin, commitBody("c", put("Supplier", "S-2", map[string]any{"name": "B"})))
	var p proposalView
	e.must(http.StatusCreated, "POST", proposalsPath("supply"), admin, map[string]any{
		"title": "t", "source": "agent/a", "target": "main"}).Decode(t, &p)
	before := e.rowCounts()
	cases := []struct {
		method, path string
		body         any
		status       int
	}{
		{"POST", proposalsPath("supply"), `{"title": "t", "source": "agent/a"`, 400},
		{"POST", proposalsPath("supply"), map[string]any{"title": "t", "source": "agent/a", "target": "main", "x": 1}, 400},
		{"POST", proposalsPath("supply"), map[string]any{"title": "", "source": "agent/a", "target": "main"}, 422},
		{"POST", proposalsPath("supply"), map[string]any{"title": "t", "source": "main", "target": "main"}, 422},
		{"POST", proposalsPath("supply"), map[string]any{"title": "t", "source": "../x", "target": "main"}, 422},
		{"POST", proposalsPath("supply"), map[string]any{"title": "t", "source": "agent/none", "target": "main"}, 404},
		{"POST", proposalsPath("supply"), map[string]any{"title": "t", "source": "agent/a'; DROP TABLE refs; --", "target": "main"}, 422},
		{"GET", proposalsPath("supply") + "?state=bogus", nil, 400},
		{"GET", proposalsPath("supply") + "?limit=0", nil, 400},
		{"GET", proposalsPath("supply") + "/not-a-ulid", nil, 404},
		{"GET", proposalsPath("supply") + "/01ARZ3NDEKTSV4RRFFQ69G5FAV", nil, 404},
		{"GET", proposalsPath("supply") + "/%27%3B%20DROP", nil, 404},
		{"GET", proposalsPath("supply") + "/" + p.ID + "/diff?limit=100000", nil, 400},
		{"GET", proposalsPath("supply") + "/" + p.ID + "/diff?bogus=1", nil, 400},
		{"PUT", proposalsPath("supply") + "/" + p.ID + "/conflicts/c0/resolution", map[string]any{"choice": "mine", "fingerprint": "x"}, 422},
		{"PUT", proposalsPath("supply") + "/" + p.ID + "/conflicts/c0/resolution", map[string]any{"choice": "target"}, 422},
		{"PUT", proposalsPath("supply") + "/" + p.ID + "/conflicts/c0/resolution", map[string]any{"choice": "target", "fingerprint": "x"}, 404},
		{"PUT", proposalsPath("supply") + "/" + p.ID + "/conflicts/c0/resolution", `[1,2]`, 400},
		{"POST", proposalsPath("supply") + "/" + p.ID + "/merge", map[string]any{"default": "both"}, 400},
		{"POST", proposalsPath("supply") + "/" + p.ID + "/merge", map[string]any{"expected_target_head": 7}, 400},
		{"POST", branchPath("supply", "main") + "/merges", map[string]any{}, 400},
		{"POST", branchPath("supply", "main") + "/merges", map[string]any{"from": "main"}, 422},
		{"POST", branchPath("supply", "main") + "/merges", map[string]any{"from": "nope"}, 404},
		{"POST", branchPath("supply", "main") + "/merges", map[string]any{"from": "agent/a", "resolutions": []any{map[string]any{"choice": "x"}}}, 400},
		{"GET", branchPath("supply", "agent/a") + "/diff", nil, 400},
		{"GET", branchPath("supply", "agent/a") + "/diff?against=nope", nil, 404},
		{"GET", branchPath("supply", "agent/a") + "/diff?against=main&from=x", nil, 400},
		{"GET", branchPath("supply", "agent/a") + "/diff?from=01ARZ3NDEKTSV4RRFFQ69G5FAV", nil, 404},
	}
	for i, c := range cases {
		r := e.do(c.method, c.path, admin, c.body)
		require.Equal(t, c.status, r.Status, "case %d %s %s: %s", i, c.method, c.path, r.Body)
		require.Equal(t, "application/problem+json", r.Header.Get("Content-Type"), "case %d", i)
	}
	require.Equal(t, before, e.rowCounts())
}

// Two Proposals that each set the same unique VAT on different Suppliers:
// merged at once, one wins and the other reports the violation.
func TestConcurrentMergesKeepUniqueOverHTTP(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	e.commit("supply", "main", admin, commitBody("seed", put("Supplier", "S-0", map[string]any{"name": "Zero"})))
	var ids []string
	for i := 1; i <= 2; i++ {
		b := fmt.Sprintf("agent/%d", i)
		e.createBranchReq("supply", admin, map[string]any{"name": b, "from": "main"})
		e.commit("supply", b, admin, commitBody("c", put("Supplier", fmt.Sprintf("S-%d", i), map[string]any{"name": "X", "vat": "DE-1"})))
		var p proposalView
		e.must(http.StatusCreated, "POST", proposalsPath("supply"), admin, map[string]any{"title": b, "source": b, "target": "main"}).Decode(t, &p)
		require.True(t, p.Mergeable)
		ids = append(ids, p.ID)
	}
	statuses := make([]int, 2)
	bodies := make([]*response, 2)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Add(1)
		go func() {
			defer wg.Done()
			r := e.doNoFail("POST", proposalsPath("supply")+"/"+id+"/merge", admin, nil)
			statuses[i], bodies[i] = r.Status, r
		}()
	}
	wg.Wait()
	won, lost := 0, 1
	if statuses[0] != http.StatusCreated {
		won, lost = 1, 0
	}
	require.Equal(t, http.StatusCreated, statuses[won], bodies[won].String())
	require.Equal(t, http.StatusConflict, statuses[lost], bodies[lost].String())
	cs := bodies[lost].JSON(t)["conflicts"].([]any)
	require.Len(t, cs, 1)
	require.Equal(t, "unique", cs[0].(map[string]any)["code"])
	require.Equal(t, "vat", cs[0].(map[string]any)["attribute"])

	// Resolved by a new value, the second merges too.
	c := e.conflicts("supply", ids[lost], admin)[0]
	e.must(http.StatusOK, "PUT", proposalsPath("supply")+"/"+ids[lost]+"/conflicts/"+c.ID+"/resolution", admin,
		map[string]any{"choice": "value", "value": "DE-2", "fingerprint": c.Fingerprint})
	e.must(http.StatusCreated, "POST", proposalsPath("supply")+"/"+ids[lost]+"/merge", admin, nil)
	rec := e.must(http.StatusOK, "GET", branchPath("supply", "main")+fmt.Sprintf("/records/S-%d", lost+1), admin, nil).JSON(t)
	require.Equal(t, "DE-2", rec["values"].(map[string]any)["vat"])
}

// A Proposal merge past merge.job_threshold answers 202 and lands through
// the merge.proposal job.
func TestBigProposalMergeRunsAsJob(t *testing.T) {
	t.Parallel()
	e := testServer(t, func(c *config.Config) { c.Merge.JobThreshold = 5 })
	admin := e.withSupply("supply")
	e.commit("supply", "main", admin, commitBody("seed", put("Supplier", "S-0", map[string]any{"name": "Zero"})))
	e.createBranchReq("supply", admin, map[string]any{"name": "agent/big", "from": "main"})
	var changes []map[string]any
	for i := range 20 {
		changes = append(changes, put("Supplier", fmt.Sprintf("S-%d", i+1), map[string]any{"name": fmt.Sprintf("n%d", i)}))
	}
	e.commit("supply", "agent/big", admin, commitBody("many", changes...))
	var p proposalView
	e.must(http.StatusCreated, "POST", proposalsPath("supply"), admin, map[string]any{"title": "big", "source": "agent/big", "target": "main"}).Decode(t, &p)
	var queued proposalView
	e.must(http.StatusAccepted, "POST", proposalsPath("supply")+"/"+p.ID+"/merge", admin, nil).Decode(t, &queued)
	require.Contains(t, []string{"merging", "merged"}, queued.State)
	e.waitFor("the merge job", func() bool {
		var now proposalView
		e.must(http.StatusOK, "GET", proposalsPath("supply")+"/"+p.ID, admin, nil).Decode(t, &now)
		return now.State == "merged"
	})
	e.must(http.StatusOK, "GET", branchPath("supply", "main")+"/records/S-20", admin, nil)
}
