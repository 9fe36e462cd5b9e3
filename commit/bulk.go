package commit

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/store"
)

// lit quotes s as an SQL string literal.
func lit(s string) string { return store.QuoteLiteral(s) }

// ilit writes an integer as an SQL literal.
func ilit(n int32) string { return strconv.FormatInt(int64(n), 10) }

// column is one column of a rowset: its name and SQL type (text, bigint,
// integer, boolean or bytea).
type column struct {
	name string
	typ  string
}

// rowset holds the rows of one set-based write, column by column. Each
// entry of data is a []string, []*string, []int64, []int32, []bool or [][]byte.
type rowset struct {
	cols []column
	data []any
	n    int
}

// source makes the rows readable by one statement. Small sets travel as
// arrays (unnest, parameters numbered from argBase+1); sets of more than
// threshold rows are copied into a temporary staging table that is dropped
// at commit (COPY straight into a table under row-level security is not
// allowed for lorebase_app). It returns the FROM item, aliased u, and the
// parameters to pass.
func source(ctx context.Context, tx pgx.Tx, stage string, rs *rowset, threshold, argBase int) (string, []any, error) {
	names := make([]string, len(rs.cols))
	for i, c := range rs.cols {
		names[i] = c.name
	}
	if rs.n <= threshold {
		parts := make([]string, len(rs.cols))
		for i, c := range rs.cols {
			parts[i] = "$" + strconv.Itoa(argBase+i+1) + "::" + c.typ + "[]"
		}
		return "unnest(" + strings.Join(parts, ", ") + ") AS u(" + strings.Join(names, ", ") + ")", rs.data, nil
	}
	defs := make([]string, len(rs.cols))
	for i, c := range rs.cols {
		defs[i] = c.name + " " + c.typ
	}
	if _, err := tx.Exec(ctx, "CREATE TEMP TABLE "+stage+" ("+strings.Join(defs, ", ")+") ON COMMIT DROP"); err != nil {
		return "", nil, fmt.Errorf("create staging table %s: %w", stage, err)
	}
	src := pgx.CopyFromSlice(rs.n, func(i int) ([]any, error) {
		row := make([]any, len(rs.data))
		for c, col := range rs.data {
			switch v := col.(type) {
			case []string:
				row[c] = v[i]
			case []*string:
				row[c] = v[i]
			case []int64:
				row[c] = v[i]
			case []int32:
				row[c] = v[i]
			case [][]byte:
				row[c] = v[i]
			case []bool:
				row[c] = v[i]
			default:
				return nil, fmt.Errorf("staging %s: unsupported column type %T", stage, col)
			}
		}
		return row, nil
	})
	if _, err := tx.CopyFrom(ctx, pgx.Identifier{stage}, names, src); err != nil {
		return "", nil, fmt.Errorf("copy into %s: %w", stage, err)
	}
	return stage + " AS u", nil, nil
}
