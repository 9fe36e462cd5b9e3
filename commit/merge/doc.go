// Package merge compares and merges branches: the merge base of two
// branches, the diff of a branch against its merge base, the three-way
// merge at Attribute level with its conflicts, and Proposals (reviewed
// requests to merge one branch into another).
//
// # Merge base
//
// The merge base of a source S and a target T is a state: a branch as of a
// Revision sequence number. Before S and T ever merged it is their common
// ancestor as of the older fork point (for S forked from T, T as of S's
// fork Revision; for branches of branches, the first branch both chains
// read, cut at the lower of the two cuts). After a merge in either
// direction it is the merged source's state at the merge (its head then).
// The table merge_bases keeps it per pair of branches.
//
// Beside the base, each side keeps a list of Revision ranges (branch, after
// seq, up to seq or the head) outside of which its state equals the base:
// the keys and Links those Revisions changed are the only candidates the
// diff and the merge read, so their cost grows with the changes and not
// with the Domain. The ranges are read from the branches' Revision logs
// (lb_merge_changed), the same for overlays and copies.
//
// # Merge
//
// For every candidate Record the base, source and target states are read
// (lb_merge_records) and merged: the same state on both sides, or a side
// equal to the base, takes the other side; otherwise Attributes merge one
// by one and a Record both sides changed in incompatible ways is a
// conflict (attribute, add_add, delete_update, update_delete). Stored
// Links merge as a set. The merged result becomes one commit on the target
// through the commit pipeline (commit.Pipeline.CommitLocked), validated
// against the target's head inside the merge transaction; what the
// validator finds is reported as conflicts (unique, required_link,
// dangling_ref, linked_delete, link_cardinality) a person resolves like the
// others. The Revision has two parents: the target head and the source
// head, and each change's provenance names the source change (Revision,
// author, provenance) and the Proposal.
//
// # Proposals
//
// A Proposal (tables proposals and proposal_resolutions) is a reviewed
// merge: Show computes its summary and conflicts in a transaction that is
// rolled back and caches them with the heads they were computed at;
// resolutions are stored with the conflict's fingerprint and stop counting
// when it changes. A Proposal merge past Config.JobThreshold is queued as
// a job (see package jobs, merge.proposal) that runs RunMergeJob: one
// transaction, so the merge lands whole or not at all. docs/merge.md
// describes the model.
package merge
