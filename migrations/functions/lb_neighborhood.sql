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
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF p_depth IS NULL OR p_depth < 1 OR p_depth > 3 THEN
        RAISE EXCEPTION 'depth must be 1 to 3' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10000 OR p_fanout IS NULL OR p_fanout < 1 OR p_fanout > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        PERFORM lb_require_record(c.d, c.b, p_key, NULL);
        RETURN QUERY EXECUTE lb_neighborhood_sql_single(p_branch, p_key, p_depth, p_limit, p_fanout);
        RETURN;
    END IF;
    lv_domain := c.d;
    lv_branches := c.bs;
    lv_cuts := lb_level_cuts(c.cs, c.hs);
    SELECT EXISTS (SELECT 1 FROM (
            SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_records r ON r.domain_id = lv_domain AND r.branch_id = l.b AND r.key = lv_key COLLATE "C"
              LEFT JOIN LATERAL (SELECT h.op, h.seq FROM mat_history h
                     WHERE r.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE r.seq <= l.c OR h.seq IS NOT NULL
             ORDER BY l.lvl LIMIT 1) e
     WHERE e.present)
      INTO ok;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY
    WITH n0 AS (SELECT lv_key COLLATE "C" AS key),
    e1 AS (SELECT x.* FROM n0 p CROSS JOIN LATERAL (
        (SELECT z.relation, z.from_key, z.to_key, z.origin, z.to_key AS other
           FROM (SELECT DISTINCT o.relation, o.to_key AS other
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.from_key = p.key
               AND (NOT o.deleted OR o.seq > l.c)) k
          CROSS JOIN LATERAL (SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                   s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
               AND s.from_key = p.key AND s.relation = k.relation AND s.to_key = k.other
              LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                     WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                       AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE s.seq <= l.c OR h.op IS NOT NULL
             ORDER BY l.lvl LIMIT 1) z
          WHERE z.present ORDER BY k.relation, k.other LIMIT lv_fanout)
        UNION ALL
        (SELECT z.relation, z.from_key, z.to_key, z.origin, z.from_key AS other
           FROM (SELECT DISTINCT o.relation, o.from_key AS other
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.to_key = p.key
               AND (NOT o.deleted OR o.seq > l.c)) k
          CROSS JOIN LATERAL (SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                   s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
               AND s.from_key = k.other AND s.relation = k.relation AND s.to_key = p.key
              LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                     WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                       AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE s.seq <= l.c OR h.op IS NOT NULL
             ORDER BY l.lvl LIMIT 1) z
          WHERE z.present ORDER BY k.relation, k.other LIMIT lv_fanout)) x),
    n1 AS (SELECT DISTINCT e.other AS key FROM e1 e
        WHERE e.other NOT IN (SELECT n0.key FROM n0) ORDER BY e.other LIMIT lv_limit),
    e2 AS (SELECT x.* FROM n1 p CROSS JOIN LATERAL (
        (SELECT z.relation, z.from_key, z.to_key, z.origin, z.to_key AS other
           FROM (SELECT DISTINCT o.relation, o.to_key AS other
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.from_key = p.key
               AND (NOT o.deleted OR o.seq > l.c)) k
          CROSS JOIN LATERAL (SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                   s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
               AND s.from_key = p.key AND s.relation = k.relation AND s.to_key = k.other
              LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                     WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                       AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE s.seq <= l.c OR h.op IS NOT NULL
             ORDER BY l.lvl LIMIT 1) z
          WHERE z.present ORDER BY k.relation, k.other LIMIT lv_fanout)
        UNION ALL
        (SELECT z.relation, z.from_key, z.to_key, z.origin, z.from_key AS other
           FROM (SELECT DISTINCT o.relation, o.from_key AS other
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.to_key = p.key
               AND (NOT o.deleted OR o.seq > l.c)) k
          CROSS JOIN LATERAL (SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                   s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
               AND s.from_key = k.other AND s.relation = k.relation AND s.to_key = p.key
              LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                     WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                       AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE s.seq <= l.c OR h.op IS NOT NULL
             ORDER BY l.lvl LIMIT 1) z
          WHERE z.present ORDER BY k.relation, k.other LIMIT lv_fanout)) x
       WHERE lv_depth >= 2),
    n2 AS (SELECT DISTINCT e.other AS key FROM e2 e
        WHERE e.other NOT IN (SELECT n0.key FROM n0 UNION ALL SELECT n1.key FROM n1) ORDER BY e.other LIMIT lv_limit),
    e3 AS (SELECT x.* FROM n2 p CROSS JOIN LATERAL (
        (SELECT z.relation, z.from_key, z.to_key, z.origin, z.to_key AS other
           FROM (SELECT DISTINCT o.relation, o.to_key AS other
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.from_key = p.key
               AND (NOT o.deleted OR o.seq > l.c)) k
          CROSS JOIN LATERAL (SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                   s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
               AND s.from_key = p.key AND s.relation = k.relation AND s.to_key = k.other
              LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                     WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                       AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE s.seq <= l.c OR h.op IS NOT NULL
             ORDER BY l.lvl LIMIT 1) z
          WHERE z.present ORDER BY k.relation, k.other LIMIT lv_fanout)
        UNION ALL
        (SELECT z.relation, z.from_key, z.to_key, z.origin, z.from_key AS other
           FROM (SELECT DISTINCT o.relation, o.from_key AS other
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.to_key = p.key
               AND (NOT o.deleted OR o.seq > l.c)) k
          CROSS JOIN LATERAL (SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                   s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
               AND s.from_key = k.other AND s.relation = k.relation AND s.to_key = p.key
              LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                     WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                       AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE s.seq <= l.c OR h.op IS NOT NULL
             ORDER BY l.lvl LIMIT 1) z
          WHERE z.present ORDER BY k.relation, k.other LIMIT lv_fanout)) x
       WHERE lv_depth >= 3),
    n3 AS (SELECT DISTINCT e.other AS key FROM e3 e
        WHERE e.other NOT IN (SELECT n0.key FROM n0 UNION ALL SELECT n1.key FROM n1 UNION ALL SELECT n2.key FROM n2) ORDER BY e.other LIMIT lv_limit),
    nodes AS (SELECT a.key, min(a.depth) AS depth FROM (SELECT n0.key, 0 AS depth FROM n0 UNION ALL SELECT n1.key, 1 FROM n1
        UNION ALL SELECT n2.key, 2 FROM n2 UNION ALL SELECT n3.key, 3 FROM n3) a GROUP BY a.key),
    recs AS (SELECT e.key::text AS key, e.kind::text AS kind, e.title, n.depth
        FROM nodes n CROSS JOIN LATERAL (
            SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present,
                   r.key,
                   CASE WHEN r.seq <= l.c THEN r.kind ELSE h.kind END AS kind,
                   CASE WHEN r.seq <= l.c THEN r.title ELSE h.title END AS title
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_records r ON r.domain_id = lv_domain AND r.branch_id = l.b AND r.key = n.key
              LEFT JOIN LATERAL (SELECT h.op, h.kind, h.title, h.seq FROM mat_history h
                     WHERE r.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE r.seq <= l.c OR h.seq IS NOT NULL
             ORDER BY l.lvl LIMIT 1) e
       WHERE e.present
       ORDER BY n.depth, n.key LIMIT lv_limit),
    links AS (SELECT DISTINCT x.relation::text AS relation, x.from_key::text AS from_key, x.to_key::text AS to_key, x.origin
        FROM (SELECT e1.relation, e1.from_key, e1.to_key, e1.origin FROM e1
              UNION SELECT e2.relation, e2.from_key, e2.to_key, e2.origin FROM e2
              UNION SELECT e3.relation, e3.from_key, e3.to_key, e3.origin FROM e3) x
       WHERE x.from_key IN (SELECT recs.key FROM recs) AND x.to_key IN (SELECT recs.key FROM recs))
    SELECT 'record'::text, recs.key, recs.kind, recs.title, recs.depth, NULL::text, NULL::text, NULL::text, NULL::text FROM recs
    UNION ALL
    SELECT 'link', NULL, NULL, NULL, NULL, links.relation, links.from_key, links.to_key, CASE links.origin WHEN 'r' THEN 'ref' ELSE 'link' END FROM links;
END
$function$;
