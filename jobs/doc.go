// Package jobs holds Lorebase's River workers.
//
// store.index builds the per-Attribute partial indexes of a branch
// concurrently:
//
//	CREATE INDEX CONCURRENTLY mat_records_attr_<h> ON mat_records_p<N> ((ivals ->> 'attr'), key)
//	    WHERE domain_id = D AND branch_id = B AND kind = 'K'
//
// where mat_records_p<N> is the partition holding Domain D and <h> is the
// first 24 hex digits of sha256("D:B:K:attr") (IndexName). ivals holds a
// Record's values of the Attributes its branch has recorded indexes of
// (attribute_indexes), and only those, so an update of other Attributes
// leaves every indexed column as it was (a HOT update). A build records
// the index (from then on the branch's commits and copy batches write the
// Attribute into ivals), waits for the writes that read the record before
// it (the branch's ref lock, the copy's ivals lock), backfills ivals,
// builds the index, checks the backfill again and marks the index ready;
// reads compare the ivals form only then (lb_attr_expr), the values form
// before. A drop forgets the index first, then drops it and clears the
// Attribute from ivals. One job at a time builds or drops a given index;
// the CREATE and DROP INDEX CONCURRENTLY statements of every Domain run
// one at a time (indexDDL), and only they: the rest of a build, its waits
// and backfills, runs beside other Domains' builds. Statements that should use such an index name the
// Domain, branch, Kind and Attribute as literals (the read functions of
// migrations/functions/ do).
//
// store.materialize (Copier) copies a copy branch's base rows: the
// effective Records and Links of the base chain as of the fork (a row
// changed on the base after the fork is rebuilt from its history by
// lb_record_as_of; absent ones are skipped; a key an upper level has a say
// on, by lb_record_say / lb_link_say, the rule the reads apply, is left to
// that level) and the chain's
// history rows up to each level's cut. store.branch_delete (Deleter)
// removes a branch marked deleting: its rows, its word lexicon, its
// idempotency keys, its per-Attribute indexes, then its schema and ref.
//
// Both walk each table along its primary key in batches. A batch is one
// transaction that locks the branch's ref (FOR UPDATE, the lock commits
// take), writes its rows (copies with ON CONFLICT DO NOTHING, so rows the
// copy committed itself win) and stores its progress (phase, keyset cursor,
// rows, planner estimate of the total) in refs.progress, so a stopped job
// resumes after its last batch and handles every row once. Batch sizes
// adapt to the time a batch holds the lock: jobs.batch_target (200ms),
// and jobs.batch_contended (50ms) once a commit waited for a batch
// (pg_blocking_pids). Jobs are queued by Queue in the transaction of the
// branch change that needs them.
//
// store.domain_delete (DomainDeleter) removes a Domain marked deleting
// (store.DeleteDomain): its per-Attribute and HNSW indexes, then its rows
// in every table that has a domain_id column (DomainTables reads them from
// the catalog) in batches of their own transactions, and last, in one
// transaction holding the Domain's row, what writes in flight left, its
// Revision-number sequence and the Domain. A stopped run resumes with what
// is left.
//
// Every job whose arguments name a domain_id passes through domainGate,
// River worker middleware installed by NewClientWith: a job whose Domain
// is deleted or being deleted ends cancelled (river.JobCancel, never
// retried, ErrDomainDeleted as its reason) without running, and a job
// that fails while its Domain is being deleted is cancelled rather than
// retried. The sweep leaves the branches of a Domain being deleted alone.
//
// store.analyze (AnalyzeWorker) runs ANALYZE on the partitions holding a
// Domain's rows of the tables read by Domain, branch and key, queued by a
// commit that creates 1,000 Records and Links or more, or creates some with
// a Revision number that is a multiple of 100 (commit.Config.AnalyzeJobs),
// at most once a Domain in each AnalyzePeriod:
// until autovacuum's share of a partition's rows has changed, a Domain the
// statistics do not know is estimated at a row, and a lookup by key may
// scan its branch instead. A copy analyzes what it copied the same way.
//
// Warmer is not a River job: Keeper runs it beside the sweeper, at start and
// every jobs.keep_warm_interval. It asks pg_prewarm for the primary keys of
// mat_records, objects and mat_history (every partition, within a quarter of
// shared_buffers), which a commit writes a leaf of per change at keys spread
// over the whole index, so that reads of other pages do not evict them.
//
// semantic.embed and semantic.reembed (Embedder) write the vectors of a
// commit's Records and of a Kind whose embedding changed; a re-embedding
// keeps its progress, cursor included, per Kind in
// refs.progress.embedding.<Kind>. semantic.index builds a spec's HNSW
// index where pgvector is installed.
package jobs
