package pgtest

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
)

// RowVersions maps each key q returns (its first column, text) to its
// row's version (the second, xmin::text): an update of a row changes it.
func RowVersions(t testing.TB, pool *pgxpool.Pool, q string, args ...any) map[string]string {
	t.Helper()
	rows, err := pool.Query(context.Background(), q, args...)
	if err != nil {
		t.Fatalf("row versions: %v", err)
	}
	defer rows.Close()
	out := map[string]string{}
	for rows.Next() {
		var k, x string
		if err := rows.Scan(&k, &x); err != nil {
			t.Fatalf("row versions: %v", err)
		}
		out[k] = x
	}
	if err := rows.Err(); err != nil {
		t.Fatalf("row versions: %v", err)
	}
	return out
}

// Rewritten counts the keys of after whose version is not the one before
// holds (rows written since, new rows among them).
func Rewritten(before, after map[string]string) int {
	n := 0
	for k, x := range after {
		if before[k] != x {
			n++
		}
	}
	return n
}
