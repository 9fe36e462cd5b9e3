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

// The columns of the commit's staged sets.
func objectCols() []column { return []column{{"hash", "bytea"}, {"body", "text"}} }

func recordCols() []column {
	return []column{{"key", "text"}, {"kind", "text"}, {"title", "text"}, {"vals", "text"},
		{"other", "text"}, {"lineage", "text"}, {"created_seq", "bigint"}, {"versions", "integer"}, {"deleted", "boolean"},
		{"ivals", "text"}}
}

func historyCols() []column {
	return []column{{"key", "text"}, {"op", "text"}, {"kind", "text"}, {"title", "text"},
		{"vals", "text"}, {"object_hash", "bytea"}, {"provenance", "text"}}
}

func linkCols() []column {
	return []column{{"from_key", "text"}, {"relation", "text"}, {"to_key", "text"}, {"origin", "text"}}
}

func linkHistoryCols() []column {
	return []column{{"from_key", "text"}, {"relation", "text"}, {"to_key", "text"}, {"op", "text"}, {"origin", "text"}}
}

// stageBound is a staging table, its columns and the most rows a write
// puts in it.
type stageBound struct {
	stage string
	cols  []column
	most  int
}

// stageStatements are the statements that make sure the session has the
// staging tables of the sets that may hold more than threshold rows (source
// copies a set of more than threshold rows into its table). A staging
// table is a temporary table that the session keeps and that empties at
// the end of every transaction that used it (ON COMMIT DELETE ROWS; rows
// copied by a transaction that rolls back are never visible to another),
// so a commit writes no catalog rows for it once its connection has one. A
// stage takes the rows of one write per transaction: the pipeline writes
// once per transaction.
func stageStatements(sets []stageBound, threshold int) []string {
	var out []string
	for _, s := range sets {
		if s.most <= threshold {
			continue
		}
		defs := make([]string, len(s.cols))
		for i, c := range s.cols {
			defs[i] = c.name + " " + c.typ
		}
		out = append(out, "CREATE TEMP TABLE IF NOT EXISTS "+s.stage+" ("+strings.Join(defs, ", ")+") ON COMMIT DELETE ROWS")
	}
	return out
}

// source makes the rows readable by one statement. Small sets travel as
// arrays (unnest, parameters numbered from argBase+1); sets of more than
// threshold rows are copied into their staging table (stageStatements; COPY
// straight into a table under row-level security is not allowed for
// lorebase_app). It returns the FROM item, aliased u, and the parameters
// to pass.
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
