// Package reads holds the agent read primitives: thin Go over the
// SECURITY DEFINER SQL functions of migrations/ (lb_get, lb_page, lb_links,
// lb_neighborhood, lb_query_by_attribute, lb_search, lb_history,
// lb_lineage, lb_resolve), one file per read. Every read runs as
// lorebase_app with its Domain set, in one round trip.
//
// Every read works on any branch: main and ready copies read their own
// rows; overlays and copies still copying read through their bases as of
// the fork (the level chain of migrations/functions/lb_levels.sql), and a read
// at a Revision (at=) reads the branch as of that Revision, which may be a
// Revision of the branch or of a base at or before the fork.
package reads
