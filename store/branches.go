package store

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/jackc/pgx/v5"
	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/internal/lberr"
)

// Branch modes and states (refs.mode, refs.state).
const (
	ModeOverlay   = "overlay"
	ModeCopy      = "copy"
	StateReady    = "ready"
	StateCopying  = "copying"
	StateDeleting = "deleting"
)

// MaxChainLevels bounds the levels of a branch chain (a branch, its base,
// the base's base...) that branch calls walk.
const MaxChainLevels = 64

// OwnRowsCap bounds the own-row counts of GetBranch; ListBranches counts up
// to ListOwnRowsCap per branch. A count that reaches its cap is reported as
// "at least".
const (
	OwnRowsCap     = 100000
	ListOwnRowsCap = 1000
)

var branchNameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9._/-]{0,127}$`)

// ValidBranchName reports whether s can name a branch: letters, digits and
// ._/- (first a letter or digit), at most 128 bytes, without "//", "..", or
// a trailing "/".
func ValidBranchName(s string) bool {
	return branchNameRE.MatchString(s) && !strings.Contains(s, "//") && !strings.Contains(s, "..") && !strings.HasSuffix(s, "/")
}

// BranchJobs queues the background work of branch changes in the
// transaction that makes the change, so the change and its job commit
// together or not at all.
type BranchJobs struct {
	// Copy queues the copy of a new copy branch's rows and the index builds
	// of its schema (compiled is the branch's compiled schema).
	Copy func(ctx context.Context, tx pgx.Tx, domainID, branchID int32, compiled json.RawMessage) error
	// Delete queues the removal of a branch marked deleting.
	Delete func(ctx context.Context, tx pgx.Tx, domainID, branchID int32) error
	// DeleteDomain queues the removal of a Domain marked deleting.
	DeleteDomain func(ctx context.Context, tx pgx.Tx, domainID int32) error
}

// CreateBranchRequest asks for a new branch forked from From at its head,
// or at the Revision At (a Revision visible on From).
type CreateBranchRequest struct {
	Name string `json:"name"`
	From string `json:"from"`
	// Mode is "overlay" (the default) or "copy".
	Mode string `json:"mode"`
	At   string `json:"at,omitempty"`
	// MaxBranches and MaxCopies are the Domain's quotas (quota.branches,
	// quota.copies_in_flight); 0 is no limit.
	MaxBranches int `json:"-"`
	MaxCopies   int `json:"-"`
}

// BranchInfo is a branch as the branch calls show it.
type BranchInfo struct {
	Name         string          `json:"name"`
	Mode         string          `json:"mode"`
	State        string          `json:"state"`
	Base         *string         `json:"base"`
	ForkRevision *string         `json:"fork_revision"`
	Head         *string         `json:"head"`
	Progress     json.RawMessage `json:"progress,omitempty"`
	Own          *OwnRows        `json:"own,omitempty"`
	Job          *BranchJob      `json:"job,omitempty"`
	CreatedAt    time.Time       `json:"created_at"`

	// ID is the branch's id inside the Domain.
	ID int32 `json:"-"`
}

// OwnRows counts the rows a branch owns: for an overlay the Records and
// Links it changed (deletions included), for a copy or main all of its
// Records and Links (tombstones included). Counts stop at a cap; Capped
// says a count reached it (the branch owns at least that many).
type OwnRows struct {
	Records int64 `json:"records"`
	Links   int64 `json:"links"`
	Capped  bool  `json:"capped"`
}

// BranchJob is the newest background job of a branch (copy or delete).
type BranchJob struct {
	Kind      string  `json:"kind"`
	State     string  `json:"state"`
	Attempt   int     `json:"attempt"`
	LastError *string `json:"last_error,omitempty"`
}

func branchInvalid(kind lberr.Kind, field, code, msg string) *lberr.Error {
	return lberr.Fields(kind, "invalid branch request", Problem{Field: field, Code: code, Message: msg})
}

// quoted renders a client-supplied name for a message.
func quoted(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	b, _ := json.Marshal(strings.ToValidUTF8(s, "\uFFFD"))
	return string(b)
}

// checkCreateBranch validates a request before any SQL.
func checkCreateBranch(req *CreateBranchRequest) error {
	if req.Mode == "" {
		req.Mode = ModeOverlay
	}
	var ps []Problem
	add := func(field, code, msg string) { ps = append(ps, Problem{Field: field, Code: code, Message: msg}) }
	switch {
	case req.Name == "":
		add("name", "required", "name is required: the new branch's name.")
	case !ValidBranchName(req.Name):
		add("name", "invalid_branch", fmt.Sprintf("%s is not a branch name: use letters, digits and . _ / - (starting with a letter or digit, at most 128), without // or .. or a trailing /.", quoted(req.Name)))
	}
	switch {
	case req.From == "":
		add("from", "required", "from is required: the branch to fork.")
	case !ValidBranchName(req.From):
		add("from", "invalid_branch", fmt.Sprintf("%s is not a branch name.", quoted(req.From)))
	}
	if req.Mode != ModeOverlay && req.Mode != ModeCopy {
		add("mode", "invalid_mode", fmt.Sprintf("mode must be \"overlay\" or \"copy\", not %s.", quoted(req.Mode)))
	}
	if req.At != "" && (len(req.At) > 256 || !utf8.ValidString(req.At) || strings.ContainsFunc(req.At, func(r rune) bool { return r < 0x20 || r == 0x7f })) {
		add("at", "invalid_revision", "at must be a Revision id (printable text, at most 256 bytes).")
	}
	if len(ps) > 0 {
		return lberr.Fields(lberr.Unprocessable, "invalid branch request", ps...)
	}
	return nil
}

// revisionVisible reports whether the Revision (branch, seq) is part of the
// log of branch b as of cut: b's own Revisions up to the cut, then its
// base's up to the fork, and so on.
func revisionVisible(ctx context.Context, tx pgx.Tx, b *Branch, cut int64, revBranch int32, revSeq int64) (bool, error) {
	id, base, fork := b.ID, b.BaseID, b.ForkSeq
	for i := 0; i < MaxChainLevels; i++ {
		if revBranch == id {
			return revSeq <= cut, nil
		}
		if base == nil || fork == nil {
			return false, nil
		}
		cut = min(cut, *fork)
		id = *base
		err := tx.QueryRow(ctx, `SELECT base_id, fork_seq FROM refs WHERE domain_id = lb_domain() AND id = $1`, id).Scan(&base, &fork)
		if errors.Is(err, pgx.ErrNoRows) {
			return false, nil
		}
		if err != nil {
			return false, fmt.Errorf("read branch chain: %w", err)
		}
	}
	return false, nil
}

// forkCountCap bounds the change rows a fork at a past Revision reads back
// to start its Record counts from its base's.
const forkCountCap = 100000

// CreateBranch forks a branch in one scoped transaction. The base's ref is
// locked FOR SHARE, so commits in flight on it land first and the fork
// point is its head (or At). An overlay is ready at once; a copy reads
// through its base (state copying) until the store.materialize job queued
// here, in the same transaction, has copied the base's rows. Errors:
// lberr.Unprocessable for a bad request, ErrNotFound for a missing base or
// Revision, ErrConflict for a taken name.
func (s *Store) CreateBranch(ctx context.Context, domainID int32, req CreateBranchRequest, q BranchJobs) (*BranchInfo, error) {
	if err := checkCreateBranch(&req); err != nil {
		return nil, err
	}
	if req.Mode == ModeCopy && q.Copy == nil {
		return nil, errors.New("create branch: copy branches need the job queue")
	}
	var out *BranchInfo
	err := s.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		base, err := scanBranch(tx.QueryRow(ctx, `SELECT `+branchColumns+` FROM refs
			WHERE domain_id = lb_domain() AND name = $1 AND state <> 'deleting' FOR SHARE`, req.From))
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return fmt.Errorf("no branch named %s to fork: %w", quoted(req.From), ErrNotFound)
			}
			return fmt.Errorf("lock base branch: %w", err)
		}
		if err := checkBranchQuotas(ctx, tx, &req); err != nil {
			return err
		}
		var taken string
		err = tx.QueryRow(ctx, `SELECT state FROM refs WHERE domain_id = lb_domain() AND name = $1`, req.Name).Scan(&taken)
		switch {
		case err == nil && taken == StateDeleting:
			return fmt.Errorf("a branch named %s is being deleted; retry once it is gone: %w", quoted(req.Name), ErrConflict)
		case err == nil:
			return fmt.Errorf("a branch named %s exists: %w", quoted(req.Name), ErrConflict)
		case !errors.Is(err, pgx.ErrNoRows):
			return fmt.Errorf("check branch name: %w", err)
		}
		sch, err := LoadSchema(ctx, tx, base.ID)
		if err != nil {
			return err
		}
		forkSeq, forkRev := base.HeadSeq, base.Head
		if req.At != "" {
			var revBranch int32
			var revSeq int64
			err := tx.QueryRow(ctx, `SELECT branch_id, seq FROM revisions WHERE domain_id = lb_domain() AND id = $1`, req.At).Scan(&revBranch, &revSeq)
			if err != nil && !errors.Is(err, pgx.ErrNoRows) {
				return fmt.Errorf("read revision: %w", err)
			}
			ok := err == nil
			if ok {
				if ok, err = revisionVisible(ctx, tx, base, base.HeadSeq, revBranch, revSeq); err != nil {
					return err
				}
			}
			if !ok {
				return fmt.Errorf("no Revision %s on branch %s: %w", quoted(req.At), quoted(req.From), ErrNotFound)
			}
			if revSeq < sch.Seq {
				return branchInvalid(lberr.Unprocessable, "at", "before_schema",
					fmt.Sprintf("cannot fork before the base's last schema change: Revision %s is older than the schema of %s.", quoted(req.At), quoted(req.From)))
			}
			at := req.At
			forkSeq, forkRev = revSeq, &at
		}
		state, progress := StateReady, `{}`
		if req.Mode == ModeCopy {
			state, progress = StateCopying, `{"phase":"records","copied":0,"read":0,"batches":0}`
		}
		info := &BranchInfo{Name: req.Name, Mode: req.Mode, State: state, Base: &base.Name, ForkRevision: forkRev, Head: forkRev,
			Progress: json.RawMessage(progress)}
		err = tx.QueryRow(ctx, `INSERT INTO refs (domain_id, name, mode, state, base_id, fork_seq, fork_revision, head, head_seq, progress)
			VALUES (lb_domain(), $1, $2, $3, $4, $5, $6, $6, $5, $7) RETURNING id, created_at`,
			req.Name, req.Mode, state, base.ID, forkSeq, forkRev, progress).Scan(&info.ID, &info.CreatedAt)
		if err != nil {
			if err = Translate(err); errors.Is(err, ErrConflict) {
				return fmt.Errorf("a branch named %s exists: %w", quoted(req.Name), err)
			}
			return fmt.Errorf("insert branch: %w", err)
		}
		if _, err := tx.Exec(ctx, `INSERT INTO schemas (domain_id, branch_id, seq, document, compiled)
			SELECT domain_id, $1, seq, document, compiled FROM schemas WHERE domain_id = lb_domain() AND branch_id = $2`,
			info.ID, base.ID); err != nil {
			return fmt.Errorf("copy schema: %w", err)
		}
		// The base's Record counts as of the fork start the branch's
		// (migrations/0014_record_counts): copied Kind by Kind, whatever
		// the number of Records; none when the base's counters cannot say
		// them (the branch's counts are then walked).
		if _, err := tx.Exec(ctx, `WITH c AS (SELECT lb_counts_at(lb_domain(), $2, $3, '', $4) AS j),
			ins AS (INSERT INTO mat_counts (domain_id, branch_id, kind, records)
				SELECT lb_domain(), $1, e.key, e.value::bigint FROM c, jsonb_each_text(c.j) e)
			UPDATE refs SET counts_from = $3 WHERE domain_id = lb_domain() AND id = $1 AND (SELECT c.j FROM c) IS NOT NULL`,
			info.ID, base.ID, forkSeq, forkCountCap); err != nil {
			return fmt.Errorf("start record counts: %w", err)
		}
		if req.Mode == ModeCopy {
			if err := q.Copy(ctx, tx, domainID, info.ID, sch.Compiled); err != nil {
				return fmt.Errorf("queue branch copy: %w", err)
			}
		}
		out = info
		return nil
	})
	if err != nil {
		if clientError(err) {
			return nil, err
		}
		return nil, fmt.Errorf("create branch %s: %w", quoted(req.Name), err)
	}
	return out, nil
}

// branchInfoSQL reads branches with their base's name and, when capN > 0,
// their own-row counts capped at capN (each reads up to capN index entries
// of the branch); otherwise NULL counts.
func branchInfoSQL(capN int64) string {
	own := `NULL::bigint, NULL::bigint`
	if capN > 0 {
		own = fmt.Sprintf(`(SELECT count(*) FROM (SELECT 1 FROM mat_records m WHERE m.domain_id = r.domain_id AND m.branch_id = r.id LIMIT %[1]d) x),
	(SELECT count(*) FROM (SELECT 1 FROM mat_links l WHERE l.domain_id = r.domain_id AND l.branch_id = r.id LIMIT %[1]d) x)`, capN)
	}
	return `SELECT r.id, r.name, r.mode, r.state, b.name, r.fork_revision, r.head, r.progress, r.created_at,
	` + own + `
	FROM refs r LEFT JOIN refs b ON b.domain_id = r.domain_id AND b.id = r.base_id
	WHERE r.domain_id = lb_domain() AND r.state <> 'deleting'`
}

func scanBranchInfos(rows pgx.Rows, capN int64, out *[]BranchInfo) error {
	var err error
	*out, err = pgx.AppendRows(*out, rows, func(row pgx.CollectableRow) (BranchInfo, error) {
		var b BranchInfo
		var records, links *int64
		if err := row.Scan(&b.ID, &b.Name, &b.Mode, &b.State, &b.Base, &b.ForkRevision, &b.Head, &b.Progress, &b.CreatedAt,
			&records, &links); err != nil {
			return b, fmt.Errorf("scan branch: %w", err)
		}
		if records != nil && links != nil {
			b.Own = &OwnRows{Records: *records, Links: *links, Capped: *records >= capN || *links >= capN}
		}
		return b, nil
	})
	return err
}

// ListBranches lists the Domain's branches (not those being deleted) by
// name after `after`, at most limit, with own-row counts capped at
// ListOwnRowsCap per branch when own is set (without, Own is nil and no
// branch's rows are read).
func (s *Store) ListBranches(ctx context.Context, domainID int32, after string, limit int, own bool) ([]BranchInfo, error) {
	if limit < 1 {
		limit = 50
	}
	var out []BranchInfo
	capN := int64(0)
	if own {
		capN = ListOwnRowsCap
	}
	sql := branchInfoSQL(capN) + ` AND r.name COLLATE "C" > $1 ORDER BY r.name COLLATE "C" LIMIT $2`
	err := s.Read(ctx, domainID, sql, []any{after, limit}, func(rows pgx.Rows) error {
		return scanBranchInfos(rows, capN, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("list branches: %w", err)
	}
	return out, nil
}

// GetBranch shows one branch with its own-row counts (capped at
// OwnRowsCap), its job progress and its newest background job.
// A missing or deleting branch is ErrNotFound.
func (s *Store) GetBranch(ctx context.Context, domainID int32, name string) (*BranchInfo, error) {
	var out []BranchInfo
	sql := branchInfoSQL(OwnRowsCap) + ` AND r.name = $1`
	err := s.Read(ctx, domainID, sql, []any{name}, func(rows pgx.Rows) error {
		return scanBranchInfos(rows, OwnRowsCap, &out)
	})
	if err != nil {
		return nil, fmt.Errorf("show branch: %w", err)
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no branch named %s: %w", quoted(name), ErrNotFound)
	}
	b := &out[0]
	var job BranchJob
	var errs []json.RawMessage
	err = s.Read(ctx, domainID, `SELECT kind, state::text, attempt, errors FROM river_job
		WHERE kind IN ($2, $3) AND args @> $1::jsonb
		ORDER BY id DESC LIMIT 1`, []any{fmt.Sprintf(`{"domain_id":%d,"branch_id":%d}`, domainID, b.ID), jobkind.Materialize, jobkind.BranchDelete},
		func(rows pgx.Rows) error {
			_, err := pgx.ForEachRow(rows, []any{&job.Kind, &job.State, &job.Attempt, &errs}, func() error {
				b.Job = &job
				return nil
			})
			return err
		})
	if err != nil {
		return nil, fmt.Errorf("show branch job: %w", err)
	}
	if b.Job != nil && len(errs) > 0 {
		// The job's own error text (SQL, internals) is for the server log
		// and the operator, never for readers of the branch.
		msg := fmt.Sprintf("attempt %d failed; the job is retried automatically", b.Job.Attempt)
		if b.Job.State == "discarded" {
			msg = "every attempt failed; the job is queued again by the next sweep"
		}
		b.Job.LastError = &msg
	}
	return b, nil
}

// DeleteBranch marks a branch deleting and queues its store.branch_delete
// job in the same transaction; reads and commits then see no such branch.
// main cannot be deleted, nor a branch other branches read through
// (overlays forked from it, copies still copying from it): ErrConflict
// naming them. A missing branch is ErrNotFound.
func (s *Store) DeleteBranch(ctx context.Context, domainID int32, name string, q BranchJobs) error {
	if q.Delete == nil {
		return errors.New("delete branch: deleting branches needs the job queue")
	}
	err := s.InDomain(ctx, domainID, func(ctx context.Context, tx pgx.Tx) error {
		b, err := LockBranch(ctx, tx, name)
		if err != nil {
			if errors.Is(err, ErrNotFound) {
				return fmt.Errorf("no branch named %s: %w", quoted(name), ErrNotFound)
			}
			return err
		}
		if b.Name == "main" {
			return fmt.Errorf("the branch main cannot be deleted: %w", ErrConflict)
		}
		rows, err := tx.Query(ctx, `SELECT name FROM refs
			WHERE domain_id = lb_domain() AND base_id = $1 AND state <> 'deleting' AND (mode = 'overlay' OR state = 'copying')
			ORDER BY name COLLATE "C" LIMIT 11`, b.ID)
		if err != nil {
			return fmt.Errorf("find dependent branches: %w", err)
		}
		deps, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return fmt.Errorf("find dependent branches: %w", err)
		}
		if len(deps) > 0 {
			names := make([]string, 0, len(deps))
			for i, d := range deps {
				if i == 10 {
					names = append(names, "…")
					break
				}
				names = append(names, quoted(d))
			}
			return fmt.Errorf("branch %s cannot be deleted: branches read through it (%s); delete them first: %w",
				quoted(name), strings.Join(names, ", "), ErrConflict)
		}
		if _, err := tx.Exec(ctx, `UPDATE refs SET state = 'deleting', progress = '{"phase":"records","deleted":0,"batches":0}'
			WHERE domain_id = lb_domain() AND id = $1`, b.ID); err != nil {
			return fmt.Errorf("mark branch deleting: %w", err)
		}
		if err := q.Delete(ctx, tx, domainID, b.ID); err != nil {
			return fmt.Errorf("queue branch deletion: %w", err)
		}
		return nil
	})
	if err != nil {
		if clientError(err) {
			return err
		}
		return fmt.Errorf("delete branch %s: %w", quoted(name), err)
	}
	return nil
}

// clientError reports whether err already says, for a client, what is
// wrong with a branch request.
func clientError(err error) bool {
	var e *lberr.Error
	return errors.As(err, &e) || errors.Is(err, ErrNotFound) || errors.Is(err, ErrConflict)
}

// checkBranchQuotas refuses a branch past the Domain's quotas: branches
// (quota.branches) and copies still copying (quota.copies_in_flight).
// Branch creations of one Domain are serialized by a transaction lock so
// two at once cannot both take the last slot.
func checkBranchQuotas(ctx context.Context, tx pgx.Tx, req *CreateBranchRequest) error {
	if req.MaxBranches <= 0 && req.MaxCopies <= 0 {
		return nil
	}
	if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(hashtext('lorebase.create_branch'), lb_domain())`); err != nil {
		return fmt.Errorf("lock branch creation: %w", err)
	}
	var branches, copying int
	err := tx.QueryRow(ctx, `SELECT count(*), count(*) FILTER (WHERE state = 'copying') FROM refs WHERE domain_id = lb_domain()`).
		Scan(&branches, &copying)
	if err != nil {
		return fmt.Errorf("count branches: %w", err)
	}
	if req.MaxBranches > 0 && branches >= req.MaxBranches {
		return lberr.Fields(lberr.TooMany, "Quota reached", lberr.Problem{Field: "quota.branches", Code: "quota_branches",
			Message: fmt.Sprintf("The Domain has %d branches, its quota (quota.branches); delete a branch first.", branches)})
	}
	if req.Mode == ModeCopy && req.MaxCopies > 0 && copying >= req.MaxCopies {
		return lberr.Fields(lberr.TooMany, "Quota reached", lberr.Problem{Field: "quota.copies_in_flight", Code: "quota_copies_in_flight",
			Message: fmt.Sprintf("The Domain has %d copy branches still copying, its quota (quota.copies_in_flight); retry once one is ready, or create an overlay.", copying)})
	}
	return nil
}
