package commit

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/internal/pgtest"
)

// TestCopyRowsRoundTrip: the binary COPY stream copyRows writes puts every
// column type of the staging tables into a table as the rowset holds it:
// empty, multi-byte and long text, NULL and present nullable text and
// bytea, the extremes of bigint and integer, both booleans, and a set
// whose columns are longer than its row count (only the first n rows go).
func TestCopyRowsRoundTrip(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := func(v string) *string { return &v }
	long := strings.Repeat("Ωx", 40_000)
	rs := &rowset{
		cols: []column{{"t", "text"}, {"nt", "text"}, {"i8", "bigint"}, {"i4", "integer"}, {"b", "bytea"}, {"ok", "boolean"}},
		data: []any{
			[]string{"", "Zürich — 東京", long, "dropped"},
			[]*string{nil, s(""), s(`{"a": [1, "é"]}`), s("dropped")},
			[]int64{math.MinInt64, 0, math.MaxInt64, 9},
			[]int32{math.MinInt32, -1, math.MaxInt32, 9},
			[][]byte{nil, {}, {0x00, 0xff, 0x10}, {9}},
			[]bool{true, false, true, true},
		},
		n: 3,
	}
	tx := tempTableTx(t, `CREATE TEMP TABLE stage_x (ord serial, t text, nt text, i8 bigint, i4 integer, b bytea, ok boolean)`)
	require.NoError(t, copyRows(ctx, tx, "stage_x", rs))

	rows, err := tx.Query(ctx, `SELECT t, nt, i8, i4, b, ok FROM stage_x ORDER BY ord`)
	require.NoError(t, err)
	type row struct {
		t  string
		nt *string
		i8 int64
		i4 int32
		b  []byte
		ok bool
	}
	var got []row
	for rows.Next() {
		var r row
		require.NoError(t, rows.Scan(&r.t, &r.nt, &r.i8, &r.i4, &r.b, &r.ok))
		got = append(got, r)
	}
	require.NoError(t, rows.Err())
	require.Len(t, got, 3)
	require.True(t, got[2].t == long, "the long text came back with %d bytes of %d", len(got[2].t), len(long))
	got[2].t = "(long)"
	require.Equal(t, []row{
		{"", nil, math.MinInt64, math.MinInt32, nil, true},
		{"Zürich — 東京", s(""), 0, -1, []byte{}, false},
		{"(long)", s(`{"a": [1, "é"]}`), math.MaxInt64, math.MaxInt32, []byte{0x00, 0xff, 0x10}, true},
	}, got)
}

// TestCopyRowsManyChunks: a set of 20,000 rows, whose stream the reader
// encodes in many chunks, arrives whole and in order.
func TestCopyRowsManyChunks(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	const n = 20_000
	keys := make([]string, n)
	seqs := make([]int64, n)
	var want strings.Builder
	for i := range keys {
		keys[i] = fmt.Sprintf("K-%05d-%s", i, strings.Repeat("v", i%97))
		seqs[i] = int64(i) * 3
		want.WriteString(keys[i])
	}
	tx := tempTableTx(t, `CREATE TEMP TABLE stage_n (ord serial, key text, seq bigint)`)
	require.NoError(t, copyRows(ctx, tx, "stage_n", &rowset{cols: []column{{"key", "text"}, {"seq", "bigint"}}, data: []any{keys, seqs}, n: n}))
	var count int
	var sum int64
	var all string
	require.NoError(t, tx.QueryRow(ctx, `SELECT count(*), sum(seq), string_agg(key, '' ORDER BY ord) FROM stage_n`).Scan(&count, &sum, &all))
	require.Equal(t, n, count)
	require.Equal(t, int64(3*n*(n-1)/2), sum)
	require.True(t, all == want.String(), "the keys came back in another order or altered")
}

// tempTableTx opens a transaction on a connection to a fresh database
// and creates the temporary table ddl in it; the test's end rolls it back
// and closes the connection.
func tempTableTx(t *testing.T, ddl string) pgx.Tx {
	t.Helper()
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pgtest.NewDatabase(t))
	require.NoError(t, err)
	t.Cleanup(func() { conn.Close(ctx) })
	tx, err := conn.Begin(ctx)
	require.NoError(t, err)
	t.Cleanup(func() { tx.Rollback(ctx) }) //nolint:errcheck // the test reads inside the transaction; rolled back before the connection closes
	_, err = tx.Exec(ctx, ddl)
	require.NoError(t, err)
	return tx
}

// TestCopyReaderRefusesWhatItCannotWrite: a column of another type, or
// shorter than the set, or without a name, is an error before anything is
// sent.
func TestCopyReaderRefusesWhatItCannotWrite(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		name string
		rs   *rowset
		want string
	}{
		{"float column", &rowset{data: []any{[]float64{1}}, n: 1}, "unsupported type []float64"},
		{"short column", &rowset{data: []any{[]string{"a", "b"}, []int64{1}}, n: 2}, "column 1 holds 1 rows, the set 2"},
		{"unnamed column", &rowset{cols: []column{{"key", "text"}}, data: []any{[]string{"a"}, []int64{1}}, n: 1}, "1 column names for 2 columns"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, err := newCopyReader(tc.rs)
			require.ErrorContains(t, err, tc.want)
			require.Nil(t, r)
		})
	}
}
