-- lb_neighborhood_records: the present Records of branch p_b of Domain p_d
-- among p_keys, each with the depth p_depths gives it at the same position,
-- the first p_limit by depth and key: the Records of a neighborhood on a
-- branch that owns its rows (lb_neighborhood). They are read through a
-- bitmap of the primary key, not an index scan: a bitmap heap scan asks the
-- kernel for the heap pages ahead of reading them (effective_io_concurrency),
-- so the heap pages of a neighborhood's Records that are not in shared
-- buffers (one a Record, all over the heap) are read side by side instead of
-- one after the other. The Links of the neighborhood are read before, by
-- index-only scans, which enable_indexscan off would forbid: hence a
-- statement of its own. The keys are read first and whole (the CTE is
-- materialized), so the plan cannot probe the heap once per key.
CREATE OR REPLACE FUNCTION lb_neighborhood_records(p_d integer, p_b integer, p_keys text[], p_depths integer[], p_limit integer)
 RETURNS TABLE(key text, kind text, title text, depth integer)
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
 SET enable_indexscan TO 'off'
 SET enable_seqscan TO 'off'
AS $function$
BEGIN
    RETURN QUERY EXECUTE format($q$WITH m AS MATERIALIZED (
    SELECT m.key, m.kind, m.title FROM mat_records m
     WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND NOT m.deleted AND m.key = ANY ($1))
SELECT m.key::text, m.kind::text, m.title, n.depth
  FROM unnest($1, $2) n(key, depth) JOIN m ON m.key = n.key COLLATE "C"
 ORDER BY n.depth, n.key COLLATE "C"
 LIMIT $3$q$, p_d, p_b)
      USING p_keys, p_depths, p_limit;
END
$function$;
