// Package commit is Lorebase's write path: it parses a commit's changes,
// validates them against the branch's compiled schema and the branch's
// current data, writes content-addressed objects and the Revision, and
// materializes the branch head (mat_records, mat_links, mat_history), all in
// one transaction whose ref moves by compare-and-swap.
package commit
