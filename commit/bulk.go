package commit

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

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
	if err := copyRows(ctx, tx, stage, rs); err != nil {
		return "", nil, err
	}
	return stage + " AS u", nil, nil
}

// copyRows copies rs into the staging table stage (rs.cols) as one COPY
// in PostgreSQL's binary format, encoded here from the rowset's columns as
// the connection sends it (copyReader): text as its UTF-8 bytes, bytea as
// its bytes, bigint, integer and boolean in network order; a nil *string
// or []byte is NULL. The staging tables' columns have exactly these types,
// so nothing has to learn them (pgx's CopyFrom describes a select of the
// columns once a connection and encodes every value through its type map).
func copyRows(ctx context.Context, tx pgx.Tx, stage string, rs *rowset) (err error) {
	r, err := newCopyReader(rs)
	if err != nil {
		return fmt.Errorf("copy into %s: %w", stage, err)
	}
	names := make([]string, len(rs.cols))
	cols := make([]string, len(rs.cols))
	for i, c := range rs.cols {
		names[i] = c.name
		cols[i] = pgx.Identifier{c.name}.Sanitize()
	}
	sql := "COPY " + pgx.Identifier{stage}.Sanitize() + " (" + strings.Join(cols, ", ") + ") FROM STDIN (FORMAT binary)"
	// The connection's tracer sees the COPY as it sees pgx's own.
	conn := tx.Conn()
	var tag pgconn.CommandTag
	if tr, ok := conn.Config().Tracer.(pgx.CopyFromTracer); ok {
		ctx = tr.TraceCopyFromStart(ctx, conn, pgx.TraceCopyFromStartData{TableName: pgx.Identifier{stage}, ColumnNames: names})
		defer func() { tr.TraceCopyFromEnd(ctx, conn, pgx.TraceCopyFromEndData{CommandTag: tag, Err: err}) }()
	}
	if tag, err = conn.PgConn().CopyFrom(ctx, r, sql); err != nil {
		return fmt.Errorf("copy into %s: %w", stage, err)
	}
	if tag.RowsAffected() != int64(rs.n) {
		return fmt.Errorf("copy into %s: %d rows copied of %d", stage, tag.RowsAffected(), rs.n)
	}
	return nil
}

// copySignature opens a binary COPY stream: the signature, no flags and an
// empty header extension.
const copySignature = "PGCOPY\n\xff\r\n\x00\x00\x00\x00\x00\x00\x00\x00\x00"

// copyChunk is about how many bytes copyReader encodes ahead of its reader.
const copyChunk = 64 << 10

// copyReader reads a rowset as a binary COPY stream, encoding rows as they
// are read, about copyChunk bytes at a time: the stream is never held
// whole.
type copyReader struct {
	rs   *rowset
	row  int    // the next row to encode
	buf  []byte // encoded, not yet read from off
	off  int
	done bool // the trailer is in buf
}

// newCopyReader checks that every column of rs is of a type the stream
// can hold and holds rs.n rows at least, and that rs names each column.
func newCopyReader(rs *rowset) (*copyReader, error) {
	for c, col := range rs.data {
		var n int
		switch v := col.(type) {
		case []string:
			n = len(v)
		case []*string:
			n = len(v)
		case []int64:
			n = len(v)
		case []int32:
			n = len(v)
		case [][]byte:
			n = len(v)
		case []bool:
			n = len(v)
		default:
			return nil, fmt.Errorf("column %d: unsupported type %T", c, col)
		}
		if n < rs.n {
			return nil, fmt.Errorf("column %d holds %d rows, the set %d", c, n, rs.n)
		}
	}
	if len(rs.cols) != len(rs.data) {
		return nil, fmt.Errorf("%d column names for %d columns", len(rs.cols), len(rs.data))
	}
	return &copyReader{rs: rs, buf: append(make([]byte, 0, copyChunk+4096), copySignature...)}, nil
}

func (r *copyReader) Read(p []byte) (int, error) {
	if r.off == len(r.buf) {
		if r.done {
			return 0, io.EOF
		}
		r.fill()
	}
	n := copy(p, r.buf[r.off:])
	r.off += n
	return n, nil
}

// fill encodes the next rows into buf, read whole, until it holds
// copyChunk bytes or the trailer.
func (r *copyReader) fill() {
	b := r.buf[:0]
	r.off = 0
	for len(b) < copyChunk && r.row < r.rs.n {
		b = r.encodeRow(b, r.row)
		r.row++
	}
	if r.row == r.rs.n && len(b) < copyChunk {
		b = append(b, 0xff, 0xff)
		r.done = true
	}
	r.buf = b
}

// encodeRow appends row i: its field count, then each field's length
// (-1: NULL) and bytes.
func (r *copyReader) encodeRow(b []byte, i int) []byte {
	b = binary.BigEndian.AppendUint16(b, uint16(len(r.rs.data)))
	for _, col := range r.rs.data {
		switch v := col.(type) {
		case []string:
			b = binary.BigEndian.AppendUint32(b, uint32(len(v[i])))
			b = append(b, v[i]...)
		case []*string:
			if v[i] == nil {
				b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			} else {
				b = binary.BigEndian.AppendUint32(b, uint32(len(*v[i])))
				b = append(b, *v[i]...)
			}
		case []int64:
			b = binary.BigEndian.AppendUint32(b, 8)
			b = binary.BigEndian.AppendUint64(b, uint64(v[i]))
		case []int32:
			b = binary.BigEndian.AppendUint32(b, 4)
			b = binary.BigEndian.AppendUint32(b, uint32(v[i]))
		case [][]byte:
			if v[i] == nil {
				b = binary.BigEndian.AppendUint32(b, 0xffffffff)
			} else {
				b = binary.BigEndian.AppendUint32(b, uint32(len(v[i])))
				b = append(b, v[i]...)
			}
		case []bool:
			b = binary.BigEndian.AppendUint32(b, 1)
			if v[i] {
				b = append(b, 1)
			} else {
				b = append(b, 0)
			}
		}
	}
	return b
}
