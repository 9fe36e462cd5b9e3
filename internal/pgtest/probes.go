package pgtest

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
)

// PlanNode is a node of a plan in EXPLAIN's JSON format.
type PlanNode struct {
	Type      string  `json:"Node Type"`
	Relation  string  `json:"Relation Name"`
	Index     string  `json:"Index Name"`
	IndexCond string  `json:"Index Cond"`
	Strategy  string  `json:"Strategy"`
	Alias     string  `json:"Alias"`
	Loops     float64 `json:"Actual Loops"`
	// Rows is the rows the node returned a loop, on average.
	Rows float64 `json:"Actual Rows"`
	// SharedHit and SharedRead are the node's shared buffers (reported
	// when auto_explain.log_buffers is on).
	SharedHit  float64    `json:"Shared Hit Blocks"`
	SharedRead float64    `json:"Shared Read Blocks"`
	Plans      []PlanNode `json:"Plans"`
}

// Explained is one plan auto_explain reported in JSON (auto_explain's
// log_format json): the statement and its plan.
type Explained struct {
	Query string   `json:"Query Text"`
	Plan  PlanNode `json:"Plan"`
}

// ParseExplained reads a plan AutoExplain returned with log_format json.
func ParseExplained(reported string) (Explained, error) {
	var e Explained
	i := strings.Index(reported, "{")
	if i < 0 {
		return e, fmt.Errorf("no JSON plan in %q", reported)
	}
	if err := json.Unmarshal([]byte(reported[i:]), &e); err != nil {
		return e, fmt.Errorf("parse plan: %w", err)
	}
	return e, nil
}

// probeCond is an index condition that looks a key up: the Domain, the
// branch and the key column (a word in the lexicon), the three leading
// columns of the index named.
var probeCond = regexp.MustCompile(`^\(\(domain_id = [^)]+\) AND \(branch_id = [^)]+\) AND \((from_key|to_key|key|word) = `)

// probedTables are the tables whose reads KeyProbeProblems checks.
var probedTables = []string{"mat_records", "mat_links", "mat_search_words", "mat_lexicon"}

// KeyProbeProblems lists the nodes of plan that ran, read mat_records,
// mat_links, mat_search_words or mat_lexicon and did not look keys up. A
// lookup is an index scan or bitmap index scan of the index the key leads
// after the Domain and branch (the primary key for key, from_key and a
// lexicon's word, the incoming index for to_key) whose condition is the
// Domain, the branch and the key; a heap or bitmap heap scan over such a
// bitmap counts as the bitmap does; a sequential scan never. A node that did
// not run (a partition chosen away when the statement ran) does not count.
func KeyProbeProblems(plan PlanNode) []string {
	var out []string
	var walk func(n PlanNode)
	walk = func(n PlanNode) {
		if n.Loops > 0 {
			onTable := slices.ContainsFunc(probedTables, func(p string) bool {
				return strings.HasPrefix(n.Relation, p) || strings.HasPrefix(n.Index, p)
			})
			switch {
			case onTable && n.Type == "Seq Scan":
				out = append(out, fmt.Sprintf("a sequential scan of %s", n.Relation))
			case onTable && n.Index != "":
				m := probeCond.FindStringSubmatch(n.IndexCond)
				if m == nil {
					out = append(out, fmt.Sprintf("%s on %s: not a key probe: %s", n.Type, n.Index, n.IndexCond))
					break
				}
				want := "_pkey"
				if m[1] == "to_key" {
					want = "_to_key_"
				}
				if !strings.Contains(n.Index, want) {
					out = append(out, fmt.Sprintf("%s of %s by %s", n.Type, n.Index, m[1]))
				}
			}
		}
		for _, c := range n.Plans {
			walk(c)
		}
	}
	walk(plan)
	return out
}

// NodesOn returns the nodes of plan that ran and read table: a partition
// of it, or one of its indexes.
func NodesOn(plan PlanNode, table string) []PlanNode {
	var out []PlanNode
	if plan.Loops > 0 && (strings.HasPrefix(plan.Relation, table) || strings.HasPrefix(plan.Index, table)) {
		out = append(out, plan)
	}
	for _, c := range plan.Plans {
		out = append(out, NodesOn(c, table)...)
	}
	return out
}
