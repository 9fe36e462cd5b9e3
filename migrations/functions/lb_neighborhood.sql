CREATE OR REPLACE FUNCTION lb_neighborhood(p_branch text, p_key text, p_depth integer DEFAULT 2, p_limit integer DEFAULT 200, p_fanout integer DEFAULT 20)
 RETURNS TABLE(row_type text, key text, kind text, title text, depth integer, relation text, from_key text, to_key text, origin text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
 SET plan_cache_mode TO 'force_generic_plan'
AS $function$
#variable_conflict use_column
DECLARE
    c record;
    ok boolean;
    lv_domain int;
    lv_branches int[];
    lv_cuts bigint[];
    lv_key text := p_key;
    lv_depth int := p_depth;
    lv_limit int := p_limit;
    lv_fanout int := p_fanout;
    lv_keys text[];
    lv_depths int[];
    lv_rel text[];
    lv_from text[];
    lv_to text[];
    lv_origin "char"[];
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF p_depth IS NULL OR p_depth < 1 OR p_depth > 3 THEN
        RAISE EXCEPTION 'depth must be 1 to 3' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10000 OR p_fanout IS NULL OR p_fanout < 1 OR p_fanout > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        PERFORM lb_require_record(c.b, p_key, NULL);
        -- The keys and Links by index-only scans, then the Records by a
        -- bitmap heap scan (lb_neighborhood_records).
        EXECUTE lb_neighborhood_sql_single(p_branch, p_key, p_depth, p_limit, p_fanout)
           INTO lv_keys, lv_depths, lv_rel, lv_from, lv_to, lv_origin;
        RETURN QUERY
        WITH recs AS MATERIALIZED (SELECT r.key, r.kind, r.title, r.depth
            FROM lb_neighborhood_records(c.d, c.b, lv_keys, lv_depths, lv_limit) r),
        links AS (SELECT DISTINCT x.relation, x.from_key, x.to_key, x.origin
            FROM unnest(lv_rel, lv_from, lv_to, lv_origin) x(relation, from_key, to_key, origin)
           WHERE x.from_key IN (SELECT recs.key FROM recs) AND x.to_key IN (SELECT recs.key FROM recs))
        SELECT 'record'::text, recs.key, recs.kind, recs.title, recs.depth, NULL::text, NULL::text, NULL::text, NULL::text FROM recs
        UNION ALL
        SELECT 'link', NULL, NULL, NULL, NULL, links.relation, links.from_key, links.to_key,
               CASE links.origin WHEN 'r' THEN 'ref' ELSE 'link' END FROM links;
        RETURN;
    END IF;
    lv_domain := c.d;
    lv_branches := c.bs;
    lv_cuts := lb_level_cuts(c.cs, c.hs);
    SELECT EXISTS (SELECT 1 FROM lb_record_at(lv_domain, lv_branches, lv_cuts, lv_key) e WHERE e.present)
      INTO ok;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY
    /* levels:neighborhood */
    WITH n0 AS (SELECT lv_key COLLATE "C" AS key),
    e1 AS (SELECT x.* FROM n0 p
        CROSS JOIN LATERAL lb_link_hop(lv_domain, lv_branches, lv_cuts, p.key, 'both', '', lv_fanout) x),
    n1 AS (SELECT DISTINCT e.other COLLATE "C" AS key FROM e1 e
        WHERE e.other COLLATE "C" NOT IN (SELECT n0.key FROM n0) ORDER BY 1 LIMIT lv_limit),
    e2 AS (SELECT x.* FROM n1 p
        CROSS JOIN LATERAL lb_link_hop(lv_domain, lv_branches, lv_cuts, p.key, 'both', '', lv_fanout) x
       WHERE lv_depth >= 2),
    n2 AS (SELECT DISTINCT e.other COLLATE "C" AS key FROM e2 e
        WHERE e.other COLLATE "C" NOT IN (SELECT n0.key FROM n0 UNION ALL SELECT n1.key FROM n1) ORDER BY 1 LIMIT lv_limit),
    e3 AS (SELECT x.* FROM n2 p
        CROSS JOIN LATERAL lb_link_hop(lv_domain, lv_branches, lv_cuts, p.key, 'both', '', lv_fanout) x
       WHERE lv_depth >= 3),
    n3 AS (SELECT DISTINCT e.other COLLATE "C" AS key FROM e3 e
        WHERE e.other COLLATE "C" NOT IN (SELECT n0.key FROM n0 UNION ALL SELECT n1.key FROM n1 UNION ALL SELECT n2.key FROM n2)
        ORDER BY 1 LIMIT lv_limit),
    nodes AS (SELECT a.key, min(a.depth) AS depth FROM (SELECT n0.key, 0 AS depth FROM n0 UNION ALL SELECT n1.key, 1 FROM n1
        UNION ALL SELECT n2.key, 2 FROM n2 UNION ALL SELECT n3.key, 3 FROM n3) a GROUP BY a.key),
    recs AS (SELECT e.key, e.kind, e.title, n.depth
        FROM nodes n CROSS JOIN LATERAL lb_record_at(lv_domain, lv_branches, lv_cuts, n.key) e
       WHERE e.present
       ORDER BY n.depth, n.key LIMIT lv_limit),
    links AS (SELECT DISTINCT x.relation, x.from_key, x.to_key, x.origin
        FROM (SELECT e1.relation, e1.from_key, e1.to_key, e1.origin FROM e1
              UNION SELECT e2.relation, e2.from_key, e2.to_key, e2.origin FROM e2
              UNION SELECT e3.relation, e3.from_key, e3.to_key, e3.origin FROM e3) x
       WHERE x.from_key IN (SELECT recs.key FROM recs) AND x.to_key IN (SELECT recs.key FROM recs))
    SELECT 'record'::text, recs.key, recs.kind, recs.title, recs.depth, NULL::text, NULL::text, NULL::text, NULL::text FROM recs
    UNION ALL
    SELECT 'link', NULL, NULL, NULL, NULL, links.relation, links.from_key, links.to_key, CASE links.origin WHEN 'r' THEN 'ref' ELSE 'link' END FROM links
    /* end levels */;
END
$function$;
