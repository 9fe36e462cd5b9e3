package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
)

// Branch is a ref: a named line of Revisions in a Domain.
type Branch struct {
	DomainID     int32           `json:"-"`
	ID           int32           `json:"-"`
	Name         string          `json:"name"`
	Mode         string          `json:"mode"`
	State        string          `json:"state"`
	BaseID       *int32          `json:"-"`
	ForkSeq      *int64          `json:"-"`
	ForkRevision *string         `json:"fork_revision"`
	Head         *string         `json:"head"`
	HeadSeq      int64           `json:"-"`
	Progress     json.RawMessage `json:"progress,omitempty"`
	CreatedAt    time.Time       `json:"created_at"`
}

const branchColumns = `domain_id, id, name, mode, state, base_id, fork_seq, fork_revision, head, head_seq, progress, created_at`

func scanBranch(row pgx.Row) (*Branch, error) {
	var b Branch
	err := row.Scan(&b.DomainID, &b.ID, &b.Name, &b.Mode, &b.State, &b.BaseID, &b.ForkSeq, &b.ForkRevision,
		&b.Head, &b.HeadSeq, &b.Progress, &b.CreatedAt)
	if err != nil {
		return nil, Translate(err)
	}
	return &b, nil
}

// LockBranch reads a branch and locks its ref until the transaction ends:
// commits on one branch are serialized here, and the ref then moves by
// compare-and-swap against the head read under the lock.
func LockBranch(ctx context.Context, tx pgx.Tx, name string) (*Branch, error) {
	b, err := scanBranch(tx.QueryRow(ctx, lockBranchSQL, name))
	if err != nil {
		return nil, fmt.Errorf("lock branch %q: %w", name, err)
	}
	return b, nil
}

const lockBranchSQL = `SELECT ` + branchColumns + ` FROM refs
		WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting' FOR UPDATE`

// QueueLockBranch queues LockBranch's statement on batch and then the read
// of the branch's schema, so that both travel with whatever else the batch
// holds in one round trip. Once the batch has run, *b is the locked branch
// and *sch its schema (the schema is read after the lock, in the same
// transaction, as LoadSchema would read it). A missing branch fails the
// batch with LockBranch's error, before the schema is looked at.
func QueueLockBranch(batch *pgx.Batch, name string, b **Branch, sch *SchemaRow) {
	batch.Queue(lockBranchSQL, name).QueryRow(func(row pgx.Row) error {
		got, err := scanBranch(row)
		if err != nil {
			return fmt.Errorf("lock branch %q: %w", name, err)
		}
		*b = got
		return nil
	})
	batch.Queue(`SELECT seq, document, compiled FROM schemas
		WHERE domain_id = lb_domain() AND branch_id = (SELECT id FROM refs
			WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting')`, name).QueryRow(func(row pgx.Row) error {
		if err := row.Scan(&sch.Seq, &sch.Document, &sch.Compiled); err != nil {
			return fmt.Errorf("load schema: %w", Translate(err))
		}
		return nil
	})
}

// SchemaRow is a branch's stored schema.
type SchemaRow struct {
	Seq      int64
	Document json.RawMessage
	Compiled json.RawMessage
}

// LoadSchema reads a branch's schema in a scoped transaction.
func LoadSchema(ctx context.Context, tx pgx.Tx, branchID int32) (*SchemaRow, error) {
	var s SchemaRow
	err := tx.QueryRow(ctx, `SELECT seq, document, compiled FROM schemas
		WHERE domain_id = lb_domain() AND branch_id = $1`, branchID).Scan(&s.Seq, &s.Document, &s.Compiled)
	if err != nil {
		return nil, fmt.Errorf("load schema: %w", Translate(err))
	}
	return &s, nil
}

// ReadBranch reads a branch in a scoped transaction without locking it.
func ReadBranch(ctx context.Context, tx pgx.Tx, name string) (*Branch, error) {
	b, err := scanBranch(tx.QueryRow(ctx, `SELECT `+branchColumns+` FROM refs
		WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting'`, name))
	if err != nil {
		return nil, fmt.Errorf("read branch %q: %w", name, err)
	}
	return b, nil
}

// ReadBranchByID reads a branch by its id in a scoped transaction without
// locking it.
func ReadBranchByID(ctx context.Context, tx pgx.Tx, id int32) (*Branch, error) {
	b, err := scanBranch(tx.QueryRow(ctx, `SELECT `+branchColumns+` FROM refs
		WHERE domain_id = lb_domain() AND id = $1 AND state <> 'deleting'`, id))
	if err != nil {
		return nil, fmt.Errorf("read branch %d: %w", id, err)
	}
	return b, nil
}

// ShareBranch reads a branch and locks its ref FOR SHARE until the
// transaction ends: commits on it wait, reads and other sharers do not.
func ShareBranch(ctx context.Context, tx pgx.Tx, name string) (*Branch, error) {
	b, err := scanBranch(tx.QueryRow(ctx, `SELECT `+branchColumns+` FROM refs
		WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting' FOR SHARE`, name))
	if err != nil {
		return nil, fmt.Errorf("lock branch %q: %w", name, err)
	}
	return b, nil
}
