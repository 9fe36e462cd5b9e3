package commit_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/lberr"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// A Domain gets a schema, then a commit puts two Records and links them;
// a commit breaking the schema is refused whole, naming the change.
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
	  {"name": "Supplier", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]},
	  {"name": "Part", "title": "name", "attributes": [{"name": "name", "type": "text", "required": true}]}],
	 "relations": [{"name": "supplied_by", "from": "Part", "to": "Supplier", "cardinality": "many"}]}`
	if _, err := p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(doc), Author: "example", Message: "schema"}); err != nil {
		panic(err)
	}

	res, err := p.Commit(ctx, d.ID, "main", &commit.Request{Author: "example", Message: "first Records", Changes: []commit.Change{
		{Op: "put", Kind: "Supplier", Key: "S-1", Values: json.RawMessage(`{"name": "Acme"}`)},
		{Op: "put", Kind: "Part", Key: "P-1", Values: json.RawMessage(`{"name": "Bolt"}`)},
		{Op: "link", Relation: "supplied_by", From: "P-1", To: "S-1"},
	}}, "")
	if err != nil {
		panic(err)
	}
	fmt.Println("changes:", res.Changes, "parents:", len(res.Parents))

	_, err = p.Commit(ctx, d.ID, "main", &commit.Request{Author: "example", Message: "no name", Changes: []commit.Change{
		{Op: "put", Kind: "Supplier", Key: "S-2", Values: json.RawMessage(`{}`)},
	}}, "")
	var e *lberr.Error
	if errors.As(err, &e) {
		fmt.Println(e.Kind, e.Problems[0].Field, e.Problems[0].Code)
	}
	// Output:
	// changes: 3 parents: 1
	// unprocessable changes[0].values.name required
}
