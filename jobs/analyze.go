package jobs

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/riverqueue/river"

	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/store"
)

// AnalyzeArgs asks for the planner's statistics of a Domain's partitions
// to be taken again (store.analyze), after a commit that added many rows
// to it or at a regular Revision number (commit.Config.AnalyzeJobs).
type AnalyzeArgs struct {
	DomainID int32 `json:"domain_id"`
}

// Kind is the job kind, "store.analyze".
func (AnalyzeArgs) Kind() string { return jobkind.Analyze }

// AnalyzePeriod is how often at most a Domain's statistics are taken
// again: a job is queued once in each such period (River's unique period:
// UTC multiples of it), however many commits queue it in that period.
const AnalyzePeriod = 10 * time.Minute

// InsertOpts makes the job unique by Domain within an AnalyzePeriod.
func (AnalyzeArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true, ByPeriod: AnalyzePeriod}}
}

// AnalyzeWorker runs store.analyze.
//
// PostgreSQL estimates the rows of a Domain from the statistics of its
// partition, which autovacuum takes again only once a share of all the
// partition's rows has changed. A Domain created in a partition another
// Domain fills is then not among the statistics' values, its branch is
// estimated at a row, and a lookup by Domain, branch and key may scan the
// branch's whole range of another index for every key (the commit's reads
// and the postings trigger name the Domain as an unknown value and are
// spared; the reads and an overlay's reads are not: an overlay's read of 5
// Records of a Domain of 20,000 beside one of 50,000 took 12 to 20 ms, a
// get by key of a Domain of 50,000 beside one of 50,000 7.1 ms, growing
// with the Domain). Analyzing the Domain's partitions puts it in the
// statistics.
type AnalyzeWorker struct {
	river.WorkerDefaults[AnalyzeArgs]
	store *store.Store
}

// Timeout bounds one run.
func (w *AnalyzeWorker) Timeout(*river.Job[AnalyzeArgs]) time.Duration { return 10 * time.Minute }

// Work analyzes the Domain's partitions; a partition whose lock stays
// taken for analyzeWait is left to autovacuum.
func (w *AnalyzeWorker) Work(ctx context.Context, job *river.Job[AnalyzeArgs]) error {
	// The tables the commit and the reads look keys up in by Domain and
	// branch; the lexicon is one table for every Domain.
	tables := []string{"mat_records", "mat_links", "mat_history", "mat_link_history", "mat_search_words", "mat_lexicon"}
	return analyzeDomain(ctx, w.store, job.Args.DomainID, tables, analyzeWait, func(part string) {
		slog.Default().WarnContext(ctx, "partition statistics left to autovacuum: its lock stayed taken",
			"domain_id", job.Args.DomainID, "partition", part, "waited", analyzeWait)
	})
}

// QueueAnalyze returns the commit pipeline's AnalyzeJobs hook over client.
func QueueAnalyze(client func() *river.Client[pgx.Tx]) func(ctx context.Context, tx pgx.Tx, domainID int32) error {
	return func(ctx context.Context, tx pgx.Tx, domainID int32) error {
		if _, err := client().InsertTx(ctx, tx, AnalyzeArgs{DomainID: domainID}, nil); err != nil {
			return fmt.Errorf("queue analyze of domain %d: %w", domainID, err)
		}
		return nil
	}
}
