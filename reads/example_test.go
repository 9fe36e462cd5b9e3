package reads_test

import (
	"context"
	"encoding/json"
	"fmt"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/reads"
	"github.com/lorebase/lorebase/store"
)

// Reads of a branch's head: one Record, the Links of a Record, and the
// Records of a Kind page by page.
func Example() {
	ctx := context.Background()
	url, drop, err := pgtest.Database(ctx)
	if err != nil {
		panic(err)
	}
	defer drop() //nolint:errcheck // a throwaway database
	s, err := store.Open(ctx, url, store.Config{})
	if err != nil {
		panic(err)
	}
	defer s.Close()
	d, err := s.CreateDomain(ctx, "example")
	if err != nil {
		panic(err)
	}
	p := commit.New(s, commit.Config{})
	doc := `{"kinds": [
	  {"name": "Supplier", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true, "search": true}]},
	  {"name": "Part", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]}],
	 "relations": [{"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many"}]}`
	if _, err := p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(doc), Author: "example", Message: "schema"}); err != nil {
		panic(err)
	}
	if _, err := p.Commit(ctx, d.ID, "main", &commit.Request{Author: "example", Message: "Records", Changes: []commit.Change{
		{Op: "put", Kind: "Supplier", Key: "S-1", Values: json.RawMessage(`{"name": "Acme"}`)},
		{Op: "put", Kind: "Supplier", Key: "S-2", Values: json.RawMessage(`{"name": "Globex"}`)},
		{Op: "put", Kind: "Part", Key: "P-1", Values: json.RawMessage(`{"name": "Bolt"}`)},
		{Op: "link", Relation: "supplied_by", From: "P-1", To: "S-1"},
	}}, ""); err != nil {
		panic(err)
	}

	r := reads.New(s, reads.Config{})
	rec, err := r.Get(ctx, d.ID, "main", "S-1", "")
	if err != nil {
		panic(err)
	}
	fmt.Println(rec.Kind, rec.Key, rec.Title)

	links, err := r.Links(ctx, d.ID, "main", "P-1", reads.LinksQuery{Direction: "out"})
	if err != nil {
		panic(err)
	}
	for _, l := range links.Links {
		fmt.Println(l.From, l.Relation, l.To)
	}

	page, err := r.Page(ctx, d.ID, "main", reads.PageQuery{Kind: "Supplier", Limit: 1})
	if err != nil {
		panic(err)
	}
	fmt.Println(len(page.Records), page.Records[0].Key, page.Next != "")
	// Output:
	// Supplier S-1 Acme
	// P-1 supplied_by S-1
	// 1 S-1 true
}
