package store

import (
	"context"
	"sync"

	"github.com/jackc/pgx/v5"
)

// Head is a branch's head as a request's first scoped read saw it: the
// branch's id and the sequence number of its head Revision, read in the
// same transaction (and the same round trip) as the read itself. Keeper
// derives a read's ETag from it without a round trip of its own.
type Head struct {
	// Branch names the branch whose head is read.
	Branch string

	mu    sync.Mutex
	taken bool // a Read has queued the head's statement
	read  bool // that Read finished and filled found, id and seq
	found bool
	id    int32
	seq   int64
}

// Result tells whether the head was read and, when it was, whether the
// branch exists (not being deleted), its id and its head's sequence
// number. read is false when no scoped read ran under the context, or
// when the one that ran failed.
func (h *Head) Result() (read, found bool, id int32, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.read, h.found, h.id, h.seq
}

// Claim claims the head for one read: only the first read under a
// context reads it. A read whose own statement returns the head claims it
// before its Read and Sets what the statement saw; Read then adds no
// statement of its own.
func (h *Head) Claim() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.taken {
		return false
	}
	h.taken = true
	return true
}

// Set records what the claiming read saw: whether the branch exists (not
// being deleted), its id and its head's sequence number.
func (h *Head) Set(found bool, id int32, seq int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.read, h.found, h.id, h.seq = true, found, id, seq
}

type headKey struct{}

// HeadFrom returns the head the context asks its first read to read (nil:
// none).
func HeadFrom(ctx context.Context) *Head {
	h, _ := ctx.Value(headKey{}).(*Head)
	return h
}

// WithHead returns a context under which the first Read also reads the
// head of branch, in its transaction, as the Read's Domain sees it (the
// same row-level security applies: another Domain's branch is not found).
func WithHead(ctx context.Context, branch string) (context.Context, *Head) {
	h := &Head{Branch: branch}
	return context.WithValue(ctx, headKey{}, h), h
}

// headSQL reads a branch's id and head sequence number; a branch being
// deleted is not found.
const headSQL = `SELECT id, head_seq FROM refs WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting'`

// queueHead adds the head's statement to a Read's batch when the context
// asks for it and no other Read has; the returned function records the
// result once the batch has run without error.
func queueHead(ctx context.Context, b *pgx.Batch) func() {
	h := HeadFrom(ctx)
	if h == nil || !h.Claim() {
		return func() {}
	}
	var found bool
	var id int32
	var seq int64
	b.Queue(headSQL, h.Branch).Query(func(rows pgx.Rows) error {
		defer rows.Close()
		for rows.Next() {
			if err := rows.Scan(&id, &seq); err != nil {
				return err
			}
			found = true
		}
		return rows.Err()
	})
	return func() { h.Set(found, id, seq) }
}
