// Package jobkind names Lorebase's River job kinds. The workers (package
// jobs) register them and package store reads a branch's job by them; the
// names are stored in river_job rows, so they do not change.
package jobkind

const (
	// Index builds one per-Attribute index of a Kind on a branch.
	Index = "store.index"
	// Materialize copies a copy branch's rows from its base.
	Materialize = "store.materialize"
	// BranchDelete removes the rows of a branch marked deleting.
	BranchDelete = "store.branch_delete"
	// DomainDelete removes a Domain marked deleting: its rows in every
	// table, its indexes and its Revision-number sequence.
	DomainDelete = "store.domain_delete"
	// IndexDrop drops a per-Attribute index a schema change left unused.
	IndexDrop = "store.index_drop"
	// Analyze takes the planner's statistics of a Domain's partitions again
	// after a commit added many rows to it.
	Analyze = "store.analyze"
	// Embed embeds the Records one commit wrote.
	Embed = "semantic.embed"
	// Reembed embeds every Record of a Kind of a branch after its
	// embedding declaration changed.
	Reembed = "semantic.reembed"
	// VectorIndex builds the HNSW index of a Domain's vectors of one
	// embedding spec (pgvector only).
	VectorIndex = "semantic.index"
	// Merge lands a Proposal's merge too large for its request.
	Merge = "merge.proposal"
)
