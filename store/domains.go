package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/lorebase/lorebase/internal/jobkind"
)

// Domain is a tenant: one knowledge base.
type Domain struct {
	ID        int32     `json:"-"`
	Name      string    `json:"name"`
	CreatedAt time.Time `json:"created_at"`
}

// emptySchema is the compiled schema of a new Domain's main branch.
const emptySchema = `{"kinds":{},"relations":{}}`

// CreateDomain creates a Domain with its branch main (owner; bootstrap admin
// only). A taken name is ErrConflict.
func (s *Store) CreateDomain(ctx context.Context, name string) (*Domain, error) {
	var d Domain
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `INSERT INTO domains (name) VALUES ($1) RETURNING id, name, created_at`, name).
			Scan(&d.ID, &d.Name, &d.CreatedAt)
		if err != nil {
			return Translate(err)
		}
		var branchID int32
		if err := tx.QueryRow(ctx, `INSERT INTO refs (domain_id, name, counts_from) VALUES ($1, 'main', 0) RETURNING id`, d.ID).Scan(&branchID); err != nil {
			return fmt.Errorf("create branch main: %w", err)
		}
		_, err = tx.Exec(ctx, `INSERT INTO schemas (domain_id, branch_id, seq, document, compiled)
			VALUES ($1, $2, 0, '{"kinds":[],"relations":[]}', $3)`, d.ID, branchID, emptySchema)
		if err != nil {
			return fmt.Errorf("create schema of main: %w", err)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("create domain %q: %w", name, err)
	}
	return &d, nil
}

// DomainStatus is a Domain as the bootstrap admin's list shows it: its
// state (StateDomainReady or StateDomainDeleting) and, while it is being
// deleted, the deletion's progress (domains.progress) and its newest
// store.domain_delete job.
type DomainStatus struct {
	Domain
	State    string          `json:"state"`
	Progress json.RawMessage `json:"progress,omitempty"`
	Job      *BranchJob      `json:"job,omitempty"`
}

// Domain states.
const (
	StateDomainReady    = "ready"
	StateDomainDeleting = "deleting"
)

// DomainStatuses lists every Domain with its state (owner; bootstrap admin
// only), by name; with deleting, those being deleted too, each with its
// deletion's progress and job.
func (s *Store) DomainStatuses(ctx context.Context, deleting bool) ([]DomainStatus, error) {
	rows, err := s.Pool.Query(ctx, `SELECT d.id, d.name, d.created_at, d.state, d.progress,
		       j.kind, j.state::text, j.attempt, coalesce(cardinality(j.errors), 0)
		  FROM domains d
		  LEFT JOIN LATERAL (SELECT kind, state, attempt, errors FROM river_job
		        WHERE d.state = 'deleting' AND kind = $2 AND args @> jsonb_build_object('domain_id', d.id)
		        ORDER BY id DESC LIMIT 1) j ON true
		 WHERE d.state = 'ready' OR $1
		 ORDER BY d.name`, deleting, jobkind.DomainDelete)
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	var out []DomainStatus
	var (
		ds       DomainStatus
		progress []byte
		kind     *string
		state    *string
		attempt  *int
		errs     int
	)
	_, err = pgx.ForEachRow(rows, []any{&ds.ID, &ds.Name, &ds.CreatedAt, &ds.State, &progress, &kind, &state, &attempt, &errs}, func() error {
		d := DomainStatus{Domain: ds.Domain, State: ds.State}
		if d.State == StateDomainDeleting {
			d.Progress = append(json.RawMessage(nil), progress...)
			if kind != nil {
				d.Job = &BranchJob{Kind: *kind, State: *state, Attempt: *attempt}
				if errs > 0 {
					// As on branches: the job's own error text is for the
					// server log, never for the page.
					msg := fmt.Sprintf("attempt %d failed; the job is retried automatically", d.Job.Attempt)
					if d.Job.State == "discarded" {
						msg = "every attempt failed; the job is queued again by the next sweep"
					}
					d.Job.LastError = &msg
				}
			}
		}
		out = append(out, d)
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("list domains: %w", err)
	}
	return out, nil
}

// DomainByName resolves a Domain's name to its id (owner: the name in a
// request path is resolved before the request is scoped; authorization
// then compares it with the token's Domain). A Domain being deleted is
// ErrNotFound.
func (s *Store) DomainByName(ctx context.Context, name string) (*Domain, error) {
	var d Domain
	err := s.Pool.QueryRow(ctx, `SELECT id, name, created_at FROM domains WHERE name = $1 AND state = 'ready'`, name).
		Scan(&d.ID, &d.Name, &d.CreatedAt)
	if err != nil {
		return nil, fmt.Errorf("domain %q: %w", name, Translate(err))
	}
	return &d, nil
}

// DeleteDomain marks the Domain deleting, revokes its tokens and queues
// its deletion (queue runs in the same transaction), as the owner. From then
// on the Domain is not found; the store.domain_delete job removes its rows.
// A missing (or already deleting) Domain is ErrNotFound.
func (s *Store) DeleteDomain(ctx context.Context, name string, queue func(ctx context.Context, tx pgx.Tx, domainID int32) error) (*Domain, error) {
	var d Domain
	err := pgx.BeginFunc(ctx, s.Pool, func(tx pgx.Tx) error {
		err := tx.QueryRow(ctx, `UPDATE domains SET state = 'deleting' WHERE name = $1 AND state = 'ready'
			RETURNING id, name, created_at`, name).Scan(&d.ID, &d.Name, &d.CreatedAt)
		if err != nil {
			return Translate(err)
		}
		if _, err := tx.Exec(ctx, `UPDATE tokens SET revoked_at = now() WHERE domain_id = $1 AND revoked_at IS NULL`, d.ID); err != nil {
			return fmt.Errorf("revoke tokens: %w", err)
		}
		return queue(ctx, tx, d.ID)
	})
	if err != nil {
		return nil, fmt.Errorf("delete domain %q: %w", name, err)
	}
	return &d, nil
}
