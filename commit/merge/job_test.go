package merge_test

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"
	"github.com/stretchr/testify/require"

	"github.com/lorebase/lorebase/commit"
	"github.com/lorebase/lorebase/commit/merge"
	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/jobs"
)

// A merge past the job threshold runs as a job. A job killed inside its
// transaction leaves nothing behind; the retry merges once.
func TestBigMergeJobSurvivesAKill(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.commit(t, "main", put("Supplier", "S-0", `{"name": "Zero"}`))
	b.branch(t, "agent/big", "main", "overlay")
	var changes []commit.Change
	for i := range 300 {
		changes = append(changes, put("Supplier", fmt.Sprintf("S-%04d", i+1), fmt.Sprintf(`{"name": "n%d", "vat": "V%d"}`, i, i)))
	}
	b.commit(t, "agent/big", changes...)

	client, err := jobs.NewClient(b.store.Pool, nil, nil, nil)
	require.NoError(t, err)
	var queued []jobs.MergeArgs
	enqueue := jobs.QueueMerge(client)
	e := merge.NewWith(b.store, b.p, merge.Config{JobThreshold: 100,
		Enqueue: func(ctx context.Context, tx pgx.Tx, domainID int32, id string, req merge.MergeRequest, author string) error {
			queued = append(queued, jobs.MergeArgs{DomainID: domainID, ProposalID: id, Author: author})
			return enqueue(ctx, tx, domainID, id, req, author)
		}})
	p, err := e.Open(b.ctx, b.domain, &merge.OpenRequest{Title: "big", Source: "agent/big", Target: "main"}, "scout")
	require.NoError(t, err)
	require.True(t, p.Mergeable)
	mainHead := b.head(t, "main")

	res, err := e.MergeProposal(b.ctx, b.domain, p.ID, &merge.MergeRequest{}, "reviewer")
	require.NoError(t, err)
	require.True(t, res.Queued)
	require.Len(t, queued, 1)
	var jobsQueued int
	require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT count(*) FROM river_job WHERE kind = $1`, jobkind.Merge).Scan(&jobsQueued))
	require.Equal(t, 1, jobsQueued, "the job is queued with the state change")
	shown, _, err := e.Show(b.ctx, b.domain, p.ID)
	require.NoError(t, err)
	require.Equal(t, merge.StateMerging, shown.State)
	_, err = e.MergeProposal(b.ctx, b.domain, p.ID, &merge.MergeRequest{}, "reviewer")
	require.Error(t, err, "a merging Proposal is not merged twice")

	workers := river.NewWorkers()
	w := jobs.AddMergeWorker(workers, merge.New(b.store, b.p))
	job := &river.Job[jobs.MergeArgs]{Args: queued[0]}
	revisions := func() int {
		var n int
		require.NoError(t, b.store.Pool.QueryRow(b.ctx, `SELECT count(*) FROM revisions WHERE domain_id = $1`, b.domain).Scan(&n))
		return n
	}
	before := revisions()

	// Killed after the merge is written, before it commits.
	w.AfterCompute = func(context.Context) error { return context.Canceled }
	err = w.Work(b.ctx, job)
	require.True(t, errors.Is(err, context.Canceled), "got %v", err)
	require.Equal(t, mainHead, b.head(t, "main"))
	require.Equal(t, before, revisions())
	require.Nil(t, b.values(t, "main", "S-0001"))
	shown, _, err = e.Show(b.ctx, b.domain, p.ID)
	require.NoError(t, err)
	require.Equal(t, merge.StateMerging, shown.State)

	// The retry merges, once.
	w.AfterCompute = nil
	require.NoError(t, w.Work(b.ctx, job))
	require.NoError(t, w.Work(b.ctx, job))
	require.Equal(t, before+1, revisions())
	require.Equal(t, "n299", b.values(t, "main", "S-0300")["name"])
	shown, _, err = e.Show(b.ctx, b.domain, p.ID)
	require.NoError(t, err)
	require.Equal(t, merge.StateMerged, shown.State)
	require.Contains(t, string(shown.Progress), `"phase": "done"`)
}

// A merge job that finds a conflict the Proposal did not have puts the
// Proposal back to open and says why.
func TestMergeJobReportsNewConflicts(t *testing.T) {
	t.Parallel()
	b := setup(t)
	b.commit(t, "main", put("Supplier", "S-0", `{"name": "Zero", "country": "DE"}`))
	b.branch(t, "agent/a", "main", "overlay")
	b.commit(t, "agent/a", patch("S-0", `{"country": "FR"}`), put("Supplier", "S-1", `{"name": "One"}`))
	client, err := jobs.NewClient(b.store.Pool, nil, nil, nil)
	require.NoError(t, err)
	var args []jobs.MergeArgs
	enqueue := jobs.QueueMerge(client)
	e := merge.NewWith(b.store, b.p, merge.Config{JobThreshold: 1,
		Enqueue: func(ctx context.Context, tx pgx.Tx, domainID int32, id string, req merge.MergeRequest, author string) error {
			args = append(args, jobs.MergeArgs{DomainID: domainID, ProposalID: id, Author: author})
			return enqueue(ctx, tx, domainID, id, req, author)
		}})
	p, err := e.Open(b.ctx, b.domain, &merge.OpenRequest{Title: "t", Source: "agent/a", Target: "main"}, "scout")
	require.NoError(t, err)
	res, err := e.MergeProposal(b.ctx, b.domain, p.ID, &merge.MergeRequest{}, "reviewer")
	require.NoError(t, err)
	require.True(t, res.Queued)
	b.commit(t, "main", patch("S-0", `{"country": "NL"}`))
	workers := river.NewWorkers()
	w := jobs.AddMergeWorker(workers, merge.New(b.store, b.p))
	require.NoError(t, w.Work(b.ctx, &river.Job[jobs.MergeArgs]{Args: args[0]}))
	shown, _, err := e.Show(b.ctx, b.domain, p.ID)
	require.NoError(t, err)
	require.Equal(t, merge.StateOpen, shown.State)
	require.Contains(t, string(shown.Progress), `"phase": "failed"`)
	require.Equal(t, 1, shown.Unresolved)
}
