// Package reads holds the agent read primitives: thin Go over the
// SECURITY DEFINER SQL functions of migrations/ (lb_get, lb_page, lb_links,
// lb_neighborhood, lb_query_by_attribute, lb_search, lb_history,
// lb_lineage, lb_resolve), one file per read. Every read runs as
// lorebase_app with its Domain set, in one round trip.
package reads
