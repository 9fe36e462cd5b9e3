package jobs

import (
	"context"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/internal/jobkind"
)

// MergeArgs are the arguments of a merge.proposal job.
type MergeArgs struct {
	DomainID           int32   `json:"domain_id"`
	ProposalID         string  `json:"proposal_id"`
	ExpectedTargetHead *string `json:"expected_target_head,omitempty"`
	Default            string  `json:"default,omitempty"`
	Message            string  `json:"message,omitempty"`
	Author             string  `json:"author"`
	// Trace is the agent trace the merge was asked under ("" for none).
	Trace string `json:"trace,omitempty"`
}

// Kind is the job kind.
func (MergeArgs) Kind() string { return jobkind.Merge }

// InsertOpts makes the job unique per Proposal while it is pending.
func (MergeArgs) InsertOpts() river.InsertOpts { return uniqueOpts() }

// MergeWorker runs merge.proposal jobs.
type MergeWorker struct {
	river.WorkerDefaults[MergeArgs]
	engine *merge.Engine
	// AfterCompute, when set, runs inside the merge transaction after the
	// merge is written and before it commits (tests use it to stop a job
	// there).
	AfterCompute func(context.Context) error
}

// Timeout lets a large merge take the time it needs (its statements stay
// bounded by the statement timeout).
func (w *MergeWorker) Timeout(*river.Job[MergeArgs]) time.Duration { return 10 * time.Minute }

// Work merges the Proposal in one transaction.
func (w *MergeWorker) Work(ctx context.Context, job *river.Job[MergeArgs]) error {
	a := job.Args
	return w.engine.RunMergeJob(ctx, a.DomainID, a.ProposalID, merge.MergeRequest{ExpectedTargetHead: a.ExpectedTargetHead,
		Default: a.Default, Message: a.Message, Trace: a.Trace}, a.Author, w.AfterCompute)
}

// AddMergeWorker registers the merge.proposal worker over the engine.
func AddMergeWorker(workers *river.Workers, e *merge.Engine) *MergeWorker {
	w := &MergeWorker{engine: e}
	river.AddWorker(workers, w)
	return w
}

// QueueMerge returns the engine's hook that queues a Proposal's merge job
// with client in the transaction that marks the Proposal merging.
func QueueMerge(client *river.Client[pgx.Tx]) func(ctx context.Context, tx pgx.Tx, domainID int32, id string, req merge.MergeRequest, author string) error {
	return func(ctx context.Context, tx pgx.Tx, domainID int32, id string, req merge.MergeRequest, author string) error {
		args := MergeArgs{DomainID: domainID, ProposalID: id, ExpectedTargetHead: req.ExpectedTargetHead, Default: req.Default,
			Message: req.Message, Author: author, Trace: req.Trace}
		if _, err := client.InsertTx(ctx, tx, args, nil); err != nil {
			return fmt.Errorf("enqueue merge of proposal %s: %w", id, err)
		}
		return nil
	}
}
