package client_test

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/client"
)

// faulty is a proxy to the Keeper that breaks chosen answers: the request
// still reaches the Keeper, but the client sees a 503 (or a dropped
// connection) instead of its answer.
type faulty struct {
	proxy *httputil.ReverseProxy
	fail  atomic.Int32 // answers left to break
	drop  bool         // break by closing the connection instead of 503
	seen  atomic.Int32
	match func(*http.Request) bool
}

func newFaulty(t *testing.T, target string, match func(*http.Request) bool) (*faulty, string) {
	t.Helper()
	u, err := url.Parse(target)
	require.NoError(t, err)
	f := &faulty{proxy: httputil.NewSingleHostReverseProxy(u), match: match}
	hs := httptest.NewServer(f)
	t.Cleanup(hs.Close)
	return f, hs.URL
}

func (f *faulty) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !f.match(r) {
		f.proxy.ServeHTTP(w, r)
		return
	}
	f.seen.Add(1)
	if f.fail.Add(-1) < 0 {
		f.proxy.ServeHTTP(w, r)
		return
	}
	rec := httptest.NewRecorder()
	f.proxy.ServeHTTP(rec, r) // the Keeper does the work
	if f.drop {
		panic(http.ErrAbortHandler)
	}
	w.Header().Set("Content-Type", "application/problem+json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = io.WriteString(w, `{"type":"urn:test:unavailable","title":"Service unavailable","status":503,"errors":[]}`)
}

func TestCommitRetriesApplyOnce(t *testing.T) {
	t.Parallel()
	fx := mustDomain(t, "retry")
	for _, drop := range []bool{false, true} {
		t.Run(fmt.Sprintf("drop=%v", drop), func(t *testing.T) {
			f, u := newFaulty(t, fx.url, func(r *http.Request) bool { return strings.HasSuffix(r.URL.Path, "/commits") })
			f.drop = drop
			f.fail.Store(1)
			main := client.New(u, fx.admin, client.WithRetries(3, 10*time.Millisecond)).Domain(fx.domain).Branch("main")
			ctx := t.Context()
			before, err := main.RevisionsPage(ctx, client.Page{Limit: 1000})
			require.NoError(t, err)
			key := fmt.Sprintf("S-drop-%v", drop)
			res, err := main.Commit(ctx, client.CommitRequest{Message: "retried", Changes: []client.Change{
				{Op: "put", Kind: "Supplier", Key: key, Values: map[string]any{"name": "Retry Co"}}}})
			require.NoError(t, err)
			require.Equal(t, int32(2), f.seen.Load(), "sent twice")
			require.True(t, res.Replayed, "the second answer replays the first commit")
			after, err := main.RevisionsPage(ctx, client.Page{Limit: 1000})
			require.NoError(t, err)
			require.Len(t, after.Revisions, len(before.Revisions)+1, "applied once")
		})
	}
}

func TestRetriesStopAtClientErrors(t *testing.T) {
	t.Parallel()
	fx := mustDomain(t, "noretry")
	f, u := newFaulty(t, fx.url, func(r *http.Request) bool { return true })
	c := client.New(u, fx.admin, client.WithRetries(3, time.Millisecond)).Domain(fx.domain)
	_, err := c.Branch("main").Record(t.Context(), "missing", nil)
	var p *client.Problem
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusNotFound, p.Status)
	require.Equal(t, int32(1), f.seen.Load(), "a 404 is not retried")

	// A creation (not idempotent) is not retried either.
	f.fail.Store(1)
	f.seen.Store(0)
	_, err = c.CreateBranch(t.Context(), client.CreateBranch{Name: "once", From: "main"})
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusServiceUnavailable, p.Status)
	require.Equal(t, time.Second, p.RetryAfter)
	require.Equal(t, int32(1), f.seen.Load())

	// Reads are retried past a 503.
	f.fail.Store(2)
	f.seen.Store(0)
	_, err = c.Get(t.Context())
	require.NoError(t, err)
	require.Equal(t, int32(3), f.seen.Load())

	// A canceled context ends the retries.
	f.fail.Store(100)
	ctx, cancel := context.WithTimeout(t.Context(), 50*time.Millisecond)
	defer cancel()
	_, err = client.New(u, fx.admin, client.WithRetries(10, 20*time.Millisecond)).Domain(fx.domain).Get(ctx)
	require.ErrorIs(t, err, context.DeadlineExceeded)
}

func TestProblems(t *testing.T) {
	t.Parallel()
	fx := mustDomain(t, "problems")
	ctx := t.Context()
	var p *client.Problem
	_, err := client.New(fx.url, "").Domain(fx.domain).Get(ctx)
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusUnauthorized, p.Status)
	reader := fx.token(t, "r", "reader")
	_, err = client.New(fx.url, reader).Domain(fx.domain).Branch("main").Commit(ctx, client.CommitRequest{Message: "x",
		Changes: []client.Change{{Op: "delete", Key: "S-1"}}})
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusForbidden, p.Status)
	require.NotEmpty(t, p.Detail)
	// Another Domain's name answers 404 to this Domain's token.
	other := mustDomain(t, "problems-other")
	_, err = client.New(fx.url, fx.admin).Domain(other.domain).Get(ctx)
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusNotFound, p.Status)
	require.Contains(t, p.Error(), "404")
}

func TestEveryRead(t *testing.T) {
	t.Parallel()
	fx := mustDomain(t, "reads")
	ctx := t.Context()
	c := client.New(fx.url, fx.admin)
	d := c.Domain(fx.domain)
	main := d.Branch("main")
	first, err := main.Commit(ctx, client.CommitRequest{Message: "seed", Changes: []client.Change{
		{Op: "put", Kind: "Supplier", Key: "S-1", Values: map[string]any{"name": "Acme", "country": "DE"}},
		{Op: "put", Kind: "Part", Key: "P-1", Values: map[string]any{"name": "Hex bolt", "maker": "S-1"}},
		{Op: "link", Relation: "supplied_by", From: "P-1", To: "S-1"},
	}})
	require.NoError(t, err)
	for i := range 3 {
		_, err := main.Commit(ctx, client.CommitRequest{Message: fmt.Sprint("w", i), Changes: []client.Change{
			{Op: "patch", Key: "S-1", Values: map[string]any{"vat": fmt.Sprint("DE", i)}}}})
		require.NoError(t, err)
	}

	info, err := d.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, fx.domain, info.Name)
	doc, err := c.OpenAPI(ctx)
	require.NoError(t, err)
	require.True(t, json.Valid(doc))
	require.NoError(t, c.Health(ctx))
	ready, err := c.Ready(ctx)
	require.NoError(t, err)
	require.Equal(t, "ready", ready.Status)
	metrics, err := c.Metrics(ctx)
	require.NoError(t, err)
	require.True(t, strings.Contains(string(metrics), `lorebase_response_cache_requests_total{result="hit"}`), "metrics name the cache")
	s, err := main.Schema(ctx)
	require.NoError(t, err)
	require.Contains(t, string(s.Document), "Supplier")
	def, err := s.Definition()
	require.NoError(t, err)
	require.NotNil(t, def.Kind("Supplier"), "the schema's Kinds decode")
	require.Nil(t, def.Kind("Nothing"))
	require.NotEmpty(t, def.Relations)
	who, err := c.Whoami(ctx)
	require.NoError(t, err)
	require.Equal(t, fx.domain, who.Domain)
	require.Equal(t, "admin", who.Role)
	bi, err := main.Get(ctx)
	require.NoError(t, err)
	require.Equal(t, "main", bi.Name)

	rec, err := main.Record(ctx, "S-1", &client.ReadOptions{At: first.Revision})
	require.NoError(t, err)
	require.JSONEq(t, `{"name":"Acme","country":"DE"}`, string(rec.Values))
	vm, err := rec.ValueMap()
	require.NoError(t, err)
	require.JSONEq(t, `"DE"`, string(vm["country"]))
	page, err := main.RecordsPage(ctx, client.RecordQuery{Kind: "Supplier", Attribute: "country", Value: "DE"}, client.Page{Limit: 10})
	require.NoError(t, err)
	require.Len(t, page.Records, 1)
	require.Nil(t, page.Count, "no count unless asked")
	counted, err := main.RecordsPage(ctx, client.RecordQuery{Kind: "Supplier", Count: true}, client.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, counted.Records, 1)
	suppliers := 0
	for _, err := range main.Records(ctx, client.RecordQuery{Kind: "Supplier"}) {
		require.NoError(t, err)
		suppliers++
	}
	require.Equal(t, &client.RecordCount{Records: suppliers, Exact: true}, counted.Count)
	links, err := main.Links(ctx, "P-1", client.LinksQuery{Direction: "out"})
	require.NoError(t, err)
	require.NotEmpty(t, links)
	nb, err := main.Neighborhood(ctx, "P-1", 1, 0)
	require.NoError(t, err)
	require.Len(t, nb.Records, 2)
	sr, err := main.Search(ctx, client.SearchQuery{Q: "hex bolt"})
	require.NoError(t, err)
	require.Equal(t, "P-1", sr.Results[0].Key)
	require.Equal(t, "text", sr.Mode)
	// The mode reaches the Keeper: no Kind here declares an embedding.
	_, err = main.Search(ctx, client.SearchQuery{Q: "hex bolt", Mode: "semantic"})
	require.ErrorContains(t, err, "embedding")
	// The hybrid weights reach the Keeper: one out of range is refused by name.
	over := 101
	_, err = main.Search(ctx, client.SearchQuery{Q: "hex bolt", Mode: "hybrid", SemanticWeight: &over})
	var wp *client.Problem
	require.ErrorAs(t, err, &wp)
	require.Equal(t, http.StatusBadRequest, wp.Status)
	require.ErrorContains(t, err, "semantic_weight")
	cand, err := main.Resolve(ctx, "Acme", "", 0)
	require.NoError(t, err)
	require.Equal(t, "S-1", cand.Candidates[0].Key)
	lin, err := main.Lineage(ctx, "S-1")
	require.NoError(t, err)
	require.Equal(t, 4, lin.Changes)

	// Iterators walk pages: history one entry per page.
	hp, err := main.HistoryPage(ctx, "S-1", client.Page{Limit: 1})
	require.NoError(t, err)
	require.Len(t, hp.Entries, 1)
	require.NotEmpty(t, hp.Next)
	n := 0
	for _, err := range main.History(ctx, "S-1") {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 4, n)
	n = 0
	for rv, err := range main.Revisions(ctx) {
		require.NoError(t, err)
		if n == 0 {
			full, err := d.Revision(ctx, rv.ID)
			require.NoError(t, err)
			require.Equal(t, rv.ID, full.ID)
			walked := 0
			for _, err := range d.RevisionChanges(ctx, rv.ID) {
				require.NoError(t, err)
				walked++
			}
			require.Positive(t, full.ChangesTotal)
			require.Equal(t, full.ChangesTotal, walked, "RevisionChanges walks every change")
			one, err := d.RevisionPage(ctx, rv.ID, client.Page{Limit: 1})
			require.NoError(t, err)
			require.Equal(t, full.ChangesTotal, one.ChangesTotal)
			if full.ChangesTotal > 1 {
				require.Equal(t, "1", one.Next)
			}
		}
		n++
	}
	require.Equal(t, 5, n, "schema and four commits")
	for b, err := range d.Branches(ctx) {
		require.NoError(t, err)
		require.Equal(t, "main", b.Name)
	}
	// An iterator stops at the first error and yields it.
	for _, err := range main.History(ctx, "missing") {
		var p *client.Problem
		require.ErrorAs(t, err, &p)
		require.Equal(t, 404, p.Status)
	}
}

func TestBranchesAndTraces(t *testing.T) {
	t.Parallel()
	fx := mustDomain(t, "traces")
	ctx := t.Context()
	agent := client.New(fx.url, fx.token(t, "scout", "writer", "agent/*")).WithTrace("t-1").Domain(fx.domain)
	_, err := agent.CreateBranch(ctx, client.CreateBranch{Name: "agent/a", From: "main"})
	require.NoError(t, err)
	res, err := agent.Branch("agent/a").Commit(ctx, client.CommitRequest{Message: "x", Changes: []client.Change{
		{Op: "put", Kind: "Supplier", Key: "S-1", Values: map[string]any{"name": "A"}}}})
	require.NoError(t, err)
	var steps []client.TraceStep
	require.Eventually(t, func() bool {
		steps = steps[:0]
		for st, err := range agent.TraceSteps(ctx, "t-1") {
			if err != nil {
				return false
			}
			steps = append(steps, st)
		}
		return len(steps) == 2
	}, 10*time.Second, 20*time.Millisecond)
	require.Equal(t, res.Revision, steps[1].Revision)
	rv, err := agent.Revision(ctx, res.Revision)
	require.NoError(t, err)
	require.JSONEq(t, `{"trace":"t-1"}`, string(rv.Provenance))
	require.NoError(t, agent.Branch("agent/a").Delete(ctx))
	_, err = agent.Branch("agent/a").Get(ctx)
	var p *client.Problem
	require.ErrorAs(t, err, &p)
	require.Equal(t, 404, p.Status)
}

func TestTokens(t *testing.T) {
	t.Parallel()
	fx := mustDomain(t, "tokens")
	ctx := t.Context()
	d := client.New(fx.url, fx.admin).Domain(fx.domain)
	extra, err := fx.boot.CreateToken(ctx, client.TokenRequest{Name: "temp", Domain: fx.domain, Role: "reader", ExpiresIn: "1h"})
	require.NoError(t, err)
	_, _, err = d.TokensPage(ctx, client.Page{})
	require.NoError(t, err)
	names := map[string]bool{}
	for tok, err := range d.Tokens(ctx) {
		require.NoError(t, err)
		names[tok.Name] = true
	}
	require.True(t, names["temp"])
	require.NoError(t, d.RevokeToken(ctx, extra.ID))
	_, err = client.New(fx.url, extra.Secret).Domain(fx.domain).Get(ctx)
	var p *client.Problem
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusUnauthorized, p.Status)
}

func TestProposals(t *testing.T) {
	t.Parallel()
	fx := mustDomain(t, "proposals")
	ctx := t.Context()
	d := client.New(fx.url, fx.admin).Domain(fx.domain)
	main := d.Branch("main")
	_, err := main.Commit(ctx, client.CommitRequest{Message: "seed", Changes: []client.Change{
		{Op: "put", Kind: "Supplier", Key: "S-1", Values: map[string]any{"name": "Acme"}}}})
	require.NoError(t, err)
	_, err = d.CreateBranch(ctx, client.CreateBranch{Name: "agent/a", From: "main"})
	require.NoError(t, err)
	work := d.Branch("agent/a")
	_, err = work.Commit(ctx, client.CommitRequest{Message: "a", Changes: []client.Change{
		{Op: "patch", Key: "S-1", Values: map[string]any{"country": "DE"}}}})
	require.NoError(t, err)
	_, err = main.Commit(ctx, client.CommitRequest{Message: "m", Changes: []client.Change{
		{Op: "patch", Key: "S-1", Values: map[string]any{"country": "FR"}}}})
	require.NoError(t, err)

	diff, err := work.Diff(ctx, "main", client.Page{})
	require.NoError(t, err)
	require.Len(t, diff.Changes, 1)
	n := 0
	for _, err := range work.DiffChanges(ctx, "main") {
		require.NoError(t, err)
		n++
	}
	require.Equal(t, 1, n)

	p, err := d.CreateProposal(ctx, client.ProposalRequest{Title: "Acme in DE", Source: "agent/a"})
	require.NoError(t, err)
	require.Equal(t, "open", p.State)
	got, err := d.Proposal(ctx, p.ID)
	require.NoError(t, err)
	require.Equal(t, p.ID, got.ID)
	_, err = d.ProposalDiff(ctx, p.ID, client.Page{})
	require.NoError(t, err)
	conflicts, err := d.Conflicts(ctx, p.ID)
	require.NoError(t, err)
	require.Len(t, conflicts, 1)
	require.JSONEq(t, `"DE"`, string(conflicts[0].Source.Value), "the source side of the conflict")
	require.JSONEq(t, `"FR"`, string(conflicts[0].Target.Value), "the target side of the conflict")
	require.Nil(t, conflicts[0].Resolution)
	_, err = d.MergeProposal(ctx, p.ID, client.ProposalMerge{})
	var prob *client.Problem
	require.ErrorAs(t, err, &prob)
	require.Equal(t, http.StatusConflict, prob.Status)
	cf := conflicts[0]
	require.NoError(t, d.ResolveConflict(ctx, p.ID, cf.ID, client.Resolution{Choice: "target", Fingerprint: cf.Fingerprint}))
	require.NoError(t, d.ClearResolution(ctx, p.ID, cf.ID))
	require.NoError(t, d.ResolveConflict(ctx, p.ID, cf.ID, client.Resolution{Choice: "source", Fingerprint: cf.Fingerprint}))
	conflicts, err = d.Conflicts(ctx, p.ID)
	require.NoError(t, err)
	require.NotNil(t, conflicts[0].Resolution)
	require.Equal(t, "source", conflicts[0].Resolution.Choice)
	got, err = d.Proposal(ctx, p.ID)
	require.NoError(t, err)
	require.NotNil(t, got.Summary)
	require.Equal(t, 1, got.Summary.Records.Updated)
	m, err := d.MergeProposal(ctx, p.ID, client.ProposalMerge{})
	require.NoError(t, err)
	require.Len(t, m.Parents, 2)
	n = 0
	for pr, err := range d.Proposals(ctx, "merged") {
		require.NoError(t, err)
		require.Equal(t, p.ID, pr.ID)
		n++
	}
	require.Equal(t, 1, n)

	// A direct merge and a closed Proposal.
	_, err = d.CreateBranch(ctx, client.CreateBranch{Name: "agent/b", From: "main"})
	require.NoError(t, err)
	_, err = main.Merge(ctx, client.MergeRequest{From: "agent/b"})
	require.NoError(t, err)
	p2, err := d.CreateProposal(ctx, client.ProposalRequest{Title: "nothing", Source: "agent/b"})
	require.NoError(t, err)
	closed, err := d.CloseProposal(ctx, p2.ID)
	require.NoError(t, err)
	require.Equal(t, "closed", closed.State)
}

// TestDeleteDomain: the bootstrap admin deletes a Domain; it is gone at
// once, and a Domain admin may not delete it.
func TestDeleteDomain(t *testing.T) {
	t.Parallel()
	fx := mustDomain(t, "doomed")
	ctx := t.Context()
	var p *client.Problem
	err := client.New(fx.url, fx.admin).Domain(fx.domain).Delete(ctx)
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusForbidden, p.Status)
	require.NoError(t, fx.boot.Domain(fx.domain).Delete(ctx))
	_, err = fx.boot.Domain(fx.domain).Get(ctx)
	require.ErrorAs(t, err, &p)
	require.Equal(t, http.StatusNotFound, p.Status)
	ready, err := fx.boot.ListDomains(ctx)
	require.NoError(t, err)
	for _, d := range ready {
		require.NotEqual(t, fx.domain, d.Name, "a Domain being deleted is not listed")
		require.Equal(t, "ready", d.State)
	}
	// Listed with those being deleted until its job has removed it.
	all, err := fx.boot.ListDomainsDeleting(ctx)
	require.NoError(t, err)
	for _, d := range all {
		if d.Name == fx.domain {
			require.Equal(t, "deleting", d.State)
			require.NotNil(t, d.Progress)
		}
	}
}
