package web_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

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
