package keeper_test

import (
	"fmt"
	"net/http"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestConcurrentCommits: 8 clients × 5 commits to one branch without
// expected_head all land; racing with the same expected_head, exactly one
// lands and the others get 409.
func TestConcurrentCommits(t *testing.T) {
	t.Parallel()
	e := testServer(t)
	admin := e.withSupply("supply")
	bp := branchPath("supply", "main")
	const clients, each = 8, 5

	statuses := make([]int, clients*each)
	var wg sync.WaitGroup
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range each {
				key := fmt.Sprintf("S-%d-%d", c, i)
				r := e.doNoFail("POST", bp+"/commits", admin, commitBody(key, put("Supplier", key, map[string]any{"name": key})))
				statuses[c*each+i] = r.Status
			}
		}()
	}
	wg.Wait()
	for i, s := range statuses {
		require.Equal(t, http.StatusCreated, s, "commit %d", i)
	}
	var page struct {
		Records []struct{ Key string } `json:"records"`
	}
	e.must(http.StatusOK, "GET", bp+"/records?kind=Supplier&limit=100", admin, nil).Decode(t, &page)
	require.Len(t, page.Records, clients*each)
	var log struct {
		Revisions []struct{ ID string } `json:"revisions"`
	}
	e.must(http.StatusOK, "GET", bp+"/revisions?limit=100", admin, nil).Decode(t, &log)
	require.Len(t, log.Revisions, clients*each+1, "every commit and the schema")

	head := e.head("supply", "main", admin)
	before := e.rowCounts()
	results := make([]*response, clients)
	for c := range clients {
		wg.Add(1)
		go func() {
			defer wg.Done()
			body := commitBody("race", put("Supplier", fmt.Sprintf("R-%d", c), map[string]any{"name": "racer"}))
			body["expected_head"] = head
			results[c] = e.doNoFail("POST", bp+"/commits", admin, body)
		}()
	}
	wg.Wait()
	won := 0
	for _, r := range results {
		switch r.Status {
		case http.StatusCreated:
			won++
		case http.StatusConflict:
		default:
			t.Fatalf("racing commit: %d %s", r.Status, r.Body)
		}
	}
	require.Equal(t, 1, won)
	after := e.rowCounts()
	require.Equal(t, before["revisions"]+1, after["revisions"])
	require.Equal(t, before["mat_records"]+1, after["mat_records"])
}
