package commit_test

import (
	"fmt"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
)

// benchChanges builds n changes: a quarter Suppliers (unique vat), half
// Parts (a ref to a Supplier), a quarter supplied_by Links.
func benchChanges(round, n int) []commit.Change {
	ns := n / 4
	np := n / 2
	nl := n - ns - np
	changes := make([]commit.Change, 0, n)
	for i := range ns {
		changes = append(changes, put("Supplier", fmt.Sprintf("S-%d-%d", round, i),
			fmt.Sprintf(`{"name": "Supplier %d of round %d", "vat": "VAT-%d-%d", "country": "DE", "tier": "gold"}`, i, round, round, i)))
	}
	for i := range np {
		changes = append(changes, put("Part", fmt.Sprintf("P-%d-%d", round, i),
			fmt.Sprintf(`{"name": "Hex bolt %d", "maker": "S-%d-%d", "weight_kg": %d.5, "sku": %d}`, i, round, i%ns, i%7, round*1_000_000+i)))
	}
	for i := range nl {
		changes = append(changes, lnk("supplied_by", fmt.Sprintf("P-%d-%d", round, i), fmt.Sprintf("S-%d-%d", round, (i+1)%ns)))
	}
	return changes
}

func benchmarkCommit(b *testing.B, n int) {
	bb := setup(b, commit.Config{})
	round := 0
	b.ResetTimer()
	for b.Loop() {
		b.StopTimer()
		round++
		r := &commit.Request{Message: "bench", Author: "bench", Changes: benchChanges(round, n)}
		b.StartTimer()
		res, err := bb.p.Commit(bb.ctx, bb.domain, "main", r, "")
		require.NoError(b, err)
		require.Equal(b, n, res.Changes)
	}
}

func BenchmarkCommit1000(b *testing.B)  { benchmarkCommit(b, 1000) }
func BenchmarkCommit10000(b *testing.B) { benchmarkCommit(b, 10000) }
