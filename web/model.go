package web

import (
	"encoding/json"
	"time"
)

// The JSON shapes of Keeper's API (DESIGN.md sections 5 and 11), as far as
// the pages read them.

type whoami struct {
	Name      string          `json:"name"`
	Domain    string          `json:"domain"`
	Role      string          `json:"role"`
	Branches  []string        `json:"branches"`
	Bootstrap bool            `json:"bootstrap"`
	Write     map[string]bool `json:"write"`
}

type domainInfo struct {
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

type branchInfo struct {
	Name         string          `json:"name"`
	Mode         string          `json:"mode"`
	State        string          `json:"state"`
	Base         *string         `json:"base"`
	ForkRevision *string         `json:"fork_revision"`
	Head         *string         `json:"head"`
	Progress     json.RawMessage `json:"progress"`
	Own          *struct {
		Records int64 `json:"records"`
		Links   int64 `json:"links"`
		Capped  bool  `json:"capped"`
	} `json:"own"`
	Job *struct {
		Kind      string  `json:"kind"`
		State     string  `json:"state"`
		Attempt   int     `json:"attempt"`
		LastError *string `json:"last_error"`
	} `json:"job"`
	CreatedAt time.Time `json:"created_at"`
}

type branchList struct {
	Branches []branchInfo `json:"branches"`
	Next     string       `json:"next"`
}

type attributeDef struct {
	Name     string   `json:"name"`
	Type     string   `json:"type"`
	Kind     string   `json:"kind"`
	Required bool     `json:"required"`
	Unique   bool     `json:"unique"`
	Indexed  bool     `json:"indexed"`
	Search   bool     `json:"search"`
	Values   []string `json:"values"`
}

type kindDef struct {
	Name       string         `json:"name"`
	Title      string         `json:"title"`
	Attributes []attributeDef `json:"attributes"`
}

type relationDef struct {
	Name        string `json:"name"`
	From        string `json:"from"`
	To          string `json:"to"`
	Cardinality string `json:"cardinality"`
	Inverse     string `json:"inverse"`
	Required    bool   `json:"required"`
}

type schemaDoc struct {
	Kinds     []kindDef     `json:"kinds"`
	Relations []relationDef `json:"relations"`
}

type schemaAnswer struct {
	Document schemaDoc `json:"document"`
	Revision *string   `json:"revision"`
}

// kind returns the definition of a Kind (nil if the schema has none).
func (s *schemaDoc) kind(name string) *kindDef {
	for i := range s.Kinds {
		if s.Kinds[i].Name == name {
			return &s.Kinds[i]
		}
	}
	return nil
}

type record struct {
	Key      string                     `json:"key"`
	Kind     string                     `json:"kind"`
	Title    string                     `json:"title"`
	Values   map[string]json.RawMessage `json:"values"`
	Revision string                     `json:"revision"`
}

type recordPage struct {
	Records []record `json:"records"`
	Next    string   `json:"next"`
	// Count is the number of Records of the listing (asked with
	// count=true): exact, or at least Records when Exact is false.
	Count *struct {
		Records int  `json:"records"`
		Exact   bool `json:"exact"`
	} `json:"count"`
}

type link struct {
	Relation string `json:"relation"`
	From     string `json:"from"`
	To       string `json:"to"`
	Origin   string `json:"origin"`
}

type linkList struct {
	Links []link `json:"links"`
}

type historyEntry struct {
	Revision   string          `json:"revision"`
	Seq        int64           `json:"seq"`
	Op         string          `json:"op"`
	Values     json.RawMessage `json:"values"`
	Author     string          `json:"author"`
	Message    string          `json:"message"`
	At         time.Time       `json:"at"`
	Provenance json.RawMessage `json:"provenance"`
}

type historyPage struct {
	Entries []historyEntry `json:"entries"`
	Next    string         `json:"next"`
}

type origin struct {
	Value      json.RawMessage `json:"value"`
	Revision   string          `json:"revision"`
	Seq        int64           `json:"seq"`
	Author     string          `json:"author"`
	At         time.Time       `json:"at"`
	Provenance json.RawMessage `json:"provenance"`
	Proposal   string          `json:"proposal"`
}

type lineage struct {
	Key     string            `json:"key"`
	Kind    string            `json:"kind"`
	Created origin            `json:"created"`
	Changes int               `json:"changes"`
	Values  map[string]origin `json:"values"`
}

type searchResult struct {
	Key   string  `json:"key"`
	Kind  string  `json:"kind"`
	Title string  `json:"title"`
	Score float32 `json:"score"`
	Match string  `json:"match"`
}

type searchAnswer struct {
	Results     []searchResult      `json:"results"`
	Corrections map[string][]string `json:"corrections"`
}

type revisionSummary struct {
	ID      string    `json:"id"`
	Seq     int64     `json:"seq"`
	Parents []string  `json:"parents"`
	Author  string    `json:"author"`
	Message string    `json:"message"`
	At      time.Time `json:"at"`
}

type revisionPage struct {
	Revisions []revisionSummary `json:"revisions"`
	Next      string            `json:"next"`
}

type revision struct {
	revisionSummary
	Branch     string          `json:"branch"`
	Hash       string          `json:"hash"`
	Provenance json.RawMessage `json:"provenance"`
	// Changes is one page of the changes; ChangesTotal counts them all and
	// Next is the after of the following page.
	Changes      json.RawMessage `json:"changes"`
	ChangesTotal int             `json:"changes_total"`
	Next         string          `json:"next"`
}

// change is one change of a commit (DESIGN.md section 5).
type change struct {
	Op       string          `json:"op"`
	Kind     string          `json:"kind"`
	Key      string          `json:"key"`
	Values   json.RawMessage `json:"values"`
	Relation string          `json:"relation"`
	From     string          `json:"from"`
	To       string          `json:"to"`
	Object   string          `json:"object"`
}

type diffSummary struct {
	Records struct {
		Added   int `json:"added"`
		Updated int `json:"updated"`
		Removed int `json:"removed"`
	} `json:"records"`
	Links struct {
		Added   int `json:"added"`
		Removed int `json:"removed"`
	} `json:"links"`
}

type proposal struct {
	ID          string          `json:"id"`
	Title       string          `json:"title"`
	Description string          `json:"description"`
	Source      string          `json:"source"`
	Target      string          `json:"target"`
	State       string          `json:"state"`
	Author      string          `json:"author"`
	CreatedAt   time.Time       `json:"created_at"`
	Summary     diffSummary     `json:"summary"`
	Conflicts   json.RawMessage `json:"conflicts"`
	Mergeable   bool            `json:"mergeable"`
}

// ConflictCount reads conflicts as the API gives it: a count or a list.
func (p proposal) ConflictCount() int {
	var n int
	if json.Unmarshal(p.Conflicts, &n) == nil {
		return n
	}
	var list []json.RawMessage
	if json.Unmarshal(p.Conflicts, &list) == nil {
		return len(list)
	}
	return 0
}

type proposalList struct {
	Proposals []proposal `json:"proposals"`
	Next      string     `json:"next"`
}

type diffAttribute struct {
	Name   string          `json:"name"`
	Before json.RawMessage `json:"before"`
	After  json.RawMessage `json:"after"`
}

type diffLink struct {
	Op       string `json:"op"`
	Relation string `json:"relation"`
	From     string `json:"from"`
	To       string `json:"to"`
}

type diffChange struct {
	Key        string          `json:"key"`
	Kind       string          `json:"kind"`
	Op         string          `json:"op"`
	Attributes []diffAttribute `json:"attributes"`
	Links      []diffLink      `json:"links"`
}

type diffAnswer struct {
	Source struct {
		Branch   string `json:"branch"`
		Revision string `json:"revision"`
	} `json:"source"`
	Target struct {
		Branch   string `json:"branch"`
		Revision string `json:"revision"`
	} `json:"target"`
	MergeBase string       `json:"merge_base"`
	Summary   diffSummary  `json:"summary"`
	Changes   []diffChange `json:"changes"`
	Next      string       `json:"next"`
}

type conflictSide struct {
	Value    json.RawMessage `json:"value"`
	Revision string          `json:"revision"`
	Author   string          `json:"author"`
}

type conflict struct {
	ID          string       `json:"id"`
	Code        string       `json:"code"`
	Kind        string       `json:"kind"`
	Key         string       `json:"key"`
	Attribute   string       `json:"attribute"`
	Base        conflictSide `json:"base"`
	Target      conflictSide `json:"target"`
	Source      conflictSide `json:"source"`
	Fingerprint string       `json:"fingerprint"`
	Resolution  *struct {
		Choice string          `json:"choice"`
		Value  json.RawMessage `json:"value"`
	} `json:"resolution"`
}

type conflictList struct {
	Conflicts []conflict `json:"conflicts"`
}
