package client_test

import (
	"context"
	"errors"
	"fmt"
	"log"

	"github.com/lorebase/lorebase/client"
)

// An agent's loop: fork a branch of its own, resolve a mention before
// writing, commit with provenance under a trace, and follow a value's
// lineage back to the trace.
func Example() {
	f, err := newDomain("example")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	c := client.New(f.url, f.admin)
	supply := c.Domain(f.domain)
	if _, err := supply.Branch("main").Commit(ctx, client.CommitRequest{Message: "Seed", Changes: []client.Change{
		{Op: "put", Kind: "Supplier", Key: "S-1", Values: map[string]any{"name": "Acme Fasteners", "country": "DE"}},
	}}); err != nil {
		log.Fatal(err)
	}

	// Every call of this task is a step of the trace "task-42".
	agent := c.WithTrace("task-42").Domain(f.domain)
	b, err := agent.CreateBranch(ctx, client.CreateBranch{Name: "agent/scout-7", From: "main"})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println("branch:", b.Name, b.Mode, b.State)

	work := agent.Branch("agent/scout-7")
	cands, err := work.Resolve(ctx, "ACME fasteners", "Supplier", 1)
	if err != nil {
		log.Fatal(err)
	}
	key := cands.Candidates[0].Key
	fmt.Println("resolved:", key, cands.Candidates[0].Reason)

	res, err := work.Commit(ctx, client.CommitRequest{
		Message:    "Acme is gold tier",
		Provenance: &client.Provenance{Source: "https://example.com/acme", Tool: "web.fetch", Confidence: 0.9},
		Changes:    []client.Change{{Op: "patch", Key: key, Values: map[string]any{"tier": "gold"}}},
	})
	if err != nil {
		log.Fatal(err)
	}
	lin, err := work.Lineage(ctx, key)
	if err != nil {
		log.Fatal(err)
	}
	tier := lin.Values["tier"]
	fmt.Println("tier set by the commit:", tier.Revision == res.Revision, "under trace:", tier.Trace())
	// Output:
	// branch: agent/scout-7 overlay ready
	// resolved: S-1 title
	// tier set by the commit: true under trace: task-42
}

// Errors are *client.Problem: the status, what is wrong and each field at
// fault (for a commit, the index of the change).
func ExampleProblem() {
	f, err := newDomain("example")
	if err != nil {
		log.Fatal(err)
	}
	main := client.New(f.url, f.admin).Domain(f.domain).Branch("main")
	_, err = main.Commit(context.Background(), client.CommitRequest{Message: "Bad", Changes: []client.Change{
		{Op: "put", Kind: "Supplier", Key: "S-9", Values: map[string]any{"tier": "bronze"}},
	}})
	var p *client.Problem
	if errors.As(err, &p) {
		fmt.Println(p.Status, p.Title)
		for _, e := range p.Errors {
			fmt.Printf("changes[%d] %s: %s\n", *e.Index, e.Field, e.Code)
		}
	}
	// Output:
	// 422 the commit violates the schema or the data
	// changes[0] changes[0].values.name: required
	// changes[0] changes[0].values.tier: enum
}

// Records walks keyset pages as an iterator.
func ExampleBranch_Records() {
	f, err := newDomain("example")
	if err != nil {
		log.Fatal(err)
	}
	ctx := context.Background()
	main := client.New(f.url, f.admin).Domain(f.domain).Branch("main")
	var changes []client.Change
	for i := range 120 {
		changes = append(changes, client.Change{Op: "put", Kind: "Supplier", Key: fmt.Sprintf("S-%03d", i),
			Values: map[string]any{"name": fmt.Sprintf("Supplier %d", i)}})
	}
	if _, err := main.Commit(ctx, client.CommitRequest{Message: "Load", Changes: changes}); err != nil {
		log.Fatal(err)
	}
	n := 0
	for rec, err := range main.Records(ctx, client.RecordQuery{Kind: "Supplier"}) {
		if err != nil {
			log.Fatal(err)
		}
		if n == 0 {
			fmt.Println("first:", rec.Key)
		}
		n++
	}
	fmt.Println("records:", n)
	// Output:
	// first: S-000
	// records: 120
}
