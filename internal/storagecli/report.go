package storagecli

import (
	"context"
	"fmt"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
)

// TableReport is the size, cache and bloat figures of one table or
// partition. A partitioned table sums its partitions.
type TableReport struct {
	Name string `json:"name"`
	// Parent is the partitioned table of a partition, "" otherwise.
	Parent      string `json:"parent,omitempty"`
	Partitioned bool   `json:"partitioned,omitempty"`
	// Heap is pg_relation_size (the main fork).
	Heap int64 `json:"heap"`
	// Indexes is pg_indexes_size.
	Indexes int64 `json:"indexes"`
	// Total is pg_total_relation_size (heap, TOAST, maps and indexes).
	Total int64 `json:"total"`
	// Rows is the planner's estimate (pg_class.reltuples), -1 before the
	// first VACUUM or ANALYZE.
	Rows       int64 `json:"rows"`
	LiveTuples int64 `json:"live_tuples"`
	DeadTuples int64 `json:"dead_tuples"`
	// DeadRatio is dead / (live + dead) tuples, nil without tuples.
	DeadRatio *float64 `json:"dead_ratio,omitempty"`
	// HeapHit and IndexHit are the shared buffer hit ratios since the
	// statistics were reset, nil without block accesses.
	HeapHit  *float64 `json:"heap_hit_ratio,omitempty"`
	IndexHit *float64 `json:"index_hit_ratio,omitempty"`
	// FreeBytes estimates the heap's free space: its pages minus what its
	// rows need at their average width (pg_stats) and the fill factor; nil
	// when the table was never analyzed.
	FreeBytes *int64   `json:"est_free_bytes,omitempty"`
	FreePct   *float64 `json:"est_free_pct,omitempty"`

	heapHit, heapRead, idxHit, idxRead int64
	relpages                           int64
	fillfactor                         float64
}

// IndexReport is the size and cache figures of one index.
type IndexReport struct {
	Name     string   `json:"name"`
	Table    string   `json:"table"`
	Size     int64    `json:"size"`
	Scans    int64    `json:"scans"`
	HitRatio *float64 `json:"hit_ratio,omitempty"`
}

// PartitionReport sums the partitions with one suffix (all Domain data
// whose id hashes there) over every hash-partitioned table.
type PartitionReport struct {
	Partition string `json:"partition"`
	Heap      int64  `json:"heap"`
	Indexes   int64  `json:"indexes"`
	Total     int64  `json:"total"`
	// Records estimates the rows of mat_records_<partition>.
	Records int64 `json:"records"`
	// Domains are the Domains whose data lives there.
	Domains []string `json:"domains"`
}

// Report is storage report's result.
type Report struct {
	Tables     []TableReport     `json:"tables"`
	Indexes    []IndexReport     `json:"indexes"`
	Partitions []PartitionReport `json:"partitions"`
	Total      int64             `json:"total"`
}

var partSuffix = regexp.MustCompile(`^(.*)_(p\d+)$`)

// natLess orders names with a partition suffix by table then number
// (mat_records_p2 before mat_records_p10).
func natLess(a, b string) bool {
	ma, mb := partSuffix.FindStringSubmatch(a), partSuffix.FindStringSubmatch(b)
	if ma != nil && mb != nil && ma[1] == mb[1] {
		na, _ := strconv.Atoi(ma[2][1:])
		nb, _ := strconv.Atoi(mb[2][1:])
		return na < nb
	}
	return a < b
}

func ratio(hit, read int64) *float64 {
	if hit+read == 0 {
		return nil
	}
	r := float64(hit) / float64(hit+read)
	return &r
}

// BuildReport reads sizes, row estimates, cache hit ratios and bloat
// estimates of the tables and indexes of the current schema.
func BuildReport(ctx context.Context, conn *pgx.Conn) (*Report, error) {
	var blockSize int64
	if err := conn.QueryRow(ctx, `SELECT current_setting('block_size')::bigint`).Scan(&blockSize); err != nil {
		return nil, fmt.Errorf("read block_size: %w", err)
	}
	rows, err := conn.Query(ctx, `SELECT c.relname::text, c.relkind = 'p', coalesce(par.relname::text, ''),
			pg_relation_size(c.oid), pg_indexes_size(c.oid), pg_total_relation_size(c.oid),
			c.reltuples::bigint, c.relpages::bigint, coalesce(c.reloptions, '{}'),
			coalesce(s.n_live_tup, 0), coalesce(s.n_dead_tup, 0),
			coalesce(io.heap_blks_hit, 0), coalesce(io.heap_blks_read, 0),
			coalesce(io.idx_blks_hit, 0), coalesce(io.idx_blks_read, 0)
		FROM pg_class c
		JOIN pg_namespace n ON n.oid = c.relnamespace
		LEFT JOIN pg_inherits h ON h.inhrelid = c.oid
		LEFT JOIN pg_class par ON par.oid = h.inhparent
		LEFT JOIN pg_stat_user_tables s ON s.relid = c.oid
		LEFT JOIN pg_statio_user_tables io ON io.relid = c.oid
		WHERE n.nspname = current_schema() AND c.relkind IN ('r', 'p')`)
	if err != nil {
		return nil, fmt.Errorf("read table sizes: %w", err)
	}
	tables, err := pgx.AppendRows([]TableReport(nil), rows, func(row pgx.CollectableRow) (TableReport, error) {
		var t TableReport
		var opts []string
		if err := row.Scan(&t.Name, &t.Partitioned, &t.Parent, &t.Heap, &t.Indexes, &t.Total, &t.Rows, &t.relpages, &opts,
			&t.LiveTuples, &t.DeadTuples, &t.heapHit, &t.heapRead, &t.idxHit, &t.idxRead); err != nil {
			return t, err
		}
		t.fillfactor = 100
		if t.Partitioned {
			// Its figures are the sums of its partitions (after ANALYZE,
			// reltuples of a partitioned table already estimates them).
			t.Heap, t.Indexes, t.Total, t.Rows, t.LiveTuples, t.DeadTuples = 0, 0, 0, 0, 0, 0
		}
		for _, o := range opts {
			if v, ok := strings.CutPrefix(o, "fillfactor="); ok {
				if f, err := strconv.ParseFloat(v, 64); err == nil {
					t.fillfactor = f
				}
			}
		}
		return t, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read table sizes: %w", err)
	}
	widths, err := rowWidths(ctx, conn)
	if err != nil {
		return nil, err
	}
	byName := map[string]int{}
	for i := range tables {
		byName[tables[i].Name] = i
		if w, ok := widths[tables[i].Name]; ok && !tables[i].Partitioned {
			estimateFree(&tables[i], w, blockSize)
		}
	}
	// A partitioned table sums its partitions.
	for i := range tables {
		t := &tables[i]
		if t.Parent == "" {
			continue
		}
		pi, ok := byName[t.Parent]
		if !ok {
			continue
		}
		p := &tables[pi]
		p.Heap += t.Heap
		p.Indexes += t.Indexes
		p.Total += t.Total
		p.Rows += max(t.Rows, 0)
		p.LiveTuples += t.LiveTuples
		p.DeadTuples += t.DeadTuples
		p.heapHit += t.heapHit
		p.heapRead += t.heapRead
		p.idxHit += t.idxHit
		p.idxRead += t.idxRead
		if t.FreeBytes != nil {
			f := *t.FreeBytes
			if p.FreeBytes != nil {
				f += *p.FreeBytes
			}
			p.FreeBytes = &f
		}
	}
	rep := &Report{}
	for i := range tables {
		t := &tables[i]
		t.HeapHit = ratio(t.heapHit, t.heapRead)
		t.IndexHit = ratio(t.idxHit, t.idxRead)
		if t.LiveTuples+t.DeadTuples > 0 {
			r := float64(t.DeadTuples) / float64(t.LiveTuples+t.DeadTuples)
			t.DeadRatio = &r
		}
		if t.Partitioned && t.FreeBytes != nil && t.Heap > 0 {
			pct := float64(*t.FreeBytes) * 100 / float64(t.Heap)
			t.FreePct = &pct
		}
		if t.Parent == "" {
			rep.Total += t.Total
		}
	}
	sort.SliceStable(tables, func(i, j int) bool {
		gi, gj := tables[i].Name, tables[j].Name
		if tables[i].Parent != "" {
			gi = tables[i].Parent
		}
		if tables[j].Parent != "" {
			gj = tables[j].Parent
		}
		if gi != gj {
			return gi < gj
		}
		if (tables[i].Parent == "") != (tables[j].Parent == "") {
			return tables[i].Parent == ""
		}
		return natLess(tables[i].Name, tables[j].Name)
	})
	rep.Tables = tables
	if rep.Indexes, err = indexReports(ctx, conn); err != nil {
		return nil, err
	}
	if rep.Partitions, err = partitionReports(ctx, conn, tables); err != nil {
		return nil, err
	}
	return rep, nil
}

// rowWidths is the average stored width of a row per table from pg_stats
// (columns weighted by their non-null fraction).
func rowWidths(ctx context.Context, conn *pgx.Conn) (map[string]float64, error) {
	rows, err := conn.Query(ctx, `SELECT tablename::text, sum((1 - null_frac) * avg_width)::float8
		FROM pg_stats WHERE schemaname = current_schema() AND NOT inherited GROUP BY tablename`)
	if err != nil {
		return nil, fmt.Errorf("read pg_stats: %w", err)
	}
	out := map[string]float64{}
	var n string
	var w float64
	if _, err := pgx.ForEachRow(rows, []any{&n, &w}, func() error {
		out[n] = w
		return nil
	}); err != nil {
		return nil, fmt.Errorf("read pg_stats: %w", err)
	}
	return out, nil
}

// Heap page layout used by the free space estimate.
const (
	pageHeader  = 24
	tupleHeader = 24 // 23 bytes and the null bitmap of a few columns, aligned
	linePointer = 4
)

// estimateFree sets the free space estimate of a heap: relpages pages
// against the pages reltuples rows of the average width need at the fill
// factor.
func estimateFree(t *TableReport, width float64, blockSize int64) {
	if t.Rows < 0 || t.relpages <= 0 {
		return
	}
	row := math.Ceil((tupleHeader+width)/8)*8 + linePointer
	usable := float64(blockSize-pageHeader) * t.fillfactor / 100
	need := int64(math.Ceil(float64(t.Rows) * row / usable))
	free := max((t.relpages-need)*blockSize, 0)
	pct := float64(free) * 100 / float64(t.relpages*blockSize)
	t.FreeBytes = &free
	t.FreePct = &pct
}

func indexReports(ctx context.Context, conn *pgx.Conn) ([]IndexReport, error) {
	rows, err := conn.Query(ctx, `SELECT ic.relname::text, tc.relname::text, pg_relation_size(i.indexrelid),
			coalesce(s.idx_scan, 0), coalesce(io.idx_blks_hit, 0), coalesce(io.idx_blks_read, 0)
		FROM pg_index i
		JOIN pg_class ic ON ic.oid = i.indexrelid
		JOIN pg_class tc ON tc.oid = i.indrelid
		JOIN pg_namespace n ON n.oid = tc.relnamespace
		LEFT JOIN pg_stat_user_indexes s ON s.indexrelid = i.indexrelid
		LEFT JOIN pg_statio_user_indexes io ON io.indexrelid = i.indexrelid
		WHERE n.nspname = current_schema() AND ic.relkind = 'i'`)
	if err != nil {
		return nil, fmt.Errorf("read index sizes: %w", err)
	}
	out, err := pgx.AppendRows([]IndexReport(nil), rows, func(row pgx.CollectableRow) (IndexReport, error) {
		var ix IndexReport
		var hit, read int64
		if err := row.Scan(&ix.Name, &ix.Table, &ix.Size, &ix.Scans, &hit, &read); err != nil {
			return ix, err
		}
		ix.HitRatio = ratio(hit, read)
		return ix, nil
	})
	if err != nil {
		return nil, fmt.Errorf("read index sizes: %w", err)
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].Table != out[j].Table {
			return natLess(out[i].Table, out[j].Table)
		}
		return out[i].Name < out[j].Name
	})
	return out, nil
}

func partitionReports(ctx context.Context, conn *pgx.Conn, tables []TableReport) ([]PartitionReport, error) {
	byPart := map[string]*PartitionReport{}
	var order []string
	for _, t := range tables {
		if t.Parent == "" {
			continue
		}
		m := partSuffix.FindStringSubmatch(t.Name)
		if m == nil || m[1] != t.Parent {
			continue
		}
		p, ok := byPart[m[2]]
		if !ok {
			p = &PartitionReport{Partition: m[2], Domains: []string{}}
			byPart[m[2]] = p
			order = append(order, m[2])
		}
		p.Heap += t.Heap
		p.Indexes += t.Indexes
		p.Total += t.Total
		if t.Parent == "mat_records" {
			p.Records += max(t.Rows, 0)
		}
	}
	var hasDomains bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass('domains') IS NOT NULL AND to_regclass('mat_records') IS NOT NULL`).Scan(&hasDomains); err != nil {
		return nil, fmt.Errorf("look for the domains table: %w", err)
	}
	if hasDomains {
		rows, err := conn.Query(ctx, `SELECT d.name, substring(c.relname from '_(p[0-9]+)$')
			FROM domains d
			JOIN pg_inherits i ON i.inhparent = 'mat_records'::regclass
			JOIN pg_class c ON c.oid = i.inhrelid,
			LATERAL regexp_match(pg_get_expr(c.relpartbound, c.oid), 'modulus (\d+), remainder (\d+)') b
			WHERE satisfies_hash_partition(i.inhparent, b[1]::int, b[2]::int, d.id)
			ORDER BY d.name`)
		if err != nil {
			return nil, fmt.Errorf("place domains in partitions: %w", err)
		}
		var name, part string
		if _, err := pgx.ForEachRow(rows, []any{&name, &part}, func() error {
			if p, ok := byPart[part]; ok {
				p.Domains = append(p.Domains, name)
			}
			return nil
		}); err != nil {
			return nil, fmt.Errorf("place domains in partitions: %w", err)
		}
	}
	sort.Slice(order, func(i, j int) bool { return natLess("x_"+order[i], "x_"+order[j]) })
	out := make([]PartitionReport, 0, len(order))
	for _, k := range order {
		out = append(out, *byPart[k])
	}
	return out, nil
}
