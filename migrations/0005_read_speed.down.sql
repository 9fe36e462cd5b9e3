-- Reverts 0005: the 0002/0003 bodies of the functions it replaced, and
-- drops its helpers.

CREATE OR REPLACE FUNCTION lb_get(p_branch text, p_key text, p_at bigint DEFAULT NULL)
    RETURNS TABLE (key text, kind text, title text, "values" jsonb, revision text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
BEGIN
    RETURN QUERY EXECUTE lb_get_sql(p_branch, p_key, p_at);
END
$$;

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
    RETURN format($q$SELECT e.key::text, e.kind::text, e.title, e."values", rv.id
  FROM %2$s e
  LEFT JOIN revisions rv ON rv.domain_id = %1$L AND rv.seq = e.seq
 WHERE e.present$q$, c.d, lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, format('%L', p_key)));
END
$$;

CREATE OR REPLACE FUNCTION lb_links_sql(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
    rel text := '';
    k text := format('%L', p_key);
    q_out text;
    q_in text;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_direction IS NULL OR p_direction NOT IN ('out', 'in', 'both') THEN
        RAISE EXCEPTION 'direction must be out, in or both' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_links_sql_single(p_branch, p_key, p_direction, p_relation, NULL);
    END IF;
    IF coalesce(p_relation, '') <> '' THEN
        rel := format(' AND o.relation = %L', p_relation);
    END IF;
    q_out := format($q$SELECT z.relation::text, z.from_key::text, z.to_key::text, z.origin
  FROM %s c CROSS JOIN LATERAL %s z WHERE z.present$q$,
        lb_link_cands_sql(c.d, c.bs, c.cs, 'from_key', 'to_key', k, rel),
        lb_link_eff_sql(c.d, c.bs, c.cs, c.hs, k, 'c.relation', 'c.other'));
    q_in := format($q$SELECT z.relation::text, z.from_key::text, z.to_key::text, z.origin
  FROM %s c CROSS JOIN LATERAL %s z WHERE z.present$q$,
        lb_link_cands_sql(c.d, c.bs, c.cs, 'to_key', 'from_key', k, rel),
        lb_link_eff_sql(c.d, c.bs, c.cs, c.hs, 'c.other', 'c.relation', k));
    RETURN format($q$SELECT y.relation, y.from_key, y.to_key, CASE y.origin WHEN 'r' THEN 'ref' ELSE 'link' END
  FROM (%s) y
 ORDER BY 1, 2, 3$q$,
        CASE p_direction WHEN 'out' THEN q_out WHEN 'in' THEN q_in ELSE q_out || E'\nUNION\n' || q_in END);
END
$$;

CREATE OR REPLACE FUNCTION lb_links(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL)
    RETURNS TABLE (relation text, from_key text, to_key text, origin text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_links_sql(p_branch, p_key, p_direction, p_relation, p_at);
BEGIN
    PERFORM lb_require_present(p_branch, p_key, p_at);
    RETURN QUERY EXECUTE s;
END
$$;

CREATE OR REPLACE FUNCTION lb_neighborhood_sql(p_branch text, p_key text, p_depth int, p_limit int, p_fanout int DEFAULT 20) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
    ctes text;
    seen text;
    edges text;
    i int;
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
    ctes := format('n0 AS (SELECT %L::text COLLATE "C" AS key)', p_key);
    seen := 'SELECT key FROM n0';
    edges := '';
    FOR i IN 1..p_depth LOOP
        ctes := ctes || format($q$,
e%1$s AS (SELECT l.* FROM n%2$s p CROSS JOIN LATERAL (
    (SELECT z.relation, z.from_key, z.to_key, z.origin, z.to_key AS other
       FROM %3$s c CROSS JOIN LATERAL %4$s z
      WHERE z.present ORDER BY c.relation, c.other LIMIT %5$s)
    UNION ALL
    (SELECT z.relation, z.from_key, z.to_key, z.origin, z.from_key AS other
       FROM %6$s c CROSS JOIN LATERAL %7$s z
      WHERE z.present ORDER BY c.relation, c.other LIMIT %5$s)) l),
n%1$s AS (SELECT DISTINCT e.other AS key FROM e%1$s e
    WHERE e.other NOT IN (%8$s) ORDER BY e.other LIMIT %9$s)$q$,
            i, i - 1,
            lb_link_cands_sql(c.d, c.bs, c.cs, 'from_key', 'to_key', 'p.key', ''),
            lb_link_eff_sql(c.d, c.bs, c.cs, c.hs, 'p.key', 'c.relation', 'c.other'),
            p_fanout,
            lb_link_cands_sql(c.d, c.bs, c.cs, 'to_key', 'from_key', 'p.key', ''),
            lb_link_eff_sql(c.d, c.bs, c.cs, c.hs, 'c.other', 'c.relation', 'p.key'),
            seen, p_limit);
        seen := seen || format(' UNION ALL SELECT key FROM n%s', i);
        edges := edges || CASE WHEN i > 1 THEN ' UNION ' ELSE '' END
                 || format('SELECT relation, from_key, to_key, origin FROM e%s', i);
    END LOOP;
    RETURN format($q$WITH %1$s,
nodes AS (SELECT a.key, min(a.depth) AS depth FROM (%2$s) a GROUP BY a.key),
recs AS (SELECT e.key::text AS key, e.kind::text AS kind, e.title, n.depth
    FROM nodes n CROSS JOIN LATERAL %3$s e
   WHERE e.present
   ORDER BY n.depth, n.key LIMIT %4$s),
links AS (SELECT DISTINCT x.relation::text AS relation, x.from_key::text AS from_key, x.to_key::text AS to_key, x.origin
    FROM (%5$s) x
   WHERE x.from_key IN (SELECT key FROM recs) AND x.to_key IN (SELECT key FROM recs))
SELECT 'record'::text, key, kind, title, depth, NULL::text, NULL::text, NULL::text, NULL::text FROM recs
UNION ALL
SELECT 'link', NULL, NULL, NULL, NULL, relation, from_key, to_key, CASE origin WHEN 'r' THEN 'ref' ELSE 'link' END FROM links$q$,
        ctes,
        (SELECT string_agg(format('SELECT key, %s AS depth FROM n%s', j, j), ' UNION ALL ') FROM generate_series(0, p_depth) j),
        lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, 'n.key'), p_limit, edges);
END
$$;

CREATE OR REPLACE FUNCTION lb_neighborhood(p_branch text, p_key text, p_depth int DEFAULT 2, p_limit int DEFAULT 200, p_fanout int DEFAULT 20)
    RETURNS TABLE (row_type text, key text, kind text, title text, depth int,
                   relation text, from_key text, to_key text, origin text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_neighborhood_sql(p_branch, p_key, p_depth, p_limit, p_fanout);
BEGIN
    PERFORM lb_require_present(p_branch, p_key, NULL);
    RETURN QUERY EXECUTE s;
END
$$;

CREATE OR REPLACE FUNCTION lb_rec_page_sql(d int, bs int[], cs bigint[], hs bigint[], cands text, fin text, p_limit int) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT format($q$SELECT DISTINCT ON (x.ord) x.key, x.kind, x.title, x."values", x.id FROM (
  SELECT c.key AS ord, e.key::text AS key, e.kind::text AS kind, e.title, e."values", rv.id
    FROM %2$s c
   CROSS JOIN LATERAL %3$s e
    LEFT JOIN revisions rv ON rv.domain_id = %1$L AND rv.seq = e.seq
   WHERE e.present%4$s
   ORDER BY c.key
   LIMIT %5$s) x
 ORDER BY x.ord
 LIMIT %6$s$q$, d, cands, lb_rec_eff_sql(d, bs, cs, hs, 'c.key'), fin, p_limit * 2 * cardinality(bs), p_limit)
$$;

CREATE OR REPLACE FUNCTION lb_search_source_levels(d int, bs int[], cs bigint[], hs bigint[]) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
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
            s := s || E'\n UNION ALL\n' || format($q$SELECT x.key, x.kind, x.title, lb_search_vector(%1$L, %2$L, x.kind, x.title, x."values") AS search
      FROM (%4$s) ck
     CROSS JOIN LATERAL (SELECT h.key, h.kind, h.title, h."values", h.op FROM mat_history h
             WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = ck.key AND h.seq <= %3$L
             ORDER BY h.seq DESC LIMIT 1) x
     WHERE x.op <> 'delete'%5$s$q$, d, bs[i], cs[i], lb_changed_sql(d, bs[i], cs[i], ''),
                       lb_rec_upper_sql(d, bs, cs, hs, i, 'x.key'));
        END IF;
    END LOOP;
    RETURN format('FROM (%s) m WHERE true', s);
END
$$;

DROP FUNCTION IF EXISTS lb_search_vector_sql(int, int);
DROP FUNCTION IF EXISTS lb_rec_eff_levels_sql(int, int[], bigint[], text);
DROP FUNCTION IF EXISTS lb_levels_sql(text, int, int[], bigint[], text, text, text, int, int, int);
DROP FUNCTION IF EXISTS lb_levels_stmt(text);
DROP FUNCTION IF EXISTS lb_level_cuts(bigint[], bigint[]);
