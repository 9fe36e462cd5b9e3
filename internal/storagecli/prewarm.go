package storagecli

import (
	"context"
	"errors"
	"fmt"
	"regexp"
	"sort"
	"strconv"

	"github.com/jackc/pgx/v5"
)

// PrewarmStep is one relation of a prewarm.
type PrewarmStep struct {
	Relation string `json:"relation"`
	// Kind is "index" or "heap".
	Kind string `json:"kind"`
	// Size is the relation's main fork in bytes.
	Size int64 `json:"size"`
	// Loaded is what pg_prewarm read into shared buffers.
	Loaded int64 `json:"loaded"`
	// Cumulative is the total loaded so far, this relation included.
	Cumulative int64 `json:"cumulative"`
	// Percent is Cumulative as a percentage of the budget.
	Percent float64 `json:"percent_of_budget"`
	// Partial tells that only the first blocks fitted in the budget.
	Partial bool `json:"partial,omitempty"`
}

// PrewarmResult is what Prewarm loaded.
type PrewarmResult struct {
	Domain   string `json:"domain"`
	DomainID int32  `json:"domain_id"`
	// Partition is the suffix of the Domain's partitions ("p3").
	Partition string `json:"partition"`
	// HasRows tells whether the Domain has Records; without them its
	// partitions are not loaded.
	HasRows       bool          `json:"has_rows"`
	SharedBuffers int64         `json:"shared_buffers"`
	Budget        int64         `json:"budget"`
	Loaded        int64         `json:"loaded"`
	Steps         []PrewarmStep `json:"steps"`
	// Skipped are the relations left out because the budget was reached.
	Skipped []string `json:"skipped,omitempty"`
}

// DefaultPrewarmFraction of shared_buffers is the budget when none is
// given: the rest stays for the pages the workload itself brings in.
const DefaultPrewarmFraction = 0.8

// ErrNoDomain is returned when the Domain named for prewarm does not exist.
var ErrNoDomain = errors.New("no such domain")

type hotRelation struct {
	oid  uint32
	name string
	kind string
	size int64
}

// Prewarm loads a Domain's hot relations into shared buffers with
// pg_prewarm, most valuable first, until budget bytes are loaded (0: 80% of
// shared_buffers). progress, when not nil, is called after each relation.
func Prewarm(ctx context.Context, conn *pgx.Conn, domain string, budget int64, progress func(PrewarmStep)) (*PrewarmResult, error) {
	if budget < 0 {
		return nil, fmt.Errorf("budget %d: must be positive", budget)
	}
	res := &PrewarmResult{}
	if err := resolveDomain(ctx, conn, domain, res); err != nil {
		return nil, err
	}
	var blockSize int64
	if err := conn.QueryRow(ctx, `SELECT pg_size_bytes(current_setting('shared_buffers')), current_setting('block_size')::bigint`).
		Scan(&res.SharedBuffers, &blockSize); err != nil {
		return nil, fmt.Errorf("read shared_buffers: %w", err)
	}
	res.Budget = budget
	if budget == 0 {
		res.Budget = int64(float64(res.SharedBuffers) * DefaultPrewarmFraction)
	}
	if _, err := conn.Exec(ctx, "CREATE EXTENSION IF NOT EXISTS pg_prewarm"); err != nil {
		return nil, fmt.Errorf("create extension pg_prewarm (needs a role allowed to create it): %w", err)
	}
	rels, err := hotRelations(ctx, conn, res)
	if err != nil {
		return nil, err
	}
	for i, r := range rels {
		left := res.Budget - res.Loaded
		blocks := r.size / blockSize
		partial := false
		if r.size > left {
			blocks = left / blockSize
			partial = true
		}
		if blocks == 0 && r.size > 0 {
			for _, s := range rels[i:] {
				res.Skipped = append(res.Skipped, s.name)
			}
			break
		}
		var loaded int64
		if blocks > 0 {
			if err := conn.QueryRow(ctx, prewarmSQL, r.oid, blocks-1).Scan(&loaded); err != nil {
				return nil, fmt.Errorf("prewarm %s: %w", r.name, err)
			}
		}
		res.Loaded += loaded * blockSize
		step := PrewarmStep{
			Relation: r.name, Kind: r.kind, Size: r.size, Loaded: loaded * blockSize,
			Cumulative: res.Loaded, Partial: partial,
		}
		if res.Budget > 0 {
			step.Percent = float64(res.Loaded) * 100 / float64(res.Budget)
		}
		res.Steps = append(res.Steps, step)
		if progress != nil {
			progress(step)
		}
		if partial {
			for _, s := range rels[i+1:] {
				res.Skipped = append(res.Skipped, s.name)
			}
			break
		}
	}
	return res, nil
}

// prewarmSQL loads the first blocks of a relation ($2 is the last one),
// no further than its size now: a relation that shrank (VACUUM truncation)
// or was dropped (pg_relation_size is NULL) since it was listed loads what
// is left.
const prewarmSQL = `SELECT CASE WHEN n > 0 THEN pg_prewarm($1::oid::regclass, 'buffer', 'main', 0, least($2::bigint, n - 1)) ELSE 0 END
	FROM (SELECT coalesce(pg_relation_size($1::oid::regclass), 0) / current_setting('block_size')::bigint AS n) s`

// resolveDomain finds a Domain by name, or by id when the argument is a
// number no Domain is named.
func resolveDomain(ctx context.Context, conn *pgx.Conn, domain string, res *PrewarmResult) error {
	err := conn.QueryRow(ctx, `SELECT id, name FROM domains WHERE name = $1`, domain).Scan(&res.DomainID, &res.Domain)
	if errors.Is(err, pgx.ErrNoRows) {
		if id, perr := strconv.ParseInt(domain, 10, 32); perr == nil {
			err = conn.QueryRow(ctx, `SELECT id, name FROM domains WHERE id = $1`, int32(id)).Scan(&res.DomainID, &res.Domain)
		}
	}
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("domain %q: %w", domain, ErrNoDomain)
	}
	if err != nil {
		return fmt.Errorf("find domain %q: %w", domain, err)
	}
	return nil
}

// partitionOf is the partition of a hash-partitioned table that holds a
// Domain, computed from the partition bounds (so it is known without rows).
const partitionOfSQL = `SELECT c.oid, c.relname::text
	FROM pg_inherits i
	JOIN pg_class c ON c.oid = i.inhrelid,
	LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid), 'modulus (\d+), remainder (\d+)') b
	WHERE i.inhparent = to_regclass($1)
	  AND satisfies_hash_partition(i.inhparent, b[1]::int, b[2]::int, $2::int)`

func partitionOf(ctx context.Context, conn *pgx.Conn, table string, domainID int32) (uint32, string, error) {
	var oid uint32
	var name string
	err := conn.QueryRow(ctx, partitionOfSQL, table, domainID).Scan(&oid, &name)
	if err != nil {
		return 0, "", fmt.Errorf("find the partition of %s holding domain %d: %w", table, domainID, err)
	}
	return oid, name, nil
}

// indexOrder ranks the attached indexes of a partition by their parent
// index: the order prewarm loads them in after the primary key.
var indexOrder = map[string]int{
	"mat_records_kind_idx":    1,
	"mat_records_search_idx":  2,
	"mat_records_tokens_idx":  3,
	"mat_links_in_idx":        1,
	"mat_link_history_in_idx": 1,
}

var domainPredicate = regexp.MustCompile(`domain_id = (\d+)\)`)

type indexInfo struct {
	oid       uint32
	name      string
	primary   bool
	parent    string
	predicate string
	size      int64
}

// indexesOf lists the indexes of a relation a Domain uses, most valuable
// first: the primary key, the indexes attached to the parent's (in
// indexOrder), the Domain's own partial indexes (per-Attribute indexes);
// partial indexes of other Domains are left out.
func indexesOf(ctx context.Context, conn *pgx.Conn, rel uint32, domainID int32) ([]indexInfo, error) {
	rows, err := conn.Query(ctx, `SELECT i.indexrelid, c.relname::text, i.indisprimary,
			coalesce(p.relname::text, ''), coalesce(pg_get_expr(i.indpred, i.indrelid), ''),
			pg_relation_size(i.indexrelid)
		FROM pg_index i
		JOIN pg_class c ON c.oid = i.indexrelid
		LEFT JOIN pg_inherits h ON h.inhrelid = i.indexrelid
		LEFT JOIN pg_class p ON p.oid = h.inhparent
		WHERE i.indrelid = $1::oid
		ORDER BY c.relname`, rel)
	if err != nil {
		return nil, fmt.Errorf("list indexes: %w", err)
	}
	all, err := pgx.CollectRows(rows, func(row pgx.CollectableRow) (indexInfo, error) {
		var ix indexInfo
		err := row.Scan(&ix.oid, &ix.name, &ix.primary, &ix.parent, &ix.predicate, &ix.size)
		return ix, err
	})
	if err != nil {
		return nil, fmt.Errorf("list indexes: %w", err)
	}
	own := strconv.Itoa(int(domainID))
	rank := func(ix indexInfo) int {
		switch {
		case ix.primary:
			return 0
		case ix.parent != "":
			if r, ok := indexOrder[ix.parent]; ok {
				return r
			}
			return 10
		case ix.predicate == "":
			return 30
		default:
			return 20
		}
	}
	var out []indexInfo
	for _, ix := range all {
		if ix.predicate != "" {
			m := domainPredicate.FindAllStringSubmatch(ix.predicate, -1)
			if len(m) > 0 {
				mine := false
				for _, g := range m {
					mine = mine || g[1] == own
				}
				if !mine {
					continue
				}
			}
		}
		out = append(out, ix)
	}
	sort.SliceStable(out, func(i, j int) bool { return rank(out[i]) < rank(out[j]) })
	return out, nil
}

// hotRelations lists what prewarm loads, in order: refs, schemas and
// revisions (indexes, then heap); the indexes of the Domain's partitions of
// mat_records (primary key, kind index, search index, the Domain's
// per-Attribute indexes), of mat_history and objects (a commit writes a
// leaf of their primary keys per change, at keys spread over the whole
// index, so a cold leaf is a page read per change) and of mat_links
// (primary key, reverse index); then the heaps of mat_records and
// mat_links, then of mat_history and objects; then the search postings
// (mat_search_words: its indexes, then its heap) and the lexicon, which a
// budget smaller than the Domain leaves out first.
func hotRelations(ctx context.Context, conn *pgx.Conn, res *PrewarmResult) ([]hotRelation, error) {
	var rels []hotRelation
	addIndexes := func(rel uint32) error {
		ixs, err := indexesOf(ctx, conn, rel, res.DomainID)
		if err != nil {
			return err
		}
		for _, ix := range ixs {
			rels = append(rels, hotRelation{oid: ix.oid, name: ix.name, kind: "index", size: ix.size})
		}
		return nil
	}
	addHeap := func(rel uint32) error {
		h := hotRelation{oid: rel, kind: "heap"}
		if err := conn.QueryRow(ctx, `SELECT relname::text, pg_relation_size(oid) FROM pg_class WHERE oid = $1::oid`, rel).
			Scan(&h.name, &h.size); err != nil {
			return fmt.Errorf("size of relation %d: %w", rel, err)
		}
		rels = append(rels, h)
		return nil
	}
	// addTable adds a table that is not partitioned: its indexes, then its heap.
	addTable := func(t string) error {
		var oid uint32
		if err := conn.QueryRow(ctx, `SELECT to_regclass($1)::oid`, t).Scan(&oid); err != nil {
			return fmt.Errorf("find table %s: %w", t, err)
		}
		if err := addIndexes(oid); err != nil {
			return fmt.Errorf("%s: %w", t, err)
		}
		return addHeap(oid)
	}
	for _, t := range []string{"refs", "schemas", "revisions"} {
		if err := addTable(t); err != nil {
			return nil, err
		}
	}
	parts := map[string]uint32{}
	for _, t := range []string{"mat_records", "mat_links", "mat_history", "objects", "mat_search_words"} {
		oid, name, err := partitionOf(ctx, conn, t, res.DomainID)
		if err != nil {
			return nil, err
		}
		parts[t] = oid
		if t == "mat_records" {
			res.Partition = name[len("mat_records_"):]
		}
	}
	if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM mat_records WHERE domain_id = $1)`, res.DomainID).
		Scan(&res.HasRows); err != nil {
		return nil, fmt.Errorf("look for records of domain %s: %w", res.Domain, err)
	}
	if !res.HasRows {
		return rels, nil
	}
	steps := []struct {
		table string
		heap  bool
	}{
		{"mat_records", false},
		{"mat_history", false}, {"objects", false},
		{"mat_links", false},
		{"mat_records", true}, {"mat_links", true},
		{"mat_history", true}, {"objects", true},
		{"mat_search_words", false}, {"mat_search_words", true},
	}
	for _, s := range steps {
		var err error
		if s.heap {
			err = addHeap(parts[s.table])
		} else {
			err = addIndexes(parts[s.table])
		}
		if err != nil {
			return nil, fmt.Errorf("%s: %w", s.table, err)
		}
	}
	// The lexicon (every Domain's words in one table) last: it is read by
	// every misspelled word's corrections and written by every commit.
	if err := addTable("mat_lexicon"); err != nil {
		return nil, err
	}
	return rels, nil
}
