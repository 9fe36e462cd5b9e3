package perf

import (
	"context"
	"fmt"
	"io"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// The staged replica path (Replicate as superuser): the base rows are
// picked out of main once, into unlogged staging tables, and the secondary
// indexes of the copied tables are dropped while the replicas are copied
// and built again at the end. Before it, every replica scanned all of main
// to find the base's rows and inserted into indexes larger than memory,
// and each replica took longer than the one before
// (docs/perf/load-10m-partial.txt).
const (
	// stagePrefix names the staging table of a copied table.
	stagePrefix = "perf_stage_"
	// droppedIndexes holds the definitions of the dropped indexes until
	// they are built again, so a run killed in between resumes.
	droppedIndexes = "perf_dropped_indexes"
)

// stagedTable is a table a replica copies: its key column (the one that
// tells a base row) and the order its staging table is written in (the
// primary key's, so a replica inserts into its primary key in order).
type stagedTable struct {
	name, key, order string
}

func stagedTables() []stagedTable {
	return []stagedTable{
		{"mat_records", "key", "key"},
		{"mat_links", "from_key", "from_key, relation, to_key"},
		{"mat_history", "key", "key, seq"},
		{"mat_link_history", "from_key", "from_key, relation, to_key, seq"},
		{"mat_search_words", "key", "key, word"},
	}
}

// stage writes the staging tables, in one transaction, unless an earlier
// run did. The staging tables are unlogged, so a server that crashed (or
// was killed) since that run left them empty: they are then dropped and
// written again, rather than read as a base without rows.
func stage(ctx context.Context, conn *pgxpool.Conn, x replicaSQL, domainID, branchID int32) error {
	tables := stagedTables()
	var done bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, stagePrefix+tables[len(tables)-1].name).Scan(&done); err != nil {
		return fmt.Errorf("stage base rows: %w", err)
	}
	if done {
		var rows bool
		if err := conn.QueryRow(ctx, `SELECT EXISTS (SELECT FROM `+stagePrefix+tables[0].name+`)`).Scan(&rows); err != nil {
			return fmt.Errorf("stage base rows: %w", err)
		}
		if rows {
			return nil
		}
		if err := unstage(ctx, conn); err != nil {
			return fmt.Errorf("stage base rows again: %w", err)
		}
	}
	return pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL statement_timeout = 0`); err != nil {
			return err
		}
		for _, t := range tables {
			stmt := fmt.Sprintf(`CREATE UNLOGGED TABLE %s%s AS SELECT * FROM %s WHERE domain_id = %d AND branch_id = %d AND %s ORDER BY %s`,
				stagePrefix, t.name, t.name, domainID, branchID, x.isBase(t.key), t.order)
			if _, err := tx.Exec(ctx, stmt); err != nil {
				return fmt.Errorf("stage base rows of %s: %w", t.name, err)
			}
		}
		return nil
	})
}

// unstage drops the staging tables.
func unstage(ctx context.Context, conn *pgxpool.Conn) error {
	for _, t := range stagedTables() {
		if _, err := conn.Exec(ctx, `DROP TABLE IF EXISTS `+stagePrefix+t.name); err != nil {
			return fmt.Errorf("drop staging table of %s: %w", t.name, err)
		}
	}
	return nil
}

// dropIndexes drops the indexes of the copied tables that are neither
// primary keys nor unique, and the per-Attribute indexes (partial indexes
// of a partition of mat_records, jobs.IndexName), keeping their
// definitions in droppedIndexes, in one transaction; it answers how many
// it dropped. The per-Attribute ones stay recorded and ready in
// attribute_indexes: no read runs until restoreIndexes built them again.
func dropIndexes(ctx context.Context, conn *pgxpool.Conn) (int, error) {
	names := make([]string, 0, len(stagedTables()))
	for _, t := range stagedTables() {
		names = append(names, t.name)
	}
	var n int
	err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `CREATE TABLE IF NOT EXISTS `+droppedIndexes+` (name text PRIMARY KEY, def text NOT NULL)`); err != nil {
			return err
		}
		// A partitioned index builds its partitions' indexes with no
		// storage parameters; those set on a partition's index (the GIN
		// indexes' pending-list bound, migration 0025) are set again
		// after the builds (restoreIndexes runs the ALTERs last).
		if _, err := tx.Exec(ctx, `INSERT INTO `+droppedIndexes+` (name, def)
			SELECT c.oid::regclass::text,
			       format('ALTER INDEX %s SET (%s)', c.oid::regclass,
			              (SELECT string_agg(format('%s = %L', split_part(o, '=', 1), substr(o, strpos(o, '=') + 1)), ', ')
			                 FROM unnest(c.reloptions) o))
			  FROM pg_index i
			  JOIN pg_inherits h ON h.inhparent = i.indexrelid
			  JOIN pg_class c ON c.oid = h.inhrelid
			 WHERE i.indrelid = ANY (SELECT to_regclass(t) FROM unnest($1::text[]) t)
			   AND NOT i.indisprimary AND NOT i.indisunique
			   AND c.reloptions IS NOT NULL
			ON CONFLICT (name) DO NOTHING`, names); err != nil {
			return err
		}
		// An index of a partitioned table prints as ON ONLY, which would
		// build it for the parent alone.
		rows, err := tx.Query(ctx, `INSERT INTO `+droppedIndexes+` (name, def)
			SELECT i.indexrelid::regclass::text, replace(pg_get_indexdef(i.indexrelid), ' ON ONLY ', ' ON ')
			  FROM pg_index i
			 WHERE (i.indrelid = ANY (SELECT to_regclass(t) FROM unnest($1::text[]) t)
			        OR i.indexrelid::regclass::text LIKE 'mat\_records\_attr\_%')
			   AND NOT i.indisprimary AND NOT i.indisunique
			ON CONFLICT (name) DO NOTHING
			RETURNING name`, names)
		if err != nil {
			return err
		}
		dropped, err := pgx.CollectRows(rows, pgx.RowTo[string])
		if err != nil {
			return err
		}
		for _, name := range dropped {
			if _, err := tx.Exec(ctx, `DROP INDEX `+pgx.Identifier{name}.Sanitize()); err != nil {
				return fmt.Errorf("drop index %s: %w", name, err)
			}
		}
		n = len(dropped)
		return nil
	})
	if err != nil {
		return 0, fmt.Errorf("drop indexes: %w", err)
	}
	return n, nil
}

// restoreIndexes builds the indexes dropIndexes dropped, each in its own
// transaction that also deletes its definition, so a killed run resumes
// with the ones left; it answers how many it built.
func restoreIndexes(ctx context.Context, conn *pgxpool.Conn, progress io.Writer) (int, error) {
	var exists bool
	if err := conn.QueryRow(ctx, `SELECT to_regclass($1) IS NOT NULL`, droppedIndexes).Scan(&exists); err != nil {
		return 0, fmt.Errorf("restore indexes: %w", err)
	}
	if !exists {
		return 0, nil
	}
	rows, err := conn.Query(ctx, `SELECT name, def FROM `+droppedIndexes+` ORDER BY def LIKE 'ALTER INDEX %', name`)
	if err != nil {
		return 0, fmt.Errorf("restore indexes: %w", err)
	}
	type index struct{ Name, Def string }
	defs, err := pgx.CollectRows(rows, pgx.RowToStructByPos[index])
	if err != nil {
		return 0, fmt.Errorf("restore indexes: %w", err)
	}
	for _, d := range defs {
		t := time.Now()
		err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
			for _, set := range []string{`SET LOCAL statement_timeout = 0`, `SET LOCAL maintenance_work_mem = '2GB'`,
				`SET LOCAL max_parallel_maintenance_workers = 1`} {
				if _, err := tx.Exec(ctx, set); err != nil {
					return err
				}
			}
			if _, err := tx.Exec(ctx, d.Def); err != nil {
				return err
			}
			_, err := tx.Exec(ctx, `DELETE FROM `+droppedIndexes+` WHERE name = $1`, d.Name)
			return err
		})
		if err != nil {
			return 0, fmt.Errorf("restore index %s: %w", d.Name, err)
		}
		if progress != nil {
			fmt.Fprintf(progress, "replicate: built index %s in %s\n", d.Name, time.Since(t).Round(time.Millisecond))
		}
	}
	if _, err := conn.Exec(ctx, `DROP TABLE `+droppedIndexes); err != nil {
		return 0, fmt.Errorf("restore indexes: %w", err)
	}
	return len(defs), nil
}
