CREATE OR REPLACE FUNCTION lb_neighborhood_sql_single(p_branch text, p_key text, p_depth integer, p_limit integer, p_fanout integer DEFAULT 20)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
DECLARE
    d int;
    b int;
    h bigint;
    ctes text;
    seen text;
    edges text;
    i int;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_depth IS NULL OR p_depth < 1 OR p_depth > 3 THEN
        RAISE EXCEPTION 'depth must be 1 to 3' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10000 OR p_fanout IS NULL OR p_fanout < 1 OR p_fanout > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    ctes := format('n0 AS (SELECT %L::text COLLATE "C" AS key)', p_key);
    seen := 'SELECT key FROM n0';
    edges := '';
    FOR i IN 1..p_depth LOOP
        ctes := ctes || format($q$,
e%1$s AS (SELECT l.* FROM n%2$s p CROSS JOIN LATERAL (
    (SELECT o.relation, o.from_key, o.to_key, o.origin, o.to_key AS other FROM mat_links o
      WHERE o.domain_id = %3$L AND o.branch_id = %4$L AND o.from_key = p.key AND NOT o.deleted
      ORDER BY o.relation, o.to_key LIMIT %5$s)
    UNION ALL
    (SELECT o.relation, o.from_key, o.to_key, o.origin, o.from_key AS other FROM mat_links o
      WHERE o.domain_id = %3$L AND o.branch_id = %4$L AND o.to_key = p.key AND NOT o.deleted
      ORDER BY o.relation, o.from_key LIMIT %5$s)) l),
n%1$s AS (SELECT DISTINCT e.other AS key FROM e%1$s e
    WHERE e.other NOT IN (%6$s) ORDER BY e.other LIMIT %7$s)$q$,
            i, i - 1, d, b, p_fanout, seen, p_limit);
        seen := seen || format(' UNION ALL SELECT key FROM n%s', i);
        edges := edges || CASE WHEN i > 1 THEN ' UNION ' ELSE '' END
                 || format('SELECT relation, from_key, to_key, origin FROM e%s', i);
    END LOOP;
    -- The neighborhood's keys by depth and key, their depths, and the Links
    -- read on the way, each once, as arrays (each set's arrays built in one
    -- pass, so that their positions match): lb_neighborhood reads the
    -- Records of the keys with a statement of their own
    -- (lb_neighborhood_records).
    RETURN format($q$WITH %1$s,
nodes AS (SELECT a.key, min(a.depth) AS depth FROM (%2$s) a GROUP BY a.key),
edges AS (%3$s)
SELECT n.keys, n.depths, e.relations, e.froms, e.tos, e.origins
  FROM (SELECT array_agg(key::text ORDER BY depth, key) AS keys, array_agg(depth ORDER BY depth, key) AS depths FROM nodes) n,
       (SELECT array_agg(relation::text) AS relations, array_agg(from_key::text) AS froms,
               array_agg(to_key::text) AS tos, array_agg(origin) AS origins FROM edges) e$q$,
        ctes,
        (SELECT string_agg(format('SELECT key, %s AS depth FROM n%s', j, j), ' UNION ALL ') FROM generate_series(0, p_depth) j),
        edges);
END
$function$;
