-- Lorebase branch reads: every read on overlay branches, on copies still
-- copying and as of a past Revision (at=) resolves the level chain.
--
-- The state of branch X as of seq S (S = X.head_seq for a head read, the
-- seq of the Revision for at=) is read through its levels:
-- levels = [(X, S)]; while the last level's branch is an overlay or a copy
-- still copying (for at=: any branch with a base), append
-- (base, least(cut, fork_seq)). The effective Record of a key is the first
-- level (b, c) that has a say: its mat_records row r if r.seq <= c (a
-- tombstone: absent), else the newest mat_history row of b at or before c
-- (a delete: absent), else no say at that level. Links likewise over
-- mat_links / mat_link_history.
--
-- A single level at its head keeps the statements of 0002 (renamed
-- F_single below, so plans are unchanged); any other chain gets one
-- statement built with the branch ids and cuts as literals.
--
-- Cost note: attribute queries, Kind pages and search on a level read at a
-- cut older than that branch's head also read the keys the branch changed
-- after the cut (revisions_log_idx range of the branch after the cut): a
-- Record whose values or Kind changed after the cut is found through its
-- history row at the cut.

ALTER FUNCTION lb_get_sql(text, text, bigint) RENAME TO lb_get_sql_single;
ALTER FUNCTION lb_page_sql(text, text, text, int, bigint) RENAME TO lb_page_sql_single;
ALTER FUNCTION lb_query_by_attribute_sql(text, text, text, text, text, int) RENAME TO lb_query_by_attribute_sql_single;
ALTER FUNCTION lb_links_sql(text, text, text, text, bigint) RENAME TO lb_links_sql_single;
ALTER FUNCTION lb_neighborhood_sql(text, text, int, int, int) RENAME TO lb_neighborhood_sql_single;
ALTER FUNCTION lb_history_sql(text, text, bigint, int) RENAME TO lb_history_sql_single;
ALTER FUNCTION lb_lineage_sql(text, text) RENAME TO lb_lineage_sql_single;
ALTER FUNCTION lb_resolve_sql(text, text, text, int, int, int) RENAME TO lb_resolve_sql_single;

------------------------------------------------------------------------------
-- The level chain.

-- lb_levels resolves the levels of branch b as of seq s: branch ids, cuts
-- and the head_seq of each level's branch. p_through follows every base
-- (at= reads and the Revision log: a ready copy's past is its base's);
-- otherwise only overlays and copies still copying read through.
-- SECURITY INVOKER: the commit-side helpers call it as lorebase_app.
CREATE FUNCTION lb_levels(d int, b int, s bigint, p_through boolean,
                          OUT bs int[], OUT cs bigint[], OUT hs bigint[])
    LANGUAGE plpgsql STABLE
    SET search_path = public, pg_temp
AS $$
DECLARE
    r record;
    cur int := b;
    cut bigint := s;
BEGIN
    bs := '{}';
    cs := '{}';
    hs := '{}';
    LOOP
        SELECT x.id, x.mode, x.state, x.base_id, x.fork_seq, x.head_seq INTO r
          FROM refs x WHERE x.domain_id = d AND x.id = cur;
        EXIT WHEN NOT FOUND;
        bs := bs || r.id;
        cs := cs || cut;
        hs := hs || r.head_seq;
        EXIT WHEN r.base_id IS NULL OR cardinality(bs) >= 64
             OR NOT (r.mode = 'overlay' OR r.state = 'copying' OR p_through);
        cut := least(cut, coalesce(r.fork_seq, 0));
        cur := r.base_id;
    END LOOP;
END
$$;

-- lb_scope_chain resolves a branch of the Domain in scope and its levels
-- at the head (p_at NULL) or as of seq p_at. single: one level read at its
-- head (the statements of 0002 apply).
CREATE FUNCTION lb_scope_chain(p_branch text, p_at bigint,
                               OUT d int, OUT b int, OUT bs int[], OUT cs bigint[], OUT hs bigint[], OUT single boolean)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    SELECT * INTO bs, cs, hs FROM lb_levels(d, b, coalesce(p_at, h), p_at IS NOT NULL);
    single := p_at IS NULL AND cardinality(bs) = 1;
END
$$;

-- lb_chain lists the levels of a branch (at the head, or as of seq p_at).
CREATE FUNCTION lb_chain(p_branch text, p_at bigint DEFAULT NULL)
    RETURNS TABLE (level int, branch_id int, cut bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    RETURN QUERY SELECT i, c.bs[i], c.cs[i] FROM generate_series(1, cardinality(c.bs)) i;
END
$$;

-- lb_at_seq resolves the Revision of at= to its seq: NULL for none (the
-- head). The Revision must be one of the branch's levels (following every
-- base) at or before that level's cut: a Revision of the branch, or of an
-- ancestor at or before the fork.
CREATE OR REPLACE FUNCTION lb_at_seq(p_branch text, p_revision text) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    s bigint;
    rb int;
    lv record;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_revision IS NULL OR p_revision = '' THEN
        RETURN NULL;
    END IF;
    SELECT r.seq, r.branch_id INTO s, rb FROM revisions r WHERE r.domain_id = d AND r.id = p_revision;
    IF FOUND THEN
        SELECT * INTO lv FROM lb_levels(d, b, h, true);
        IF EXISTS (SELECT 1 FROM generate_series(1, cardinality(lv.bs)) i WHERE lv.bs[i] = rb AND s <= lv.cs[i]) THEN
            RETURN s;
        END IF;
    END IF;
    RAISE EXCEPTION 'revision not found' USING ERRCODE = 'P0002';
END
$$;

------------------------------------------------------------------------------
-- Statement fragments. k, f, rel, t are SQL expressions (quoted literals or
-- column references built by the callers); everything else is formatted
-- with %L.

-- lb_rec_say_sql: the say of one level (lvl, branch b, cut c) about the
-- Record of key expression k: at most one row (no row: no say). full: the
-- cut is at or past the branch's head, so every row of b is at or before it.
CREATE FUNCTION lb_rec_say_sql(d int, lvl int, b int, c bigint, full_head boolean, k text) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT CASE WHEN full_head THEN format($q$SELECT %3$s AS lvl, %2$L::int AS branch_id, true AS cur, NOT sr.deleted AS present,
       sr.key, sr.kind, sr.title, sr."values", sr.seq, sr.search, sr.lineage, sr.created_seq, sr.versions
  FROM mat_records sr
 WHERE sr.domain_id = %1$L AND sr.branch_id = %2$L AND sr.key = %4$s$q$, d, b, lvl, k)
ELSE format($q$SELECT %3$s AS lvl, %2$L::int AS branch_id, sr.seq <= %4$L AS cur,
       CASE WHEN sr.seq <= %4$L THEN NOT sr.deleted ELSE sh.op <> 'delete' END AS present,
       sr.key,
       CASE WHEN sr.seq <= %4$L THEN sr.kind ELSE sh.kind END AS kind,
       CASE WHEN sr.seq <= %4$L THEN sr.title ELSE sh.title END AS title,
       CASE WHEN sr.seq <= %4$L THEN sr."values" ELSE sh."values" END AS "values",
       CASE WHEN sr.seq <= %4$L THEN sr.seq ELSE sh.seq END AS seq,
       CASE WHEN sr.seq <= %4$L THEN sr.search END AS search,
       sr.lineage, sr.created_seq, sr.versions
  FROM mat_records sr
  LEFT JOIN LATERAL (SELECT sh.op, sh.kind, sh.title, sh."values", sh.seq FROM mat_history sh
         WHERE sr.seq > %4$L AND sh.domain_id = %1$L AND sh.branch_id = %2$L AND sh.key = sr.key AND sh.seq <= %4$L
         ORDER BY sh.seq DESC LIMIT 1) sh ON true
 WHERE sr.domain_id = %1$L AND sr.branch_id = %2$L AND sr.key = %5$s AND (sr.seq <= %4$L OR sh.seq IS NOT NULL)$q$,
    d, b, lvl, c, k)
END
$$;

-- lb_rec_eff_sql: the effective Record of key expression k over the
-- levels, as a parenthesized subquery of at most one row (columns of
-- lb_rec_say_sql; present false: absent). Use it as
-- CROSS JOIN LATERAL <it> e ... WHERE e.present.
CREATE FUNCTION lb_rec_eff_sql(d int, bs int[], cs bigint[], hs bigint[], k text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    s text := '';
    i int;
BEGIN
    IF cardinality(bs) = 1 THEN
        RETURN '(' || lb_rec_say_sql(d, 1, bs[1], cs[1], cs[1] >= hs[1], k) || ')';
    END IF;
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
               || '(' || lb_rec_say_sql(d, i, bs[i], cs[i], cs[i] >= hs[i], k) || ')';
    END LOOP;
    RETURN format('(SELECT * FROM (%s) s ORDER BY s.lvl LIMIT 1)', s);
END
$$;

-- lb_rec_upper_sql: a condition true when no level above level n has a say
-- about key expression k (so level n's row is the effective one).
CREATE FUNCTION lb_rec_upper_sql(d int, bs int[], cs bigint[], hs bigint[], n int, k text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    s text := '';
    i int;
BEGIN
    FOR i IN 1..n - 1 LOOP
        IF cs[i] >= hs[i] THEN
            s := s || format(' AND NOT EXISTS (SELECT 1 FROM mat_records u WHERE u.domain_id = %L AND u.branch_id = %L AND u.key = %s)',
                             d, bs[i], k);
        ELSE
            s := s || format(' AND NOT EXISTS (%s)', lb_rec_say_sql(d, i, bs[i], cs[i], false, k));
        END IF;
    END LOOP;
    RETURN s;
END
$$;

-- lb_rec_meta_sql: lineage, created_seq and versions of the effective
-- Record e (a LATERAL subquery over e): e's own when it is a mat_records
-- row, else computed from the Record's history over the levels up to e's
-- version (since its last creation; an Attribute's seq is the last change
-- of its value).
CREATE FUNCTION lb_rec_meta_sql(d int, bs int[], cs bigint[]) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    arms text := '';
    i int;
BEGIN
    FOR i IN 1..cardinality(bs) LOOP
        arms := arms || CASE WHEN i > 1 THEN ' UNION ALL ' ELSE '' END
             || format($q$SELECT %3$s AS lvl, h.seq, h.op, h."values" FROM mat_history h
              WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = e.key AND h.seq <= least(%4$L::bigint, e.seq)$q$,
                       d, bs[i], i, cs[i]);
    END LOOP;
    RETURN format($q$(SELECT e.lineage, e.created_seq, e.versions WHERE e.cur
   UNION ALL
   SELECT * FROM (
    WITH hist AS (SELECT DISTINCT ON (u.seq) u.seq, u.op, u."values" FROM (%1$s) u ORDER BY u.seq, u.lvl),
    since AS (SELECT * FROM hist WHERE hist.seq > coalesce((SELECT max(x.seq) FROM hist x WHERE x.op = 'delete'), 0)),
    pairs AS (SELECT p.seq, p."values" AS v, lag(p."values") OVER (ORDER BY p.seq) AS prev FROM since p)
    SELECT (SELECT coalesce(jsonb_object_agg(z.a, z.s), '{}'::jsonb) FROM (
              SELECT a.a, max(p.seq) AS s FROM pairs p
               CROSS JOIN LATERAL (SELECT jsonb_object_keys(coalesce(p.v, '{}'::jsonb))
                                   UNION SELECT jsonb_object_keys(coalesce(p.prev, '{}'::jsonb))) a(a)
               WHERE p.prev IS NULL OR p.v -> a.a IS DISTINCT FROM p.prev -> a.a
               GROUP BY a.a) z),
           (SELECT min(since.seq) FROM since),
           (SELECT count(*) FROM hist)::int
     WHERE NOT e.cur) hm)$q$, arms);
END
$$;

-- lb_link_say_sql / lb_link_eff_sql: the same for the Link
-- (f, rel, t): columns lvl, present, from_key, relation, to_key, origin.
CREATE FUNCTION lb_link_say_sql(d int, lvl int, b int, c bigint, full_head boolean, f text, rel text, t text) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT CASE WHEN full_head THEN format($q$SELECT %3$s AS lvl, NOT sr.deleted AS present, sr.from_key, sr.relation, sr.to_key, sr.origin
  FROM mat_links sr
 WHERE sr.domain_id = %1$L AND sr.branch_id = %2$L AND sr.from_key = %4$s AND sr.relation = %5$s AND sr.to_key = %6$s$q$,
    d, b, lvl, f, rel, t)
ELSE format($q$SELECT %3$s AS lvl, CASE WHEN sr.seq <= %4$L THEN NOT sr.deleted ELSE sh.op = 'link' END AS present,
       sr.from_key, sr.relation, sr.to_key, CASE WHEN sr.seq <= %4$L THEN sr.origin ELSE sh.origin END AS origin
  FROM mat_links sr
  LEFT JOIN LATERAL (SELECT sh.op, sh.origin FROM mat_link_history sh
         WHERE sr.seq > %4$L AND sh.domain_id = %1$L AND sh.branch_id = %2$L AND sh.from_key = sr.from_key
           AND sh.relation = sr.relation AND sh.to_key = sr.to_key AND sh.seq <= %4$L
         ORDER BY sh.seq DESC LIMIT 1) sh ON true
 WHERE sr.domain_id = %1$L AND sr.branch_id = %2$L AND sr.from_key = %5$s AND sr.relation = %6$s AND sr.to_key = %7$s
   AND (sr.seq <= %4$L OR sh.op IS NOT NULL)$q$, d, b, lvl, c, f, rel, t)
END
$$;

CREATE FUNCTION lb_link_eff_sql(d int, bs int[], cs bigint[], hs bigint[], f text, rel text, t text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    s text := '';
    i int;
BEGIN
    IF cardinality(bs) = 1 THEN
        RETURN '(' || lb_link_say_sql(d, 1, bs[1], cs[1], cs[1] >= hs[1], f, rel, t) || ')';
    END IF;
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
               || '(' || lb_link_say_sql(d, i, bs[i], cs[i], cs[i] >= hs[i], f, rel, t) || ')';
    END LOOP;
    RETURN format('(SELECT * FROM (%s) s ORDER BY s.lvl LIMIT 1)', s);
END
$$;

-- lb_link_cands_sql: the distinct (relation, other end) of the Link rows
-- of every level whose end col (from_key or to_key) is the expression k,
-- present or changed after the level's cut. other is the other end column.
CREATE FUNCTION lb_link_cands_sql(d int, bs int[], cs bigint[], col text, other text, k text, rel text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    s text := '';
    i int;
BEGIN
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN ' UNION ALL ' ELSE '' END
             || format('SELECT o.relation, o.%I AS other FROM mat_links o WHERE o.domain_id = %L AND o.branch_id = %L AND o.%I = %s%s AND (NOT o.deleted OR o.seq > %L)',
                       other, d, bs[i], col, k, rel, cs[i]);
    END LOOP;
    RETURN format('(SELECT DISTINCT u.relation, u.other FROM (%s) u)', s);
END
$$;

-- lb_changed_sql: the keys of Records branch b changed after seq c (from
-- its Revisions), greater than after, in key order.
CREATE FUNCTION lb_changed_sql(d int, b int, c bigint, after text) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT format($q$SELECT DISTINCT (ch ->> 'key') COLLATE "C" AS key
  FROM revisions v CROSS JOIN LATERAL jsonb_array_elements(v.changes) ch
 WHERE v.domain_id = %1$L AND v.branch_id = %2$L AND v.seq > %3$L AND ch ->> 'op' IN ('put', 'patch', 'delete')
   AND (ch ->> 'key') COLLATE "C" > %4$L$q$, d, b, c, coalesce(after, ''))
$$;

-- lb_rec_cands_sql: candidate keys greater than after from every level,
-- as one UNION ALL of ordered arms (Merge Append in key order): the
-- level's rows matching pred (present, or
-- changed after its cut) and, when filtered (pred on Kind or values) and
-- the level is read before its head, the keys it changed after the cut. A
-- key comes at most once per arm, and there are at most two arms per
-- level: callers take 2 * levels * limit resolved rows, then each key once
-- (a DISTINCT over the stream is estimated at 200 rows and makes the
-- planner read every candidate). Each arm is planned on its own; its
-- non-constant LIMIT (NULL: none) makes the planner plan it for a fraction
-- of its rows, so it reads an index in key order instead of sorting the
-- whole range. (Flattened arms of the partitioned table do not get merged
-- index scans.)
CREATE FUNCTION lb_rec_cands_sql(d int, bs int[], cs bigint[], hs bigint[], pred text, filtered boolean, after text) RETURNS text
    LANGUAGE plpgsql IMMUTABLE
AS $$
DECLARE
    s text := '';
    i int;
BEGIN
    FOR i IN 1..cardinality(bs) LOOP
        s := s || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
             || format('(SELECT m.key FROM mat_records m WHERE m.domain_id = %L AND m.branch_id = %L%s AND m.key > %L AND (NOT m.deleted OR m.seq > %L) ORDER BY m.key LIMIT (SELECT NULL::bigint))',
                       d, bs[i], pred, coalesce(after, ''), cs[i]);
        IF filtered AND cs[i] < hs[i] THEN
            s := s || E'\n UNION ALL\n(' || lb_changed_sql(d, bs[i], cs[i], after) || ' ORDER BY 1)';
        END IF;
    END LOOP;
    RETURN '(' || s || ')';
END
$$;

-- lb_rec_page_sql: the keyset page statement over candidates cands:
-- effective present Records passing fin, in key order, each once.
CREATE FUNCTION lb_rec_page_sql(d int, bs int[], cs bigint[], hs bigint[], cands text, fin text, p_limit int) RETURNS text
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

-- lb_search_vector computes a Record version's search vector as the commit
-- does, from the Kind's search Attributes in the branch's schema.
CREATE FUNCTION lb_search_vector(d int, b int, p_kind text, p_title text, p_values jsonb) RETURNS tsvector
    LANGUAGE sql STABLE
    SET search_path = public, pg_temp
AS $$
SELECT setweight(to_tsvector('simple', coalesce(p_title, '')), 'A') || setweight(to_tsvector('simple', coalesce((
    SELECT string_agg(p_values ->> (a ->> 'name'), ' ')
      FROM schemas sc, jsonb_array_elements(sc.compiled -> 'kinds' -> p_kind -> 'attributes') a
     WHERE sc.domain_id = d AND sc.branch_id = b AND (a ->> 'search')::boolean
       AND a ->> 'name' IS DISTINCT FROM sc.compiled -> 'kinds' -> p_kind ->> 'title'), '')), 'B')
$$;

-- lb_require_present raises 'record not found' unless the Record is
-- present on the branch (at the head or as of seq p_at).
CREATE FUNCTION lb_require_present(p_branch text, p_key text, p_at bigint) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
    ok boolean;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF c.single THEN
        PERFORM lb_require_record(c.d, c.b, p_key, NULL);
        RETURN;
    END IF;
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM %s e WHERE e.present)', lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, format('%L', p_key)))
       INTO ok;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
END
$$;

------------------------------------------------------------------------------
-- Get by key.

CREATE FUNCTION lb_get_sql(p_branch text, p_key text, p_at bigint DEFAULT NULL) RETURNS text
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

------------------------------------------------------------------------------
-- Keyset page of Records.

CREATE FUNCTION lb_page_sql(p_branch text, p_kind text, p_after text, p_limit int, p_at bigint DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
    pred text := '';
    fin text := '';
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_page_sql_single(p_branch, p_kind, p_after, p_limit, NULL);
    END IF;
    IF coalesce(p_kind, '') <> '' THEN
        pred := format(' AND m.kind = %L', p_kind);
        fin := format(' AND e.kind = %L', p_kind);
    END IF;
    RETURN lb_rec_page_sql(c.d, c.bs, c.cs, c.hs, lb_rec_cands_sql(c.d, c.bs, c.cs, c.hs, pred, pred <> '', p_after), fin, p_limit);
END
$$;

------------------------------------------------------------------------------
-- Query by Attribute. Every level's candidates carry the literal
-- predicate, so a level with the per-Attribute index of store.index reads
-- it; an overlay's own rows are read through (domain_id, branch_id, kind,
-- key) and filtered.

CREATE FUNCTION lb_query_by_attribute_sql(p_branch text, p_kind text, p_attribute text, p_value text,
                                          p_after text, p_limit int) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF coalesce(p_kind, '') = '' OR coalesce(p_attribute, '') = '' OR p_value IS NULL THEN
        RAISE EXCEPTION 'kind, attribute and value are required' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_query_by_attribute_sql_single(p_branch, p_kind, p_attribute, p_value, p_after, p_limit);
    END IF;
    RETURN lb_rec_page_sql(c.d, c.bs, c.cs, c.hs,
        lb_rec_cands_sql(c.d, c.bs, c.cs, c.hs,
                         format(' AND m.kind = %L AND (m."values" ->> %L) = %L', p_kind, p_attribute, p_value), true, p_after),
        format(' AND e.kind = %L AND (e."values" ->> %L) = %L', p_kind, p_attribute, p_value), p_limit);
END
$$;

------------------------------------------------------------------------------
-- Links of a Record.

CREATE FUNCTION lb_links_sql(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL) RETURNS text
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

------------------------------------------------------------------------------
-- Neighborhood: hops over the effective Links, Records resolved.

CREATE FUNCTION lb_neighborhood_sql(p_branch text, p_key text, p_depth int, p_limit int, p_fanout int DEFAULT 20) RETURNS text
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

------------------------------------------------------------------------------
-- History of a Record: the branch's own rows, then each lower level's rows
-- at or before its cut, newest first, before seq p_before.

CREATE FUNCTION lb_history_sql(p_branch text, p_key text, p_before bigint, p_limit int) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
    arms text := '';
    i int;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_history_sql_single(p_branch, p_key, p_before, p_limit);
    END IF;
    FOR i IN 1..cardinality(c.bs) LOOP
        arms := arms || CASE WHEN i > 1 THEN E'\n UNION ALL\n' ELSE '' END
             || format($q$(SELECT %3$s AS lvl, h.* FROM mat_history h
         WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = %4$L AND h.seq <= %5$L AND h.seq < %6$L
         ORDER BY h.seq DESC LIMIT %7$s)$q$, c.d, c.bs[i], i, p_key, c.cs[i],
                       coalesce(p_before, 9223372036854775807), p_limit);
    END LOOP;
    RETURN format($q$SELECT x.revision_id, x.seq, x.op, x."values", r.author, r.message, r.at, coalesce(x.provenance, r.provenance)
  FROM (SELECT DISTINCT ON (u.seq) u.* FROM (%2$s) u ORDER BY u.seq DESC, u.lvl LIMIT %3$s) x
  LEFT JOIN revisions r ON r.domain_id = %1$L AND r.seq = x.seq
 ORDER BY x.seq DESC$q$, c.d, arms, p_limit);
END
$$;

CREATE OR REPLACE FUNCTION lb_history(p_branch text, p_key text, p_before bigint, p_limit int)
    RETURNS TABLE (revision text, seq bigint, op text, "values" jsonb, author text, message text,
                   at timestamptz, provenance jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_history_sql(p_branch, p_key, p_before, p_limit);
    c record;
    ok boolean;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    SELECT bool_or(x.ok) INTO ok FROM generate_series(1, cardinality(c.bs)) i
     CROSS JOIN LATERAL (SELECT EXISTS (SELECT 1 FROM mat_history h
                 WHERE h.domain_id = c.d AND h.branch_id = c.bs[i] AND h.key = p_key AND h.seq <= c.cs[i]) AS ok) x;
    IF NOT coalesce(ok, false) THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY EXECUTE s;
END
$$;

------------------------------------------------------------------------------
-- Lineage of the effective Record; each seq's history row is probed on the
-- branch of its Revision.

CREATE FUNCTION lb_lineage_sql(p_branch text, p_key text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF c.single THEN
        RETURN lb_lineage_sql_single(p_branch, p_key);
    END IF;
    RETURN format($q$SELECT e.key::text, e.kind::text, m.versions,
       cr.id, cr.author, cr.at, coalesce(ch.provenance, cr.provenance),
       (SELECT coalesce(jsonb_object_agg(l.attr, jsonb_build_object(
                   'value', e."values" -> l.attr,
                   'revision', r.id, 'seq', r.seq, 'author', r.author, 'at', r.at,
                   'provenance', coalesce(hh.provenance, r.provenance))), '{}'::jsonb)
          FROM jsonb_each_text(m.lineage) l(attr, s)
          LEFT JOIN revisions r ON r.domain_id = %1$L AND r.seq = l.s::bigint
          LEFT JOIN mat_history hh ON hh.domain_id = %1$L AND hh.branch_id = r.branch_id
                                  AND hh.key = e.key AND hh.seq = l.s::bigint)
  FROM %2$s e
 CROSS JOIN LATERAL %3$s m(lineage, created_seq, versions)
  LEFT JOIN revisions cr ON cr.domain_id = %1$L AND cr.seq = m.created_seq
  LEFT JOIN mat_history ch ON ch.domain_id = %1$L AND ch.branch_id = cr.branch_id AND ch.key = e.key AND ch.seq = m.created_seq
 WHERE e.present$q$, c.d, lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, format('%L', p_key)), lb_rec_meta_sql(c.d, c.bs, c.cs));
END
$$;

------------------------------------------------------------------------------
-- Search over the levels.

-- lb_search_terms_levels: the query's words, their corrections from the
-- lexicons of every level (a word any level holds is not corrected) and
-- each word's term.
CREATE FUNCTION lb_search_terms_levels(d int, bs int[], p_query text)
    RETURNS TABLE (word text, corrections text[], term tsquery)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    w text;
    c text[];
    t tsquery;
    i int;
BEGIN
    IF cardinality(bs) = 1 THEN
        RETURN QUERY SELECT * FROM lb_search_terms(d, bs[1], p_query);
        RETURN;
    END IF;
    FOR w IN SELECT x FROM unnest(tsvector_to_array(to_tsvector('simple', left(coalesce(p_query, ''), 500)))) x LIMIT 16 LOOP
        c := '{}';
        t := plainto_tsquery('simple', w);
        IF numnode(t) = 0 THEN
            CONTINUE;
        END IF;
        IF length(w) >= 3 AND w ~ '[[:alpha:]]' AND NOT EXISTS (
               SELECT 1 FROM unnest(bs) lb(b), mat_lexicon l WHERE l.domain_id = d AND l.branch_id = lb.b AND l.word = w) THEN
            SELECT coalesce(array_agg(z.word ORDER BY z.sim DESC, z.word), '{}') INTO c FROM (
                SELECT y.word, max(y.sim) AS sim FROM unnest(bs) lb(b)
                 CROSS JOIN LATERAL (SELECT l.word, similarity(l.word, w) AS sim FROM mat_lexicon l
                        WHERE l.domain_id = d AND l.branch_id = lb.b AND l.word % w
                        ORDER BY 2 DESC, 1 LIMIT 3) y
                 GROUP BY y.word
                 ORDER BY 2 DESC, 1 LIMIT 3) z;
            FOR i IN 1..coalesce(array_length(c, 1), 0) LOOP
                t := t || plainto_tsquery('simple', c[i]);
            END LOOP;
        END IF;
        word := w;
        corrections := c;
        term := t;
        RETURN NEXT;
    END LOOP;
END
$$;

-- lb_search_source_levels: the FROM clause of the search statements over
-- the levels. Per level: its present rows at or before its cut that no
-- upper level has a say about (GIN index), and, when the level is read
-- before its head, the keys it changed after the cut, as their history
-- version at the cut with the search vector computed as the commit does.
CREATE FUNCTION lb_search_source_levels(d int, bs int[], cs bigint[], hs bigint[]) RETURNS text
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

CREATE OR REPLACE FUNCTION lb_search_sql(p_branch text, p_query text, p_kind text, p_limit int, p_at bigint DEFAULT NULL,
                                         p_candidates int DEFAULT 1000, p_partial_candidates int DEFAULT 100)
    RETURNS TABLE (statement text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
    src text;
    terms tsquery[];
    full_q tsquery;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    src := CASE WHEN c.single THEN lb_search_source(c.d, c.b, NULL) ELSE lb_search_source_levels(c.d, c.bs, c.cs, c.hs) END;
    SELECT array_agg(t.term) INTO terms FROM lb_search_terms_levels(c.d, c.bs, p_query) t;
    IF terms IS NULL THEN
        RETURN;
    END IF;
    SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
    statement := lb_search_full_sql(src, p_kind, full_q, p_candidates, p_limit);
    RETURN NEXT;
    IF cardinality(terms) > 1 THEN
        statement := lb_search_partial_sql(src, p_kind, terms, full_q, p_partial_candidates, p_limit);
        RETURN NEXT;
    END IF;
END
$$;

CREATE OR REPLACE FUNCTION lb_search(p_branch text, p_query text, p_kind text, p_limit int, p_at bigint DEFAULT NULL,
                                     p_candidates int DEFAULT 1000, p_partial_min int DEFAULT 5, p_partial_candidates int DEFAULT 100)
    RETURNS TABLE (key text, kind text, title text, score real, match text, corrections jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
    SET enable_seqscan = off
AS $$
DECLARE
    c record;
    terms tsquery[];
    corr jsonb;
    full_q tsquery;
    src text;
    n int := 0;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 OR p_candidates IS NULL OR p_candidates < 1
       OR p_partial_candidates IS NULL OR p_partial_candidates < 1 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    src := CASE WHEN c.single THEN lb_search_source(c.d, c.b, NULL) ELSE lb_search_source_levels(c.d, c.bs, c.cs, c.hs) END;
    SELECT array_agg(t.term),
           coalesce(jsonb_object_agg(t.word, to_jsonb(t.corrections)) FILTER (WHERE cardinality(t.corrections) > 0), '{}')
      INTO terms, corr
      FROM lb_search_terms_levels(c.d, c.bs, p_query) t;
    IF terms IS NOT NULL THEN
        SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
        RETURN QUERY EXECUTE lb_search_full_sql(src, p_kind, full_q, p_candidates, p_limit);
        GET DIAGNOSTICS n = ROW_COUNT;
        IF n < coalesce(p_partial_min, 0) AND n < p_limit AND cardinality(terms) > 1 THEN
            RETURN QUERY EXECUTE lb_search_partial_sql(src, p_kind, terms, full_q, p_partial_candidates, p_limit - n);
        END IF;
    END IF;
    key := NULL;
    kind := NULL;
    title := NULL;
    score := NULL;
    match := 'corrections';
    corrections := coalesce(corr, '{}');
    RETURN NEXT;
END
$$;

------------------------------------------------------------------------------
-- Entity resolution over the levels.

CREATE FUNCTION lb_resolve_sql(p_branch text, p_mention text, p_kind text, p_limit int,
                               p_candidates int DEFAULT 1000, p_partial_candidates int DEFAULT 100) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
    kind_e text := '';
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, NULL);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF c.single THEN
        RETURN lb_resolve_sql_single(p_branch, p_mention, p_kind, p_limit, p_candidates, p_partial_candidates);
    END IF;
    IF coalesce(p_kind, '') <> '' THEN
        kind_e := format(' AND e.kind = %L', p_kind);
    END IF;
    RETURN format($q$WITH k AS (
    SELECT e.key::text AS key, e.kind::text AS kind, e.title FROM %1$s e WHERE e.present%2$s),
s AS (
    SELECT s.key, s.kind, s.title, s.score, s.match
      FROM lb_search(%4$L, %3$L, %5$L, %6$s, NULL, %7$s, %6$s, %8$s) s
     WHERE s.match IN ('full', 'partial') AND s.key NOT IN (SELECT key FROM k)),
c AS (
    SELECT k.key, k.kind, k.title, 1::real AS score, 'key'::text AS reason, 0 AS prio FROM k
    UNION ALL
    SELECT s.key, s.kind, s.title, s.score, z.reason, z.prio
      FROM s CROSS JOIN LATERAL (
        SELECT CASE WHEN lower(s.title) = lower(%3$L) THEN 'title'
                    WHEN s.match = 'full' AND NOT EXISTS (
                         SELECT 1 FROM %9$s e
                          WHERE e.present AND coalesce(e.search, lb_search_vector(%10$L, e.branch_id, e.kind, e.title, e."values"))
                                @@ plainto_tsquery('simple', %3$L)) THEN 'typo'
                    ELSE 'partial' END AS reason) r
      CROSS JOIN LATERAL (SELECT r.reason, CASE r.reason WHEN 'title' THEN 1 WHEN 'typo' THEN 2 ELSE 3 END AS prio) z)
SELECT c.key, c.kind, c.title, c.score, c.reason FROM c
 ORDER BY c.prio, c.score DESC, c.key
 LIMIT %6$s$q$,
        lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, format('%L', p_mention)), kind_e, p_mention, p_branch,
        coalesce(p_kind, ''), p_limit, p_candidates, p_partial_candidates,
        lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, 's.key'), c.d);
END
$$;

------------------------------------------------------------------------------
-- Commit-side helpers: the effective state at the head of a branch (by id),
-- for the commit pipeline. They run as the caller (lorebase_app under
-- row-level security), in the Domain in scope.

-- lb_state_levels: the levels of branch p_branch at its head.
CREATE FUNCTION lb_state_levels(p_branch int, OUT d int, OUT bs int[], OUT cs bigint[], OUT hs bigint[])
    LANGUAGE plpgsql STABLE
    SET search_path = public, pg_temp
AS $$
DECLARE
    h bigint;
BEGIN
    d := lb_domain();
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.head_seq INTO h FROM refs r WHERE r.domain_id = d AND r.id = p_branch;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
    SELECT * INTO bs, cs, hs FROM lb_levels(d, p_branch, h, false);
END
$$;

-- lb_state_records: the effective, present Records among p_keys.
CREATE FUNCTION lb_state_records(p_branch int, p_keys text[])
    RETURNS TABLE (key text, kind text, title text, "values" jsonb, lineage jsonb, created_seq bigint, seq bigint, versions int)
    LANGUAGE plpgsql STABLE
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_state_levels(p_branch);
    IF cardinality(c.bs) = 1 THEN
        RETURN QUERY EXECUTE format($q$SELECT m.key::text, m.kind::text, m.title, m."values", m.lineage, m.created_seq, m.seq, m.versions
  FROM mat_records m
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = ANY ($1) AND NOT m.deleted$q$, c.d, p_branch) USING p_keys;
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format($q$SELECT e.key::text, e.kind::text, e.title, e."values", m.lineage, m.created_seq, e.seq, m.versions
  FROM (SELECT DISTINCT k COLLATE "C" AS key FROM unnest($1::text[]) k) q
 CROSS JOIN LATERAL %1$s e
 CROSS JOIN LATERAL %2$s m(lineage, created_seq, versions)
 WHERE e.present$q$, lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, 'q.key'), lb_rec_meta_sql(c.d, c.bs, c.cs)) USING p_keys;
END
$$;

-- lb_state_links: the effective, present Links with an end among p_keys.
CREATE FUNCTION lb_state_links(p_branch int, p_keys text[])
    RETURNS TABLE (from_key text, relation text, to_key text, origin "char")
    LANGUAGE plpgsql STABLE
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
    arms text := '';
    i int;
BEGIN
    SELECT * INTO c FROM lb_state_levels(p_branch);
    IF cardinality(c.bs) = 1 THEN
        RETURN QUERY EXECUTE format($q$SELECT l.from_key::text, l.relation::text, l.to_key::text, l.origin FROM mat_links l
 WHERE l.domain_id = %1$L AND l.branch_id = %2$L AND l.from_key = ANY ($1) AND NOT l.deleted
UNION
SELECT l.from_key::text, l.relation::text, l.to_key::text, l.origin FROM mat_links l
 WHERE l.domain_id = %1$L AND l.branch_id = %2$L AND l.to_key = ANY ($1) AND NOT l.deleted$q$, c.d, p_branch) USING p_keys;
        RETURN;
    END IF;
    FOR i IN 1..cardinality(c.bs) LOOP
        arms := arms || CASE WHEN i > 1 THEN ' UNION ALL ' ELSE '' END
             || format($q$SELECT o.from_key, o.relation, o.to_key FROM mat_links o
   WHERE o.domain_id = %1$L AND o.branch_id = %2$L AND o.from_key = ANY ($1) AND (NOT o.deleted OR o.seq > %3$L)
  UNION ALL
  SELECT o.from_key, o.relation, o.to_key FROM mat_links o
   WHERE o.domain_id = %1$L AND o.branch_id = %2$L AND o.to_key = ANY ($1) AND (NOT o.deleted OR o.seq > %3$L)$q$,
                       c.d, c.bs[i], c.cs[i]);
    END LOOP;
    RETURN QUERY EXECUTE format($q$SELECT z.from_key::text, z.relation::text, z.to_key::text, z.origin
  FROM (SELECT DISTINCT u.from_key, u.relation, u.to_key FROM (%1$s) u) q
 CROSS JOIN LATERAL %2$s z
 WHERE z.present$q$, arms, lb_link_eff_sql(c.d, c.bs, c.cs, c.hs, 'q.from_key', 'q.relation', 'q.to_key')) USING p_keys;
END
$$;

-- lb_state_unique: the effective, present Records of Kind p_kind whose
-- values ->> p_attr is among p_values (literal predicates: per-Attribute
-- partial indexes match). SECURITY DEFINER, Domain from lb_domain(): under
-- row-level security ->> is not leakproof and could only filter.
CREATE FUNCTION lb_state_unique(p_branch int, p_kind text, p_attr text, p_values text[])
    RETURNS TABLE (key text, value text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    c record;
BEGIN
    SELECT * INTO c FROM lb_state_levels(p_branch);
    IF cardinality(c.bs) = 1 THEN
        RETURN QUERY EXECUTE format($q$SELECT m.key::text, m."values" ->> %3$L FROM mat_records m
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.kind = %4$L AND (m."values" ->> %3$L) = ANY (%5$L::text[])
   AND NOT m.deleted$q$, c.d, p_branch, p_attr, p_kind, coalesce(p_values, '{}'));
        RETURN;
    END IF;
    RETURN QUERY EXECUTE format($q$SELECT e.key::text, e."values" ->> %3$L
  FROM (SELECT DISTINCT u.key FROM %1$s u) c
 CROSS JOIN LATERAL %2$s e
 WHERE e.present AND e.kind = %4$L AND (e."values" ->> %3$L) = ANY (%5$L::text[])$q$,
        lb_rec_cands_sql(c.d, c.bs, c.cs, c.hs,
                         format(' AND m.kind = %L AND (m."values" ->> %L) = ANY (%L::text[])', p_kind, p_attr, coalesce(p_values, '{}')),
                         true, ''),
        lb_rec_eff_sql(c.d, c.bs, c.cs, c.hs, 'c.key'), p_attr, p_kind, coalesce(p_values, '{}'));
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
