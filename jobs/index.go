package jobs

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"sort"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/rivertype"

	"github.com/lorebase/lorebase/internal/jobkind"
	"github.com/lorebase/lorebase/schema"
	"github.com/lorebase/lorebase/store"
)

// IndexKind is the River job kind of index builds.
const IndexKind = jobkind.Index

// IndexArgs asks for the per-Attribute index of a Kind's Attribute on a
// branch. Jobs are unique by their arguments while queued or running.
type IndexArgs struct {
	DomainID  int32  `json:"domain_id" river:"unique"`
	BranchID  int32  `json:"branch_id" river:"unique"`
	KindName  string `json:"kind" river:"unique"` // the Kind (Kind is the job kind)
	Attribute string `json:"attribute" river:"unique"`
}

// Kind is the job kind, "store.index".
func (IndexArgs) Kind() string { return IndexKind }

// InsertOpts makes a build unique by its arguments among the jobs not yet
// finished (a finished build may be asked for again, and is then a no-op).
func (IndexArgs) InsertOpts() river.InsertOpts {
	return river.InsertOpts{UniqueOpts: river.UniqueOpts{
		ByArgs: true,
		ByState: []rivertype.JobState{rivertype.JobStateAvailable, rivertype.JobStatePending,
			rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled},
	}}
}

// IndexName is the deterministic name of the per-Attribute index:
// mat_records_attr_ and the first 24 hex digits of
// sha256("<domain>:<branch>:<kind>:<attribute>").
func IndexName(domainID, branchID int32, kind, attribute string) string {
	h := sha256.Sum256([]byte(fmt.Sprintf("%d:%d:%s:%s", domainID, branchID, kind, attribute)))
	return "mat_records_attr_" + hex.EncodeToString(h[:12])
}

// IndexBuildsForSchema lists the index builds a schema change needs: every
// indexed or unique Attribute of new that was neither in old (nil for
// none), in a stable order. Domain and branch are left zero.
func IndexBuildsForSchema(old, new *schema.Schema) []IndexArgs {
	var out []IndexArgs
	if new == nil {
		return nil
	}
	for name, k := range new.Kinds {
		for _, a := range k.Attributes {
			if !a.Indexed && !a.Unique {
				continue
			}
			if old != nil {
				if ok, found := old.Kinds[name]; found {
					if oa, has := ok.Attr(a.Name); has && (oa.Indexed || oa.Unique) {
						continue
					}
				}
			}
			out = append(out, IndexArgs{KindName: name, Attribute: a.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].KindName != out[j].KindName {
			return out[i].KindName < out[j].KindName
		}
		return out[i].Attribute < out[j].Attribute
	})
	return out
}

// EnqueueIndexBuilds queues, in tx, the index builds a schema change of a
// branch needs (IndexBuildsForSchema), and records them (RecordIndexes),
// not ready, so one backfill of a Kind writes every new one.
func EnqueueIndexBuilds(ctx context.Context, client *river.Client[pgx.Tx], tx pgx.Tx, domainID, branchID int32, old, new *schema.Schema) error {
	builds := IndexBuildsForSchema(old, new)
	drops := IndexDropsForSchema(old, new)
	if len(builds)+len(drops) == 0 {
		return nil
	}
	// Recorded with the change: the first build's backfill writes the
	// values of them all, and the later builds' find nothing stale.
	if err := RecordIndexes(ctx, tx, domainID, branchID, builds); err != nil {
		return err
	}
	params := make([]river.InsertManyParams, 0, len(builds)+len(drops))
	for _, b := range builds {
		b.DomainID, b.BranchID = domainID, branchID
		params = append(params, river.InsertManyParams{Args: b})
	}
	for _, d := range drops {
		d.DomainID, d.BranchID = domainID, branchID
		params = append(params, river.InsertManyParams{Args: d})
	}
	if _, err := client.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue index builds: %w", err)
	}
	return nil
}

// RecordIndexes records, in tx, the per-Attribute indexes of builds (Kind
// and Attribute; Domain and branch are the arguments) on a branch of the
// Domain, not ready, unless recorded already; a branch not live in the
// Domain records none. From its commit on, the branch's commits write
// their values into ivals, and the first backfill of their Kind (any of
// their builds) writes them all. tx may be lorebase_app's, scoped to the
// Domain (the policy of attribute_indexes holds it there), or the owner's.
func RecordIndexes(ctx context.Context, tx pgx.Tx, domainID, branchID int32, builds []IndexArgs) error {
	if len(builds) == 0 {
		return nil
	}
	kinds, attrs := make([]string, len(builds)), make([]string, len(builds))
	for i, b := range builds {
		if b.KindName == "" || b.Attribute == "" {
			return errors.New("record indexes: kind and attribute are required")
		}
		kinds[i], attrs[i] = b.KindName, b.Attribute
	}
	// The name is the trigger's (lb_index_name, the same as IndexName):
	// lorebase_app may not insert one.
	if _, err := tx.Exec(ctx, `INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute)
		SELECT $1, $2, x.kind, x.attribute
		  FROM unnest($3::text[], $4::text[]) AS x (kind, attribute)
		 WHERE EXISTS (SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 AND state <> 'deleting')
		ON CONFLICT DO NOTHING`, domainID, branchID, kinds, attrs); err != nil {
		return fmt.Errorf("record indexes of branch %d: %w", branchID, err)
	}
	return nil
}

// IndexWorker builds per-Attribute indexes.
type IndexWorker struct {
	river.WorkerDefaults[IndexArgs]
	store *store.Store
}

// indexTimeout bounds an index build. A build whose Keeper died is run
// again once it passes (River never rescues a job without a timeout).
const indexTimeout = time.Hour

// Timeout bounds a build (indexTimeout).
func (w *IndexWorker) Timeout(*river.Job[IndexArgs]) time.Duration { return indexTimeout }

// Work builds the index. It is idempotent: an existing valid index is
// kept; an invalid one left by an interrupted build is dropped and built
// again.
func (w *IndexWorker) Work(ctx context.Context, job *river.Job[IndexArgs]) error {
	return BuildIndex(ctx, w.store, job.Args)
}

// BuildIndex creates the index of a, concurrently, as the owner.
func BuildIndex(ctx context.Context, s *store.Store, a IndexArgs) error {
	return buildIndex(ctx, s, a, buildHooks{})
}

// buildHooks are where the tests park a build; nil ones do nothing.
type buildHooks struct {
	// pause runs after the first backfill, before the index is created,
	// outside any transaction.
	pause func(context.Context) error
	// batch runs in each backfill batch's transaction, after it read the
	// recorded Attributes and before it writes.
	batch func(context.Context) error
}

// buildIndex is BuildIndex with the tests' hooks.
func buildIndex(ctx context.Context, s *store.Store, a IndexArgs, hooks buildHooks) error {
	if a.KindName == "" || a.Attribute == "" {
		return errors.New("build index: kind and attribute are required")
	}
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("build index: %w", err)
	}
	defer conn.Release()
	var partition string
	err = conn.QueryRow(ctx, `SELECT c.relname::text FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		WHERE i.inhparent = 'mat_records'::regclass
		  AND satisfies_hash_partition('mat_records'::regclass,
		        substring(pg_get_expr(c.relpartbound, c.oid) from 'modulus (\d+)')::int,
		        substring(pg_get_expr(c.relpartbound, c.oid) from 'remainder (\d+)')::int, $1::int)`, a.DomainID).Scan(&partition)
	if err != nil {
		return fmt.Errorf("build index: find the partition of domain %d: %w", a.DomainID, err)
	}
	name := IndexName(a.DomainID, a.BranchID, a.KindName, a.Attribute)
	// A late build for a branch that is gone or being deleted does
	// nothing: its index would outlive the branch.
	if live, err := branchLive(ctx, conn, a.DomainID, a.BranchID); err != nil || !live {
		return err
	}
	release, err := sessionLock(ctx, conn, lockIndexName, unlockIndexName, name)
	if err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	defer release()
	// Recorded before it is built, so an interrupted build is dropped with
	// its branch too; from here on the branch's commits write the
	// Attribute's value into ivals.
	if _, err := conn.Exec(ctx, `INSERT INTO attribute_indexes (domain_id, branch_id, kind, attribute, name)
		VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`, a.DomainID, a.BranchID, a.KindName, a.Attribute, name); err != nil {
		return fmt.Errorf("record index %s: %w", name, err)
	}
	var valid *bool
	var ready bool
	err = conn.QueryRow(ctx, `SELECT x.indisvalid, coalesce((SELECT ready FROM attribute_indexes
			WHERE domain_id = $2 AND branch_id = $3 AND kind = $4 AND attribute = $5), false)
		FROM pg_class c JOIN pg_index x ON x.indexrelid = c.oid
		WHERE c.relname = $1 AND c.relnamespace = current_schema()::regnamespace`,
		name, a.DomainID, a.BranchID, a.KindName, a.Attribute).Scan(&valid, &ready)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	if valid != nil && *valid && ready {
		return nil
	}
	// Index builds outlast the pool's statement timeout.
	if _, err := conn.Exec(ctx, `SET statement_timeout = 0`); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `RESET statement_timeout`) //nolint:errcheck // the session setting goes with the connection
	// A write that read the branch's recorded indexes before the record
	// above (a commit holding the branch lock, a copy batch) has ended
	// once these locks are granted; every later one writes the value.
	if err := waitWriters(ctx, conn, a.DomainID, a.BranchID); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	if err := backfillIvals(ctx, conn, a, hooks.batch); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	if hooks.pause != nil {
		if err := hooks.pause(ctx); err != nil {
			return fmt.Errorf("build index %s: %w", name, err)
		}
	}
	if valid != nil && !*valid {
		if err := dropIndex(ctx, conn, name); err != nil {
			return fmt.Errorf("drop invalid index %s: %w", name, err)
		}
	}
	// (value, key): an equality on the value is a range of the index in key
	// order, so a keyset page of a common value reads only its page, and
	// the unique check uses the leading column. On ivals, not values: an
	// update of other Attributes changes no column the index reads.
	stmt := fmt.Sprintf(`CREATE INDEX CONCURRENTLY IF NOT EXISTS %s ON %s ((ivals ->> %s), key) WHERE domain_id = %s AND branch_id = %s AND kind = %s`,
		pgx.Identifier{name}.Sanitize(), pgx.Identifier{partition}.Sanitize(), store.QuoteLiteral(a.Attribute),
		strconv.Itoa(int(a.DomainID)), strconv.Itoa(int(a.BranchID)), store.QuoteLiteral(a.KindName))
	if err := indexDDL(ctx, conn, stmt); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	// A second pass finds nothing unless a writer bypassed the locks above;
	// reads by the Attribute use the index from here on.
	if err := backfillIvals(ctx, conn, a, hooks.batch); err != nil {
		return fmt.Errorf("build index %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, `UPDATE attribute_indexes SET ready = true
		WHERE domain_id = $1 AND branch_id = $2 AND kind = $3 AND attribute = $4`, a.DomainID, a.BranchID, a.KindName, a.Attribute); err != nil {
		return fmt.Errorf("mark index %s ready: %w", name, err)
	}
	// The branch's deletion may have begun during the build, its delete
	// job finding no index yet: drop it then.
	if live, err := branchLive(ctx, conn, a.DomainID, a.BranchID); err != nil || live {
		return err
	}
	if err := dropIndex(ctx, conn, name); err != nil {
		return fmt.Errorf("drop index %s of a deleted branch: %w", name, err)
	}
	if _, err := conn.Exec(ctx, `DELETE FROM attribute_indexes WHERE domain_id = $1 AND branch_id = $2 AND kind = $3 AND attribute = $4`,
		a.DomainID, a.BranchID, a.KindName, a.Attribute); err != nil {
		return fmt.Errorf("forget index %s: %w", name, err)
	}
	return nil
}

// ivalsLockSQL is the transaction-level advisory lock a copy batch holds
// shared while it writes a branch's Records (with their ivals) and
// waitWriters takes exclusively: the lock of Domain %s, branch %s.
const ivalsLockSQL = `hashtextextended('lorebase.ivals:' || %s || ':' || %s, 0)`

// waitWriters waits for the writes of a branch's Records that may have
// read its recorded indexes before the caller changed them: the commits
// (they hold the branch's ref row lock from before they read them to their
// end), the copy batches and the backfill batches (ivalsLockSQL). One lock
// at a time, each in a transaction of its own, so it cannot deadlock with
// them.
func waitWriters(ctx context.Context, conn *pgxpool.Conn, domainID, branchID int32) error {
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 FOR UPDATE`, domainID, branchID)
		return err
	}); err != nil {
		return fmt.Errorf("wait for the commits of branch %d: %w", branchID, err)
	}
	lock := fmt.Sprintf(ivalsLockSQL, strconv.Itoa(int(domainID)), strconv.Itoa(int(branchID)))
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		_, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock(`+lock+`)`)
		return err
	}); err != nil {
		return fmt.Errorf("wait for the copy of branch %d: %w", branchID, err)
	}
	return nil
}

// backfillBatch is the number of Records backfillIvals reads per
// transaction.
const backfillBatch = 5000

// backfillIvals sets, in batches of the Kind's Records in key order, the
// values of every Attribute of the Kind whose index the branch records
// (any state, a's among them) in ivals wherever one is not the one values
// holds (as ->> reads them both): one pass writes every index recorded
// before it, so k indexes of a Kind recorded together rewrite each Record
// once. Each batch is a transaction holding the branch's ivalsLockSQL
// shared, taken before it reads the recorded Attributes, so a drop that
// forgot one and then waited for the lock (waitWriters) has no batch
// still writing it. batch, when not nil, runs between the read and the
// write.
func backfillIvals(ctx context.Context, conn *pgxpool.Conn, a IndexArgs, batch func(context.Context) error) error {
	lock := fmt.Sprintf(ivalsLockSQL, strconv.Itoa(int(a.DomainID)), strconv.Itoa(int(a.BranchID)))
	stmt := ivalsBatchSQL(`ivals = nullif((coalesce(m.ivals, '{}') - $4::text[])
		       || coalesce((SELECT jsonb_object_agg(x, m."values" -> x) FROM unnest($4::text[]) x WHERE m."values" ? x), '{}'), '{}')`,
		`EXISTS (SELECT 1 FROM unnest($4::text[]) x WHERE (m.ivals ->> x) IS DISTINCT FROM (m."values" ->> x))`)
	return keyBatches(func(after string) (last *string, err error) {
		err = pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			if _, err := tx.Exec(ctx, `SELECT pg_advisory_xact_lock_shared(`+lock+`)`); err != nil {
				return fmt.Errorf("lock: %w", err)
			}
			var attrs []string
			if err := tx.QueryRow(ctx, `SELECT coalesce(array_agg(attribute::text ORDER BY attribute), '{}')
				FROM attribute_indexes WHERE domain_id = $1 AND branch_id = $2 AND kind = $3`,
				a.DomainID, a.BranchID, a.KindName).Scan(&attrs); err != nil {
				return fmt.Errorf("read the recorded indexes: %w", err)
			}
			if len(attrs) == 0 {
				// Forgotten (the branch or Domain is being deleted):
				// nothing to write.
				return nil
			}
			if batch != nil {
				if err := batch(ctx); err != nil {
					return err
				}
			}
			return tx.QueryRow(ctx, stmt, a.DomainID, a.BranchID, a.KindName, attrs, after, backfillBatch).Scan(&last)
		})
		if err != nil {
			return nil, fmt.Errorf("backfill ivals of %s after %q: %w", a.KindName, after, err)
		}
		return last, nil
	})
}

// clearIvals removes the Attribute from the ivals of the Kind's Records
// (NULL once none is left), in batches of the Kind's Records in key order,
// one statement a batch.
func clearIvals(ctx context.Context, conn *pgxpool.Conn, a IndexDropArgs) error {
	stmt := ivalsBatchSQL(`ivals = nullif(m.ivals - $4::text, '{}')`, `m.ivals ? $4`)
	return keyBatches(func(after string) (last *string, err error) {
		if err := conn.QueryRow(ctx, stmt, a.DomainID, a.BranchID, a.KindName, a.Attribute, after, backfillBatch).Scan(&last); err != nil {
			return nil, fmt.Errorf("clear ivals of %s.%s after %q: %w", a.KindName, a.Attribute, after, err)
		}
		return last, nil
	})
}

// ivalsBatchSQL is the statement of one batch of an ivals rewrite: the
// branch's next backfillBatch Records of the Kind in key order after $5
// ($1 Domain, $2 branch, $3 Kind, $6 the batch size), those of them where
// stale holds updated by set (both read the Attribute or Attributes as
// $4). It answers the batch's last key, NULL when none is left.
func ivalsBatchSQL(set, stale string) string {
	return `WITH b AS (
			SELECT m.key FROM mat_records m
			 WHERE m.domain_id = $1 AND m.branch_id = $2 AND m.kind = $3 AND m.key > $5
			 ORDER BY m.key LIMIT $6),
		u AS (
			UPDATE mat_records m SET ` + set + `
			  FROM b
			 WHERE m.domain_id = $1 AND m.branch_id = $2 AND m.key = b.key AND ` + stale + `
			RETURNING 1)
		SELECT max(b.key) FROM b`
}

// keyBatches runs batch with the last key of the batch before it ("" for
// the first) until a batch answers none.
func keyBatches(batch func(after string) (*string, error)) error {
	after := ""
	for {
		last, err := batch(after)
		if err != nil || last == nil {
			return err
		}
		after = *last
	}
}

// IndexDropArgs asks to drop the per-Attribute index of a Kind's Attribute
// on a branch: the Attribute stopped being indexed, or its Kind went.
type IndexDropArgs struct {
	DomainID  int32  `json:"domain_id" river:"unique"`
	BranchID  int32  `json:"branch_id" river:"unique"`
	KindName  string `json:"kind" river:"unique"`
	Attribute string `json:"attribute" river:"unique"`
}

// Kind is the job kind, "store.index_drop".
func (IndexDropArgs) Kind() string { return jobkind.IndexDrop }

// InsertOpts makes a drop unique by its arguments among unfinished jobs.
func (IndexDropArgs) InsertOpts() river.InsertOpts { return IndexArgs{}.InsertOpts() }

// IndexDropWorker drops per-Attribute indexes no schema wants any more.
type IndexDropWorker struct {
	river.WorkerDefaults[IndexDropArgs]
	store *store.Store
}

// Timeout bounds a drop (indexTimeout).
func (w *IndexDropWorker) Timeout(*river.Job[IndexDropArgs]) time.Duration { return indexTimeout }

// Work drops the index.
func (w *IndexDropWorker) Work(ctx context.Context, job *river.Job[IndexDropArgs]) error {
	return DropIndex(ctx, w.store, job.Args)
}

// DropIndex drops the index of a, concurrently, and forgets its record,
// unless the branch's schema indexes the Attribute again (a later change
// put it back).
func DropIndex(ctx context.Context, s *store.Store, a IndexDropArgs) error {
	var compiled []byte
	err := s.Pool.QueryRow(ctx, `SELECT compiled FROM schemas WHERE domain_id = $1 AND branch_id = $2`, a.DomainID, a.BranchID).Scan(&compiled)
	if err != nil && !errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("drop index: read schema: %w", err)
	}
	if len(compiled) > 0 {
		var sch schema.Schema
		if err := json.Unmarshal(compiled, &sch); err != nil {
			return fmt.Errorf("drop index: decode schema: %w", err)
		}
		if k, ok := sch.Kinds[a.KindName]; ok {
			if at, ok := k.Attr(a.Attribute); ok && (at.Indexed || at.Unique) {
				return nil
			}
		}
	}
	name := IndexName(a.DomainID, a.BranchID, a.KindName, a.Attribute)
	conn, err := s.Pool.Acquire(ctx)
	if err != nil {
		return fmt.Errorf("drop index %s: %w", name, err)
	}
	defer conn.Release()
	release, err := sessionLock(ctx, conn, lockIndexName, unlockIndexName, name)
	if err != nil {
		return fmt.Errorf("drop index %s: %w", name, err)
	}
	defer release()
	// Forgotten first: reads by the Attribute go back to values, commits
	// stop writing it into ivals; then the index goes, then its values.
	if _, err := conn.Exec(ctx, `DELETE FROM attribute_indexes WHERE domain_id = $1 AND branch_id = $2 AND kind = $3 AND attribute = $4`,
		a.DomainID, a.BranchID, a.KindName, a.Attribute); err != nil {
		return fmt.Errorf("forget index %s: %w", name, err)
	}
	if _, err := conn.Exec(ctx, `SET statement_timeout = 0`); err != nil {
		return fmt.Errorf("drop index %s: %w", name, err)
	}
	defer conn.Exec(context.WithoutCancel(ctx), `RESET statement_timeout`) //nolint:errcheck // the session setting goes with the connection
	// A commit, copy batch or backfill batch of another index of the
	// branch that read the recorded set before it was forgotten may still
	// write its value; once these end, none does, and clearIvals below
	// leaves none.
	if err := waitWriters(ctx, conn, a.DomainID, a.BranchID); err != nil {
		return fmt.Errorf("drop index %s: %w", name, err)
	}
	if err := dropIndex(ctx, conn, name); err != nil {
		return fmt.Errorf("drop index %s: %w", name, err)
	}
	return clearIvals(ctx, conn, a)
}

// IndexDropsForSchema lists the index drops a schema change needs: every
// indexed or unique Attribute of old that new does not index (its Kind
// gone, or the flags off). Domain and branch are left zero.
func IndexDropsForSchema(old, new *schema.Schema) []IndexDropArgs {
	var out []IndexDropArgs
	if old == nil {
		return nil
	}
	for name, k := range old.Kinds {
		for _, a := range k.Attributes {
			if !a.Indexed && !a.Unique {
				continue
			}
			if new != nil {
				if nk, found := new.Kinds[name]; found {
					if na, has := nk.Attr(a.Name); has && (na.Indexed || na.Unique) {
						continue
					}
				}
			}
			out = append(out, IndexDropArgs{KindName: name, Attribute: a.Name})
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].KindName != out[j].KindName {
			return out[i].KindName < out[j].KindName
		}
		return out[i].Attribute < out[j].Attribute
	})
	return out
}

// branchLive reports whether a branch exists and is not being deleted.
func branchLive(ctx context.Context, conn *pgxpool.Conn, domainID, branchID int32) (bool, error) {
	var live bool
	err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT 1 FROM refs WHERE domain_id = $1 AND id = $2 AND state <> 'deleting')`,
		domainID, branchID).Scan(&live)
	if err != nil {
		return false, fmt.Errorf("check branch %d of domain %d: %w", branchID, domainID, err)
	}
	return live, nil
}

// NewWorkers registers Lorebase's workers with the default Config.
func NewWorkers(s *store.Store) *river.Workers { return NewWorkersWith(s, DefaultConfig()) }

// NewWorkersWith registers Lorebase's workers: index builds, branch copies
// and branch deletions, Domain deletions, statistics after large commits and
// embeddings.
func NewWorkersWith(s *store.Store, cfg Config) *river.Workers {
	w := river.NewWorkers()
	river.AddWorker(w, &IndexWorker{store: s})
	river.AddWorker(w, &IndexDropWorker{store: s})
	river.AddWorker(w, &MaterializeWorker{copier: &Copier{Store: s, Config: cfg}})
	river.AddWorker(w, &BranchDeleteWorker{deleter: &Deleter{Store: s, Config: cfg}})
	river.AddWorker(w, &DomainDeleteWorker{deleter: &DomainDeleter{Store: s}})
	river.AddWorker(w, &AnalyzeWorker{store: s})
	AddEmbedWorkers(w, s, cfg.Embedders)
	return w
}

// NewClient builds a River client over the pool, logging to log (nil:
// slog's default logger). With workers nil the client only inserts; queues
// nil means the default queue with 2 workers.
func NewClient(pool *pgxpool.Pool, workers *river.Workers, queues map[string]river.QueueConfig, log *slog.Logger) (*river.Client[pgx.Tx], error) {
	return NewClientWith(pool, workers, queues, Config{}, log)
}

// NewClientWith is NewClient with the job configuration: jc.Workers jobs
// at once on the default queue (when queues is nil), and River's rescuer
// set to jc.RescueStuckAfter, so a job whose Keeper was killed runs again
// after that long instead of River's hour. A client that works jobs
// cancels those of a Domain deleted or being deleted (domainGate) instead
// of running or retrying them.
func NewClientWith(pool *pgxpool.Pool, workers *river.Workers, queues map[string]river.QueueConfig, jc Config, log *slog.Logger) (*river.Client[pgx.Tx], error) {
	if log == nil {
		log = slog.Default()
	}
	cfg := &river.Config{Workers: workers, Logger: log, RescueStuckJobsAfter: jc.RescueStuckAfter}
	if workers != nil {
		// Jobs of a Domain deleted, or being deleted, end cancelled.
		cfg.Middleware = []rivertype.Middleware{&domainGate{pool: pool, log: log}}
	}
	if jc.RescueStuckAfter > 0 {
		// Every Lorebase worker sets its own timeout; River requires the
		// rescue delay to exceed the client's default one.
		cfg.JobTimeout = -1
	}
	if jc.Tune != nil {
		jc.Tune(cfg)
	}
	if jc.Workers > 0 && queues == nil && workers != nil {
		queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: jc.Workers}}
	}
	if workers != nil {
		if queues == nil {
			queues = map[string]river.QueueConfig{river.QueueDefault: {MaxWorkers: 2}}
		}
		cfg.Queues = queues
	}
	c, err := river.NewClient(riverpgxv5.New(pool), cfg)
	if err != nil {
		return nil, fmt.Errorf("create River client: %w", err)
	}
	return c, nil
}

// EnqueueKindIndexes queues, in the caller's transaction, the index builds
// of the given Attributes of one Kind on a branch (an overlay that grew
// past the overlay index threshold), and records them (RecordIndexes), not
// ready, so the first build's backfill writes the values of them all.
func EnqueueKindIndexes(ctx context.Context, client *river.Client[pgx.Tx], tx pgx.Tx, domainID, branchID int32, kind string, attributes []string) error {
	builds := make([]IndexArgs, len(attributes))
	params := make([]river.InsertManyParams, len(attributes))
	for i, a := range attributes {
		builds[i] = IndexArgs{DomainID: domainID, BranchID: branchID, KindName: kind, Attribute: a}
		params[i] = river.InsertManyParams{Args: builds[i]}
	}
	if err := RecordIndexes(ctx, tx, domainID, branchID, builds); err != nil {
		return err
	}
	if _, err := client.InsertManyTx(ctx, tx, params); err != nil {
		return fmt.Errorf("enqueue index builds of %s: %w", kind, err)
	}
	return nil
}
