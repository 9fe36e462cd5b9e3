// Package commit is Lorebase's write path: it parses a commit's changes,
// validates them against the branch's compiled schema and the branch's
// current data, writes content-addressed objects and the Revision, and
// materializes the branch head (mat_records, mat_links, mat_history), all in
// one transaction whose ref moves by compare-and-swap.
//
// A commit runs in one transaction as lorebase_app scoped to its Domain:
//
//  1. the ref is locked (commits on a branch are serialized there) and the
//     branch's schema read, in one round trip with the Domain's scope; an
//     Idempotency-Key already answered returns its Revision again, then
//     expected_head is compared with the head;
//  2. the stored Records the changes touch are read in one statement (each
//     key looked up on its own; from 32 keys on, by lb_commit_records' bitmap
//     heap scan of their keys), in one round trip with the Links out of
//     Records the commit deletes, links or unlinks from (and of a Record it
//     puts when a required Relation starts from its Kind) and into Records
//     it deletes; then the targets of ref values new to their Record, with
//     the Links out of the Records it patches whose stored Kind a required
//     Relation starts from (a patch does not name its Kind); the
//     foreign-key Links of the other Records it puts or patches follow from
//     their stored ref values and are not read;
//  3. the changes are applied in order in memory and every problem is
//     collected with the index of its change: malformed changes are
//     lberr.Invalid, schema and data violations lberr.Unprocessable; nothing is written if there is one;
//  4. objects, the Revision, the final rows of the changed Records, their
//     history, the Links (stored and foreign-key) and their history are
//     written set-based, each set's rows in the order of its primary key:
//     arrays through unnest, or COPY into a temporary
//     staging table for batches over Config.CopyThresholdRows (the
//     connection keeps its staging tables; they empty at the end of every
//     transaction that used them), in the binary format encoded by the
//     pipeline itself as the rows are sent (copyReader);
//  5. the ref moves by compare-and-swap on the head read under the lock.
//
// A Record changed several times by one commit gets one history row for that
// commit (mat_history's key is the Record and the Revision), holding its final
// state and the op of its last change; versions counts these rows. Deleting a
// Record removes its own foreign-key Links; its stored Links, in or out, and
// foreign-key Links of other Records into it must be removed by the same
// commit, or the deletion is refused (still_linked).
//
// PutSchema replaces a branch's schema the same way: the new document is
// compiled, every check of schema.Diff runs against the branch's data, and
// the document, a Revision with one "schema" change, the schemas row and the
// refreshed titles and search vectors of Kinds whose title or search
// Attributes changed are written in one transaction, with Config's
// OnSchemaChange hook called inside it.
package commit
