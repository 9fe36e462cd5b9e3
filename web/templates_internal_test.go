package web

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/client"
)

// The Proposal pages render what the Proposals API answers (DESIGN.md
// section 11). These tests execute their templates on documents of that
// shape, hostile strings included; the handler tests over HTTP run against
// the API itself.
func TestProposalTemplates(t *testing.T) {
	t.Parallel()
	pages := parsePages()
	const hostile = `<script>alert(1)</script>`
	var p client.Proposal
	require.NoError(t, json.Unmarshal([]byte(`{"id":"01P","title":"`+strings.ReplaceAll(hostile, `"`, `\"`)+`","source":"agent/scout/7","target":"main",
		"state":"open","author":"scout","summary":{"records":{"added":1,"updated":2,"removed":0},"links":{"added":1,"removed":1}},
		"conflicts":1,"mergeable":false}`), &p))
	var d client.Diff
	require.NoError(t, json.Unmarshal([]byte(`{"source":{"branch":"agent/scout/7","revision":"R2"},"target":{"branch":"main","revision":"R1"},
		"merge_base":"R0","changes":[{"key":"S-1","kind":"Supplier","op":"updated","attributes":[{"name":"name","before":"Acme","after":"<b>Acme</b>"}],
		"links":[{"op":"added","relation":"supplied_by","from":"P-1","to":"S-1"}]}],"next":"S-1"}`), &d))
	var cl conflictList
	require.NoError(t, json.Unmarshal([]byte(`{"conflicts":[{"id":"c1","code":"attribute","kind":"Supplier","key":"S-1","attribute":"name",
		"base":{"value":"Acme"},"target":{"value":"Acme (main)","revision":"R1","author":"admin"},
		"source":{"value":"<i>scout</i>","revision":"R2","author":"scout"},"fingerprint":"fp1"}]}`), &cl))

	// A Proposal whose summary is not computed yet, on branches with no
	// merge base.
	bare, bareDiff := p, d
	bare.Summary, bareDiff.MergeBase = nil, nil

	tests := []struct {
		name     string
		canMerge bool
		mergeErr *apiError
		bare     bool
		want     []string
		notWant  []string
	}{
		{"no summary, no merge base", true, nil, true, []string{"merge base none", "1 conflict,"}, []string{"Records: +"}},
		{"writer of the target", true, nil, false, []string{"merge base <code>R0</code>", "Records: +1 added, 2 updated", "merge-button", `name="fingerprint" value="fp1"`, "&lt;b&gt;Acme&lt;/b&gt;", "&lt;i&gt;scout&lt;/i&gt;",
			"Acme (main)", "supplied_by", "1 conflict,", "1 unresolved", `value="R1"`}, []string{"<script>alert", "<b>Acme</b>"}},
		{"reader", false, nil, false, []string{"Acme (main)"}, []string{"merge-button", "fingerprint"}},
		{"after a 409", true, &apiError{Status: http.StatusConflict, Title: "Unresolved conflicts", Detail: "1 conflict is unresolved."}, false,
			[]string{"Not merged: Unresolved conflicts", "Resolve the conflicts below"}, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, d := p, d
			if tc.bare {
				p, d = bare, bareDiff
			}
			v := &view{Title: p.Title, Who: &client.Whoami{Name: "x", Write: map[string]bool{"main": tc.canMerge}}, Domain: "supply", Branch: "main",
				Branches: []string{"main"}, Path: "proposals/01P",
				Data: &proposalData{P: p, Diff: d, Conflicts: cl.Conflicts, Unresolved: 1, CanMerge: tc.canMerge, CanClose: tc.canMerge, MergeError: tc.mergeErr}}
			var buf bytes.Buffer
			require.NoError(t, pages["proposal"].ExecuteTemplate(&buf, "layout.html", v))
			for _, w := range tc.want {
				require.Contains(t, buf.String(), w)
			}
			for _, w := range tc.notWant {
				require.NotContains(t, buf.String(), w)
			}
		})
	}
	var buf bytes.Buffer
	v := &view{Title: "Proposals", Who: &client.Whoami{}, Domain: "supply", Branch: "main", Branches: []string{"main", "agent/scout/7"},
		Data: proposalsData{State: "open", Proposals: []client.Proposal{p}}}
	require.NoError(t, pages["proposals"].ExecuteTemplate(&buf, "layout.html", v))
	require.Contains(t, buf.String(), "&lt;script&gt;alert(1)&lt;/script&gt;")
	require.Contains(t, buf.String(), "<td>1</td>", "conflict count")
	require.NotContains(t, buf.String(), "<script>alert")
}
