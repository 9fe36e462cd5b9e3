package web_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"
	"github.com/stretchr/testify/require"
)

// TestReembedProgressPerKind: a schema change that gives two Kinds an
// embedding re-embeds both; the Domain page and its live branches.json
// show one line per Kind, each with its own count.
func TestReembedProgressPerKind(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	doc := strings.Replace(supplySchema, `{"name": "meta", "type": "json"}]}`,
		`{"name": "meta", "type": "json"}], "embedding": {"attributes": ["name"], "dims": 16, "model": "hash"}}`, 1)
	doc = strings.Replace(doc, `{"name": "weight_kg", "type": "number"}]}`,
		`{"name": "weight_kg", "type": "number"}], "embedding": {"attributes": ["name"], "dims": 8, "model": "hash"}}`, 1)
	require.Equal(t, 2, strings.Count(doc, `"embedding"`))
	e.api(http.StatusOK, "PUT", bpath("supply", "main")+"/schema", f.Admin, doc)

	b := e.browser()
	b.signIn(f.Admin)
	type reembed struct {
		Kind     string `json:"kind"`
		State    string `json:"state"`
		Embedded int64  `json:"embedded"`
	}
	var main map[string]reembed
	deadline := time.Now().Add(time.Minute)
	for {
		var list struct {
			Branches []struct {
				Name     string `json:"name"`
				Progress struct {
					Embedding map[string]reembed `json:"embedding"`
				} `json:"progress"`
			} `json:"branches"`
		}
		require.NoError(t, json.Unmarshal([]byte(b.mustGet("/d/supply/branches.json")), &list))
		for _, br := range list.Branches {
			if br.Name == "main" {
				main = br.Progress.Embedding
			}
		}
		if main["Supplier"].State == "done" && main["Part"].State == "done" {
			break
		}
		require.False(t, time.Now().After(deadline), "gave up waiting for both re-embeddings: %v", main)
		time.Sleep(20 * time.Millisecond)
	}
	require.Equal(t, reembed{Kind: "Supplier", State: "done", Embedded: 2}, main["Supplier"])
	require.Equal(t, reembed{Kind: "Part", State: "done", Embedded: 1}, main["Part"])

	page := b.mustGet("/d/supply/")
	require.Contains(t, page, `<span class="reembed" data-state="done">re-embedding Part (hash): done, 1 of about 1</span>`)
	require.Contains(t, page, `<span class="reembed" data-state="done">re-embedding Supplier (hash): done, 2 of about 2</span>`)
	require.NotContains(t, page, `&#34;embedding&#34;`, "the re-embeddings are lines, not JSON")
}

// TestBrowserReembedProgress: while a Kind re-embeds, the Domain page
// refreshes its line, and a Kind that starts meanwhile gets its own line.
func TestBrowserReembedProgress(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	f := e.supply()
	setProgress := func(p string) {
		_, err := e.Store.Pool.Exec(context.Background(), `UPDATE refs SET progress = $1::jsonb
			WHERE name = 'main' AND domain_id = (SELECT id FROM domains WHERE name = 'supply')`, p)
		require.NoError(t, err)
	}
	setProgress(`{"embedding": {"Part": {"kind": "Part", "spec": "a1", "model": "hash", "state": "running", "embedded": 3, "total_estimate": 10, "batches": 1}}}`)
	ctx := newChrome(t, 1280, 800)
	signInBrowser(t, ctx, e.URL, f.Reader, "/d/supply/")
	require.Equal(t, "re-embedding Part (hash): running, 3 of about 10", text(t, ctx, `tr[data-branch="main"] .reembed`))

	setProgress(`{"embedding": {
		"Part": {"kind": "Part", "spec": "a1", "model": "hash", "state": "done", "embedded": 10, "total_estimate": 10, "batches": 2},
		"Supplier": {"kind": "Supplier", "spec": "b2", "model": "hash", "state": "running", "embedded": 1, "total_estimate": 2, "batches": 1}}}`)
	_, err := chromedp.Run(ctx, chromedp.Poll[bool](`document.querySelectorAll('tr[data-branch="main"] .reembed').length === 2`,
		chromedp.WithPollingTimeout(30*time.Second)))
	require.NoError(t, err)
	lines := eval[[]string](t, ctx, `Array.from(document.querySelectorAll('tr[data-branch="main"] .reembed')).map((s) => s.textContent)`)
	require.Equal(t, []string{"re-embedding Part (hash): done, 10 of about 10", "re-embedding Supplier (hash): running, 1 of about 2"}, lines)
}
