package pgtest

import (
	"context"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// DomainBeside creates Domains with create (named tenant-0, tenant-1, …;
// create returns the Domain and its id) until one falls in the partition
// of Domain big: the tables partitioned by domain_id hash it into 8
// partitions (mat_records and the other mat_ tables, objects). It returns
// that Domain.
func DomainBeside[D any](t testing.TB, pool *pgxpool.Pool, big int32, create func(name string) (D, int32)) D {
	t.Helper()
	for i := range 64 {
		d, id := create(fmt.Sprintf("tenant-%d", i))
		var same bool
		err := pool.QueryRow(context.Background(), `SELECT bool_or(satisfies_hash_partition('mat_records'::regclass, 8, r, $1::int)
			AND satisfies_hash_partition('mat_records'::regclass, 8, r, $2::int)) FROM generate_series(0, 7) r`, big, id).Scan(&same)
		if err != nil {
			t.Fatalf("partition of domain %d: %v", id, err)
		}
		if same {
			return d
		}
	}
	t.Fatalf("no Domain of 64 in the partition of domain %d", big)
	panic("unreachable")
}

// AutovacuumOff turns autovacuum off for each of tables, on every partition
// of a partitioned one, so that the statistics a test takes stay as they
// are while it writes. It returns the tables and partitions it changed.
func AutovacuumOff(t testing.TB, pool *pgxpool.Pool, tables ...string) []string {
	t.Helper()
	ctx := context.Background()
	var changed []string
	for _, tbl := range tables {
		rows, err := pool.Query(ctx, `SELECT c.oid::regclass::text FROM pg_class c
			WHERE c.oid = $1::regclass AND c.relkind = 'r'
			   OR c.oid IN (SELECT i.inhrelid FROM pg_inherits i WHERE i.inhparent = $1::regclass)`, tbl)
		if err != nil {
			t.Fatalf("partitions of %s: %v", tbl, err)
		}
		parts, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			t.Fatalf("partitions of %s: %v", tbl, err)
		}
		if len(parts) == 0 {
			t.Fatalf("no table or partition %s", tbl)
		}
		for _, p := range parts {
			if _, err := pool.Exec(ctx, `ALTER TABLE `+p+` SET (autovacuum_enabled = off)`); err != nil {
				t.Fatalf("autovacuum off on %s: %v", p, err)
			}
		}
		changed = append(changed, parts...)
	}
	return changed
}
