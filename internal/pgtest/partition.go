package pgtest

import (
	"context"
	"fmt"
	"testing"

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
