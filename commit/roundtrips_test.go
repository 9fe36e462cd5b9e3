package commit_test

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/internal/pgtest"
	"github.com/lorebase/lorebase/store"
)

// roundTrips counts what a connection sends and waits for: each statement
// sent alone (Exec, Query, QueryRow, BEGIN and COMMIT among them), each
// batch and each COPY is one round trip. Statements that pgx prepares on a
// connection's first use of a text are not counted: the commits measured
// below run on connections that prepared them already.
type roundTrips struct {
	mu   sync.Mutex
	on   bool
	sent []string
}

func (r *roundTrips) add(s string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.on {
		r.sent = append(r.sent, strings.Join(strings.Fields(s), " "))
	}
}

func (r *roundTrips) TraceQueryStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceQueryStartData) context.Context {
	r.add(d.SQL)
	return ctx
}

func (r *roundTrips) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (r *roundTrips) TraceBatchStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceBatchStartData) context.Context {
	var first []string
	for _, q := range d.Batch.QueuedQueries {
		first = append(first, strings.Fields(q.SQL)[0])
	}
	r.add(fmt.Sprintf("batch of %d: %s", d.Batch.Len(), strings.Join(first, ", ")))
	return ctx
}

func (r *roundTrips) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (r *roundTrips) TraceBatchEnd(context.Context, *pgx.Conn, pgx.TraceBatchEndData) {}

func (r *roundTrips) TraceCopyFromStart(ctx context.Context, _ *pgx.Conn, d pgx.TraceCopyFromStartData) context.Context {
	r.add("copy " + d.TableName.Sanitize())
	return ctx
}

func (r *roundTrips) TraceCopyFromEnd(context.Context, *pgx.Conn, pgx.TraceCopyFromEndData) {}

// record turns counting on (clearing what was counted) or off and returns
// what was counted.
func (r *roundTrips) record(on bool) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := r.sent
	r.on = on
	if on {
		r.sent = nil
	}
	return out
}

// TestCommitRoundTrips: the round trips of a commit between the client and
// the server. The Domain's scope, the plan setting, the branch lock and the
// schema travel in one batch; the Records a commit reads (whole, or by Kind alone for the ends of
// its Links) in one statement, sent in one batch with its Links read; the
// Revision's sequence numbers in one batch with the staging tables. Each
// case runs its commit twice with new values on one connection and counts
// the second.
func TestCommitRoundTrips(t *testing.T) {
	t.Parallel()
	// Four Parts put again with the round's weight.
	fourPuts := func(r int) []commit.Change {
		out := make([]commit.Change, 0, 4)
		for i := range 4 {
			out = append(out, put("Part", fmt.Sprintf("P-%d", i), fmt.Sprintf(`{"name": "Part %d", "weight_kg": %d}`, i, r)))
		}
		return out
	}
	for _, tc := range []struct {
		name      string
		threshold int
		changes   func(round int) []commit.Change
		want      int
	}{
		{
			// BEGIN, scope+plans+lock+schema, Records+Links read, sequence
			// numbers, the write batch, COMMIT.
			name:    "puts through arrays",
			changes: fourPuts,
			want:    6,
		},
		{
			// As above, with the stages created beside the sequence numbers
			// and three COPYs (objects, Records, history).
			name:      "puts through staging tables",
			threshold: 1,
			changes:   fourPuts,
			want:      9,
		},
		{
			// A put, a link and an unlink: the Records put and the Links'
			// ends are read in one statement.
			name: "puts, links and unlinks",
			changes: func(r int) []commit.Change {
				return []commit.Change{
					put("Part", "P-0", fmt.Sprintf(`{"name": "Part 0", "weight_kg": %d}`, r)),
					lnk("supplied_by", fmt.Sprintf("P-%d", r), "S-1"),
					unlnk("supplied_by", fmt.Sprintf("P-%d", r-1), "S-1"),
				}
			},
			want: 6,
		},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			ctx := context.Background()
			trace := &roundTrips{}
			s, err := store.Open(ctx, pgtest.NewDatabase(t), store.Config{MaxConns: 1, Tracer: trace})
			require.NoError(t, err)
			t.Cleanup(s.Close)
			d, err := s.CreateDomain(ctx, "supply")
			require.NoError(t, err)
			b := &bundle{ctx: ctx, store: s, p: commit.New(s, commit.Config{CopyThresholdRows: tc.threshold}), domain: d.ID}
			_, err = b.p.PutSchema(ctx, d.ID, "main", &commit.SchemaRequest{Document: json.RawMessage(supplySchema), Author: "test", Message: "schema"})
			require.NoError(t, err)
			b.commit(t, append(parts("P", 8), put("Supplier", "S-1", `{"name": "Supplier 1"}`), lnk("supplied_by", "P-0", "S-1"))...)
			b.commit(t, tc.changes(1)...)

			trace.record(true)
			b.commit(t, tc.changes(2)...)
			sent := trace.record(false)
			require.Lenf(t, sent, tc.want, "round trips of the commit:\n%s", strings.Join(sent, "\n"))
		})
	}
}
