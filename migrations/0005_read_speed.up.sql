-- Faster reads on multi-level chains (overlays, copies still copying, at=).
--
-- Get, Links and Neighborhood on a multi-level chain run one static
-- statement each, planned once per session (plan_cache_mode
-- force_generic_plan): the levels are parameters (arrays of branch ids
-- and cuts, unnested WITH ORDINALITY), so the statement text does not
-- depend on the chain and is not planned again on every call. Planning the
-- statements built with literals cost more than running them. These reads
-- need no per-Attribute partial index, so parameters lose nothing: every
-- probe is a primary-key or (to_key, relation, from_key) index probe of
-- the Domain's partition (pruned at executor start-up).
--
-- The effective row of a key is the first level (in level order) whose
-- row is at or before the level's cut, or whose newest history row at or
-- before the cut exists (the history probe runs only when the row changed
-- after the cut). A level read at or past its head gets the cut
-- 9223372036854775807 (lb_level_cuts), so its rows are taken as they are.
--
-- The statements are kept once, in lb_levels_stmt; the functions hold the
-- same text as static SQL, and the companions F_sql return it with the
-- parameters inlined as literals (tests EXPLAIN it and check the function
-- bodies hold the text). A single level at its head keeps the statements
-- of 0002. Links and Neighborhood check that the Record is present with a
-- static statement too, in the same function call.

-- lb_level_cuts: the cuts of the levels, a level read at or past its head
-- (cut >= head_seq) getting the largest cut.
CREATE FUNCTION lb_level_cuts(cs bigint[], hs bigint[]) RETURNS bigint[]
    LANGUAGE sql IMMUTABLE
AS $$
SELECT coalesce(array_agg(CASE WHEN x.c >= x.h THEN 9223372036854775807 ELSE x.c END ORDER BY x.i), '{}')
  FROM unnest(cs, hs) WITH ORDINALITY x(c, h, i)
$$;

-- lb_levels_stmt: the statement text of a multi-level read (get, present,
-- links, neighborhood) over the parameters lv_domain int, lv_branches
-- int[], lv_cuts bigint[] (lb_level_cuts), lv_key text, lv_dir text
-- (out, in or both), lv_rel text ('' for every Relation), lv_depth,
-- lv_limit and lv_fanout int.
CREATE FUNCTION lb_levels_stmt(p_name text) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT CASE p_name
WHEN 'get' THEN $q$SELECT e.key::text, e.kind::text, e.title, e."values", rv.id
  FROM (SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present,
               r.key,
               CASE WHEN r.seq <= l.c THEN r.kind ELSE h.kind END AS kind,
               CASE WHEN r.seq <= l.c THEN r.title ELSE h.title END AS title,
               CASE WHEN r.seq <= l.c THEN r."values" ELSE h."values" END AS "values",
               CASE WHEN r.seq <= l.c THEN r.seq ELSE h.seq END AS seq
          FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
          JOIN mat_records r ON r.domain_id = lv_domain AND r.branch_id = l.b AND r.key = lv_key COLLATE "C"
          LEFT JOIN LATERAL (SELECT h.op, h.kind, h.title, h."values", h.seq FROM mat_history h
                 WHERE r.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                 ORDER BY h.seq DESC LIMIT 1) h ON true
         WHERE r.seq <= l.c OR h.seq IS NOT NULL
         ORDER BY l.lvl LIMIT 1) e
  LEFT JOIN revisions rv ON rv.domain_id = lv_domain AND rv.seq = e.seq
 WHERE e.present$q$
WHEN 'present' THEN $q$SELECT EXISTS (SELECT 1 FROM (
        SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present
          FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
          JOIN mat_records r ON r.domain_id = lv_domain AND r.branch_id = l.b AND r.key = lv_key COLLATE "C"
          LEFT JOIN LATERAL (SELECT h.op, h.seq FROM mat_history h
                 WHERE r.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                 ORDER BY h.seq DESC LIMIT 1) h ON true
         WHERE r.seq <= l.c OR h.seq IS NOT NULL
         ORDER BY l.lvl LIMIT 1) e
 WHERE e.present)$q$
WHEN 'links' THEN $q$SELECT y.relation, y.from_key, y.to_key, CASE y.origin WHEN 'r' THEN 'ref' ELSE 'link' END
  FROM (SELECT z.relation::text, z.from_key::text, z.to_key::text, z.origin
          FROM (SELECT DISTINCT o.relation, o.to_key AS other
                  FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                  JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.from_key = lv_key COLLATE "C"
                   AND (NOT o.deleted OR o.seq > l.c)
                 WHERE lv_dir <> 'in' AND (lv_rel = '' OR o.relation = lv_rel COLLATE "C")) k
         CROSS JOIN LATERAL (
                SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                       s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
                  FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                  JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
                   AND s.from_key = lv_key COLLATE "C" AND s.relation = k.relation AND s.to_key = k.other
                  LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                         WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                           AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                         ORDER BY h.seq DESC LIMIT 1) h ON true
                 WHERE s.seq <= l.c OR h.op IS NOT NULL
                 ORDER BY l.lvl LIMIT 1) z
         WHERE z.present
        UNION
        SELECT z.relation::text, z.from_key::text, z.to_key::text, z.origin
          FROM (SELECT DISTINCT o.relation, o.from_key AS other
                  FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                  JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.to_key = lv_key COLLATE "C"
                   AND (NOT o.deleted OR o.seq > l.c)
                 WHERE lv_dir <> 'out' AND (lv_rel = '' OR o.relation = lv_rel COLLATE "C")) k
         CROSS JOIN LATERAL (
                SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                       s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
                  FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                  JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
                   AND s.from_key = k.other AND s.relation = k.relation AND s.to_key = lv_key COLLATE "C"
                  LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                         WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                           AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                         ORDER BY h.seq DESC LIMIT 1) h ON true
                 WHERE s.seq <= l.c OR h.op IS NOT NULL
                 ORDER BY l.lvl LIMIT 1) z
         WHERE z.present) y
 ORDER BY 1, 2, 3$q$
WHEN 'neighborhood' THEN $q$WITH n0 AS (SELECT lv_key COLLATE "C" AS key),
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
SELECT 'link', NULL, NULL, NULL, NULL, links.relation, links.from_key, links.to_key, CASE links.origin WHEN 'r' THEN 'ref' ELSE 'link' END FROM links$q$
END
$$;

-- lb_levels_sql: lb_levels_stmt with the parameters inlined as literals.
CREATE FUNCTION lb_levels_sql(p_name text, d int, bs int[], cuts bigint[], p_key text,
                              p_dir text DEFAULT 'both', p_rel text DEFAULT '', p_depth int DEFAULT 1,
                              p_limit int DEFAULT 1, p_fanout int DEFAULT 1) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT replace(replace(replace(replace(replace(replace(replace(replace(replace(lb_levels_stmt(p_name),
    'lv_domain', format('%L::int', d)),
    'lv_branches', format('%L::int[]', bs)),
    'lv_cuts', format('%L::bigint[]', cuts)),
    'lv_key', format('%L::text', p_key)),
    'lv_dir', format('%L::text', p_dir)),
    'lv_rel', format('%L::text', coalesce(p_rel, ''))),
    'lv_depth', format('%L::int', p_depth)),
    'lv_limit', format('%L::int', p_limit)),
    'lv_fanout', format('%L::int', p_fanout))
$$;

------------------------------------------------------------------------------
-- Get by key.

CREATE OR REPLACE FUNCTION lb_get_sql(p_branch text, p_key text, p_at bigint DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF c.single THEN
        RETURN lb_get_sql_single(p_branch, p_key, NULL);
    END IF;
    RETURN lb_levels_sql('get', c.d, c.bs, lb_level_cuts(c.cs, c.hs), p_key);
END
$$;

CREATE OR REPLACE FUNCTION lb_get(p_branch text, p_key text, p_at bigint DEFAULT NULL)
    RETURNS TABLE (key text, kind text, title text, "values" jsonb, revision text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    c record;
    lv_domain int;
    lv_branches int[];
    lv_cuts bigint[];
    lv_key text := p_key;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF c.single THEN
        RETURN QUERY EXECUTE lb_get_sql_single(p_branch, p_key, NULL);
        RETURN;
    END IF;
    lv_domain := c.d;
    lv_branches := c.bs;
    lv_cuts := lb_level_cuts(c.cs, c.hs);
    RETURN QUERY
    SELECT e.key::text, e.kind::text, e.title, e."values", rv.id
      FROM (SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present,
                   r.key,
                   CASE WHEN r.seq <= l.c THEN r.kind ELSE h.kind END AS kind,
                   CASE WHEN r.seq <= l.c THEN r.title ELSE h.title END AS title,
                   CASE WHEN r.seq <= l.c THEN r."values" ELSE h."values" END AS "values",
                   CASE WHEN r.seq <= l.c THEN r.seq ELSE h.seq END AS seq
              FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
              JOIN mat_records r ON r.domain_id = lv_domain AND r.branch_id = l.b AND r.key = lv_key COLLATE "C"
              LEFT JOIN LATERAL (SELECT h.op, h.kind, h.title, h."values", h.seq FROM mat_history h
                     WHERE r.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                     ORDER BY h.seq DESC LIMIT 1) h ON true
             WHERE r.seq <= l.c OR h.seq IS NOT NULL
             ORDER BY l.lvl LIMIT 1) e
      LEFT JOIN revisions rv ON rv.domain_id = lv_domain AND rv.seq = e.seq
     WHERE e.present;
END
$$;

------------------------------------------------------------------------------
-- Links of a Record.

CREATE OR REPLACE FUNCTION lb_links_sql(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_direction IS NULL OR p_direction NOT IN ('out', 'in', 'both') THEN
        RAISE EXCEPTION 'direction must be out, in or both' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_links_sql_single(p_branch, p_key, p_direction, p_relation, NULL);
    END IF;
    RETURN lb_levels_sql('links', c.d, c.bs, lb_level_cuts(c.cs, c.hs), p_key, p_direction, p_relation);
END
$$;

CREATE OR REPLACE FUNCTION lb_links(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL)
    RETURNS TABLE (relation text, from_key text, to_key text, origin text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
    SET plan_cache_mode = force_generic_plan
AS $$
#variable_conflict use_column
DECLARE
    c record;
    ok boolean;
    lv_domain int;
    lv_branches int[];
    lv_cuts bigint[];
    lv_key text := p_key;
    lv_dir text := p_direction;
    lv_rel text := coalesce(p_relation, '');
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_direction IS NULL OR p_direction NOT IN ('out', 'in', 'both') THEN
        RAISE EXCEPTION 'direction must be out, in or both' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        PERFORM lb_require_record(c.d, c.b, p_key, NULL);
        RETURN QUERY EXECUTE lb_links_sql_single(p_branch, p_key, p_direction, p_relation, NULL);
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
    SELECT y.relation, y.from_key, y.to_key, CASE y.origin WHEN 'r' THEN 'ref' ELSE 'link' END
      FROM (SELECT z.relation::text, z.from_key::text, z.to_key::text, z.origin
              FROM (SELECT DISTINCT o.relation, o.to_key AS other
                      FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                      JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.from_key = lv_key COLLATE "C"
                       AND (NOT o.deleted OR o.seq > l.c)
                     WHERE lv_dir <> 'in' AND (lv_rel = '' OR o.relation = lv_rel COLLATE "C")) k
             CROSS JOIN LATERAL (
                    SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                           s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
                      FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                      JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
                       AND s.from_key = lv_key COLLATE "C" AND s.relation = k.relation AND s.to_key = k.other
                      LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                             WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                               AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                             ORDER BY h.seq DESC LIMIT 1) h ON true
                     WHERE s.seq <= l.c OR h.op IS NOT NULL
                     ORDER BY l.lvl LIMIT 1) z
             WHERE z.present
            UNION
            SELECT z.relation::text, z.from_key::text, z.to_key::text, z.origin
              FROM (SELECT DISTINCT o.relation, o.from_key AS other
                      FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                      JOIN mat_links o ON o.domain_id = lv_domain AND o.branch_id = l.b AND o.to_key = lv_key COLLATE "C"
                       AND (NOT o.deleted OR o.seq > l.c)
                     WHERE lv_dir <> 'out' AND (lv_rel = '' OR o.relation = lv_rel COLLATE "C")) k
             CROSS JOIN LATERAL (
                    SELECT CASE WHEN s.seq <= l.c THEN NOT s.deleted ELSE h.op = 'link' END AS present,
                           s.from_key, s.relation, s.to_key, CASE WHEN s.seq <= l.c THEN s.origin ELSE h.origin END AS origin
                      FROM unnest(lv_branches, lv_cuts) WITH ORDINALITY l(b, c, lvl)
                      JOIN mat_links s ON s.domain_id = lv_domain AND s.branch_id = l.b
                       AND s.from_key = k.other AND s.relation = k.relation AND s.to_key = lv_key COLLATE "C"
                      LEFT JOIN LATERAL (SELECT h.op, h.origin FROM mat_link_history h
                             WHERE s.seq > l.c AND h.domain_id = lv_domain AND h.branch_id = l.b AND h.from_key = s.from_key
                               AND h.relation = s.relation AND h.to_key = s.to_key AND h.seq <= l.c
                             ORDER BY h.seq DESC LIMIT 1) h ON true
                     WHERE s.seq <= l.c OR h.op IS NOT NULL
                     ORDER BY l.lvl LIMIT 1) z
             WHERE z.present) y
     ORDER BY 1, 2, 3;
END
$$;

------------------------------------------------------------------------------
-- Neighborhood. The statement always has three hops; a hop beyond the
-- depth is skipped (its condition on lv_depth is false), so its nodes and
-- Links are empty.

CREATE OR REPLACE FUNCTION lb_neighborhood_sql(p_branch text, p_key text, p_depth int, p_limit int, p_fanout int DEFAULT 20) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF p_depth IS NULL OR p_depth < 1 OR p_depth > 3 THEN
        RAISE EXCEPTION 'depth must be 1 to 3' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10000 OR p_fanout IS NULL OR p_fanout < 1 OR p_fanout > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_neighborhood_sql_single(p_branch, p_key, p_depth, p_limit, p_fanout);
    END IF;
    RETURN lb_levels_sql('neighborhood', c.d, c.bs, lb_level_cuts(c.cs, c.hs), p_key, 'both', '', p_depth, p_limit, p_fanout);
END
$$;

CREATE OR REPLACE FUNCTION lb_neighborhood(p_branch text, p_key text, p_depth int DEFAULT 2, p_limit int DEFAULT 200, p_fanout int DEFAULT 20)
    RETURNS TABLE (row_type text, key text, kind text, title text, depth int,
                   relation text, from_key text, to_key text, origin text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
    SET plan_cache_mode = force_generic_plan
AS $$
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
$$;

------------------------------------------------------------------------------
-- Pages and attribute queries: the effective Record of each candidate key
-- is one probe per level over the unnested levels (a statement with one
-- mat_records and one mat_history reference, whatever the chain's length,
-- is cheaper to plan), and its Revision a scalar subquery.

-- lb_rec_eff_levels_sql: the effective Record of key expression k over
-- the levels (cuts from lb_level_cuts) as a parenthesized subquery of at
-- most one row: present (false: absent), key, kind, title, values, seq.
CREATE FUNCTION lb_rec_eff_levels_sql(d int, bs int[], cuts bigint[], k text) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT format($q$(SELECT CASE WHEN r.seq <= l.c THEN NOT r.deleted ELSE h.op <> 'delete' END AS present,
               r.key,
               CASE WHEN r.seq <= l.c THEN r.kind ELSE h.kind END AS kind,
               CASE WHEN r.seq <= l.c THEN r.title ELSE h.title END AS title,
               CASE WHEN r.seq <= l.c THEN r."values" ELSE h."values" END AS "values",
               CASE WHEN r.seq <= l.c THEN r.seq ELSE h.seq END AS seq
          FROM unnest(%2$L::int[], %3$L::bigint[]) WITH ORDINALITY l(b, c, lvl)
          JOIN mat_records r ON r.domain_id = %1$L AND r.branch_id = l.b AND r.key = %4$s
          LEFT JOIN LATERAL (SELECT h.op, h.kind, h.title, h."values", h.seq FROM mat_history h
                 WHERE r.seq > l.c AND h.domain_id = %1$L AND h.branch_id = l.b AND h.key = r.key AND h.seq <= l.c
                 ORDER BY h.seq DESC LIMIT 1) h ON true
         WHERE r.seq <= l.c OR h.seq IS NOT NULL
         ORDER BY l.lvl LIMIT 1)$q$, d, bs, cuts, k)
$$;

CREATE OR REPLACE FUNCTION lb_rec_page_sql(d int, bs int[], cs bigint[], hs bigint[], cands text, fin text, p_limit int) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT format($q$SELECT DISTINCT ON (x.ord) x.key, x.kind, x.title, x."values", x.id FROM (
  SELECT c.key AS ord, e.key::text AS key, e.kind::text AS kind, e.title, e."values",
         (SELECT rv.id FROM revisions rv WHERE rv.domain_id = %1$L AND rv.seq = e.seq) AS id
    FROM %2$s c
   CROSS JOIN LATERAL %3$s e
   WHERE e.present%4$s
   ORDER BY c.key
   LIMIT %5$s) x
 ORDER BY x.ord
 LIMIT %6$s$q$, d, cands, lb_rec_eff_levels_sql(d, bs, lb_level_cuts(cs, hs), 'c.key'), fin, p_limit * 2 * cardinality(bs), p_limit)
$$;

------------------------------------------------------------------------------
-- Search over the levels: a level read before its head computes the
-- search vector of the versions it changed after the cut as the commit
-- does. The statement now carries each Kind's search Attributes (from the
-- level's schema, read when the statement is built) as literals instead
-- of reading the compiled schema for every version (lb_search_vector):
-- setweight(title, 'A') || setweight(the search Attributes' values other
-- than the title, in schema order, joined by spaces, NULLs skipped, 'B').

-- lb_search_vector_sql: the search vector expression of a version of
-- branch b with columns x.kind, x.title and x."values".
CREATE FUNCTION lb_search_vector_sql(d int, b int) RETURNS text
    LANGUAGE sql STABLE
    SET search_path = public, pg_temp
AS $$
SELECT format($q$setweight(to_tsvector('simple', coalesce(x.title, '')), 'A') || setweight(to_tsvector('simple', %s), 'B')$q$,
       coalesce((SELECT 'CASE x.kind' || string_agg(format(' WHEN %L THEN concat_ws('' '', VARIADIC ARRAY[%s]::text[])', z.kind, z.attrs), '' ORDER BY z.kind)
                        || $q$ ELSE '' END$q$
                   FROM (SELECT k.key AS kind, string_agg(format('x."values" ->> %L', a.a ->> 'name'), ', ' ORDER BY a.o) AS attrs
                           FROM schemas sc
                          CROSS JOIN LATERAL jsonb_each(sc.compiled -> 'kinds') k
                          CROSS JOIN LATERAL jsonb_array_elements(k.value -> 'attributes') WITH ORDINALITY a(a, o)
                          WHERE sc.domain_id = d AND sc.branch_id = b AND (a.a ->> 'search')::boolean
                            AND a.a ->> 'name' IS DISTINCT FROM k.value ->> 'title'
                          GROUP BY k.key) z), $q$''$q$))
$$;

CREATE OR REPLACE FUNCTION lb_search_source_levels(d int, bs int[], cs bigint[], hs bigint[]) RETURNS text
    LANGUAGE plpgsql STABLE
    SET search_path = public, pg_temp
AS $$
DECLARE
    s text := '';
    i int;
BEGIN
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
             || format($q$SELECT r.key, r.kind, r.title, r.search FROM mat_records r
     WHERE r.domain_id = %1$L AND r.branch_id = %2$L AND NOT r.deleted%3$s%4$s$q$,
                       d, bs[i], CASE WHEN cs[i] < hs[i] THEN format(' AND r.seq <= %L', cs[i]) ELSE '' END,
                       lb_rec_upper_sql(d, bs, cs, hs, i, 'r.key'));
        IF cs[i] < hs[i] THEN
            s := s || E'\n UNION ALL\n' || format($q$SELECT x.key, x.kind, x.title, %6$s AS search
      FROM (%4$s) ck
     CROSS JOIN LATERAL (SELECT h.key, h.kind, h.title, h."values", h.op FROM mat_history h
             WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = ck.key AND h.seq <= %3$L
             ORDER BY h.seq DESC LIMIT 1) x
     WHERE x.op <> 'delete'%5$s$q$, d, bs[i], cs[i], lb_changed_sql(d, bs[i], cs[i], ''),
                       lb_rec_upper_sql(d, bs, cs, hs, i, 'x.key'), lb_search_vector_sql(d, bs[i]));
        END IF;
    END LOOP;
    RETURN format('FROM (%s) m WHERE true', s);
END
$$;

------------------------------------------------------------------------------
-- Only lorebase_app (and the owner) may call the functions.

DO $$
DECLARE
    f regprocedure;
BEGIN
    FOR f IN SELECT p.oid::regprocedure FROM pg_proc p
              WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'lb\_%' AND p.proname <> 'lb_domain' LOOP
        EXECUTE format('REVOKE ALL ON FUNCTION %s FROM PUBLIC', f);
        EXECUTE format('GRANT EXECUTE ON FUNCTION %s TO lorebase_app', f);
    END LOOP;
END
$$;
