-- Lorebase reads: the SECURITY DEFINER read functions and the word lexicon.
--
-- Every read function takes the Domain only from the transaction setting
-- (lb_domain()), never from a parameter, and builds its statement with
-- format(): the Domain, branch id, Kind and attribute names are quoted
-- literals (%L), so partial indexes match, every call is planned with them
-- and a role under row-level security gets the owner's index plans. Each
-- read F has a companion F_sql that returns the text of the statement F
-- runs (tests EXPLAIN it); F runs exactly that text.
--
-- Errors: SQLSTATE P0002 (no_data_found) for an unknown branch, Revision
-- or Record; 22023 (invalid_parameter_value) for a bad parameter; 42501 when
-- no Domain is in scope.

-- lb_scope_branch resolves a branch of the Domain in scope.
CREATE FUNCTION lb_scope_branch(p_branch text, OUT o_domain int, OUT o_branch int, OUT o_head bigint)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
BEGIN
    o_domain := lb_domain();
    IF o_domain IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    SELECT r.id, r.head_seq INTO o_branch, o_head
      FROM refs r
     WHERE r.domain_id = o_domain AND r.name = p_branch AND r.state <> 'deleting';
    IF NOT FOUND THEN
        RAISE EXCEPTION 'branch not found' USING ERRCODE = 'P0002';
    END IF;
END
$$;

-- lb_at_seq resolves a Revision id of the branch to its sequence number:
-- NULL for no Revision (the head); an id that is not a Revision of this
-- branch is 'revision not found'.
CREATE FUNCTION lb_at_seq(p_branch text, p_revision text) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    s bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_revision IS NULL OR p_revision = '' THEN
        RETURN NULL;
    END IF;
    SELECT r.seq INTO s FROM revisions r
     WHERE r.domain_id = d AND r.id = p_revision AND r.branch_id = b AND r.seq <= h;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'revision not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN s;
END
$$;

-- lb_rev_seq resolves a Revision id of the Domain (any branch) to its
-- sequence number; NULL for NULL or ''.
CREATE FUNCTION lb_rev_seq(p_revision text) RETURNS bigint
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int := lb_domain();
    s bigint;
BEGIN
    IF d IS NULL THEN
        RAISE EXCEPTION 'no Domain in scope' USING ERRCODE = '42501';
    END IF;
    IF p_revision IS NULL OR p_revision = '' THEN
        RETURN NULL;
    END IF;
    SELECT r.seq INTO s FROM revisions r WHERE r.domain_id = d AND r.id = p_revision;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'revision not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN s;
END
$$;

-- lb_require_record raises 'record not found' unless the Record exists on
-- the branch (at the head, or as of seq p_at).
CREATE FUNCTION lb_require_record(d int, b int, p_key text, p_at bigint) RETURNS void
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    ok boolean;
BEGIN
    IF p_at IS NULL THEN
        EXECUTE format('SELECT EXISTS (SELECT 1 FROM mat_records WHERE domain_id = %L AND branch_id = %L AND key = %L AND NOT deleted)',
                       d, b, p_key) INTO ok;
    ELSE
        EXECUTE format($q$SELECT coalesce((SELECT op <> 'delete' FROM mat_history
            WHERE domain_id = %L AND branch_id = %L AND key = %L AND seq <= %L ORDER BY seq DESC LIMIT 1), false)$q$,
                       d, b, p_key, p_at) INTO ok;
    END IF;
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
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_at IS NULL THEN
        RETURN format($q$SELECT m.key::text, m.kind::text, m.title, m.values, r.id
  FROM mat_records m
  LEFT JOIN revisions r ON r.domain_id = m.domain_id AND r.seq = m.seq
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = %3$L AND NOT m.deleted$q$, d, b, p_key);
    END IF;
    RETURN format($q$SELECT x.key::text, x.kind::text, x.title, x.values, x.revision_id
  FROM (SELECT * FROM mat_history
         WHERE domain_id = %1$L AND branch_id = %2$L AND key = %3$L AND seq <= %4$L
         ORDER BY seq DESC LIMIT 1) x
 WHERE x.op <> 'delete'$q$, d, b, p_key, p_at);
END
$$;

CREATE FUNCTION lb_get(p_branch text, p_key text, p_at bigint DEFAULT NULL)
    RETURNS TABLE (key text, kind text, title text, "values" jsonb, revision text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
BEGIN
    RETURN QUERY EXECUTE lb_get_sql(p_branch, p_key, p_at);
END
$$;

------------------------------------------------------------------------------
-- Keyset page of Records (of a Kind when p_kind is not NULL/'').

CREATE FUNCTION lb_page_sql(p_branch text, p_kind text, p_after text, p_limit int, p_at bigint DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    kind_m text := '';
    kind_x text := '';
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF coalesce(p_kind, '') <> '' THEN
        kind_m := format(' AND m.kind = %L', p_kind);
        kind_x := format(' AND x.kind = %L', p_kind);
    END IF;
    IF p_at IS NULL THEN
        RETURN format($q$SELECT m.key::text, m.kind::text, m.title, m.values, r.id
  FROM mat_records m
  LEFT JOIN revisions r ON r.domain_id = m.domain_id AND r.seq = m.seq
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L%3$s AND m.key > %4$L AND NOT m.deleted
 ORDER BY m.key
 LIMIT %5$s$q$, d, b, kind_m, coalesce(p_after, ''), p_limit);
    END IF;
    -- As of a Revision: each key's newest history row at or before it.
    RETURN format($q$SELECT x.key::text, x.kind::text, x.title, x.values, x.revision_id
  FROM (SELECT DISTINCT k.key FROM mat_history k
         WHERE k.domain_id = %1$L AND k.branch_id = %2$L AND k.key > %4$L) ks
 CROSS JOIN LATERAL (SELECT * FROM mat_history h
         WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = ks.key AND h.seq <= %6$L
         ORDER BY h.seq DESC LIMIT 1) x
 WHERE x.op <> 'delete'%3$s
 ORDER BY ks.key
 LIMIT %5$s$q$, d, b, kind_x, coalesce(p_after, ''), p_limit, p_at);
END
$$;

CREATE FUNCTION lb_page(p_branch text, p_kind text, p_after text, p_limit int, p_at bigint DEFAULT NULL)
    RETURNS TABLE (key text, kind text, title text, "values" jsonb, revision text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
BEGIN
    RETURN QUERY EXECUTE lb_page_sql(p_branch, p_kind, p_after, p_limit, p_at);
END
$$;

------------------------------------------------------------------------------
-- Query by Attribute: values ->> 'attr' = value, matching the per-Attribute
-- partial index of store.index (jobs/).

CREATE FUNCTION lb_query_by_attribute_sql(p_branch text, p_kind text, p_attribute text, p_value text,
                                          p_after text, p_limit int) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF coalesce(p_kind, '') = '' OR coalesce(p_attribute, '') = '' OR p_value IS NULL THEN
        RAISE EXCEPTION 'kind, attribute and value are required' USING ERRCODE = '22023';
    END IF;
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    RETURN format($q$SELECT m.key::text, m.kind::text, m.title, m.values, r.id
  FROM mat_records m
  LEFT JOIN revisions r ON r.domain_id = m.domain_id AND r.seq = m.seq
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.kind = %3$L
   AND (m.values ->> %4$L) = %5$L AND m.key > %6$L AND NOT m.deleted
 ORDER BY m.key
 LIMIT %7$s$q$, d, b, p_kind, p_attribute, p_value, coalesce(p_after, ''), p_limit);
END
$$;

CREATE FUNCTION lb_query_by_attribute(p_branch text, p_kind text, p_attribute text, p_value text,
                                      p_after text, p_limit int)
    RETURNS TABLE (key text, kind text, title text, "values" jsonb, revision text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
BEGIN
    RETURN QUERY EXECUTE lb_query_by_attribute_sql(p_branch, p_kind, p_attribute, p_value, p_after, p_limit);
END
$$;

------------------------------------------------------------------------------
-- Links of a Record: stored Links (origin 'l' → 'link') and foreign-key
-- Links (origin 'r' → 'ref'), outgoing, incoming or both.

CREATE FUNCTION lb_links_sql(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    rel text := '';
    q_out text;
    q_in text;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_direction IS NULL OR p_direction NOT IN ('out', 'in', 'both') THEN
        RAISE EXCEPTION 'direction must be out, in or both' USING ERRCODE = '22023';
    END IF;
    IF coalesce(p_relation, '') <> '' THEN
        rel := format(' AND relation = %L', p_relation);
    END IF;
    IF p_at IS NULL THEN
        q_out := format($q$SELECT relation::text, from_key::text, to_key::text, origin FROM mat_links
 WHERE domain_id = %L AND branch_id = %L AND from_key = %L AND NOT deleted%s$q$, d, b, p_key, rel);
        q_in := format($q$SELECT relation::text, from_key::text, to_key::text, origin FROM mat_links
 WHERE domain_id = %L AND branch_id = %L AND to_key = %L AND NOT deleted%s$q$, d, b, p_key, rel);
    ELSE
        q_out := format($q$SELECT relation, from_key, to_key, origin FROM (
  SELECT DISTINCT ON (relation, to_key) relation::text, from_key::text, to_key::text, origin, op FROM mat_link_history
   WHERE domain_id = %L AND branch_id = %L AND from_key = %L AND seq <= %L%s
   ORDER BY relation, to_key, seq DESC) z WHERE op = 'link'$q$, d, b, p_key, p_at, rel);
        q_in := format($q$SELECT relation, from_key, to_key, origin FROM (
  SELECT DISTINCT ON (relation, from_key) relation::text, from_key::text, to_key::text, origin, op FROM mat_link_history
   WHERE domain_id = %L AND branch_id = %L AND to_key = %L AND seq <= %L%s
   ORDER BY relation, from_key, seq DESC) z WHERE op = 'link'$q$, d, b, p_key, p_at, rel);
    END IF;
    RETURN format($q$SELECT y.relation, y.from_key, y.to_key, CASE y.origin WHEN 'r' THEN 'ref' ELSE 'link' END
  FROM (%s) y
 ORDER BY 1, 2, 3$q$,
        CASE p_direction WHEN 'out' THEN q_out WHEN 'in' THEN q_in ELSE q_out || E'\nUNION\n' || q_in END);
END
$$;

CREATE FUNCTION lb_links(p_branch text, p_key text, p_direction text, p_relation text, p_at bigint DEFAULT NULL)
    RETURNS TABLE (relation text, from_key text, to_key text, origin text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_links_sql(p_branch, p_key, p_direction, p_relation, p_at);
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    PERFORM lb_require_record(d, b, p_key, p_at);
    RETURN QUERY EXECUTE s;
END
$$;

------------------------------------------------------------------------------
-- Neighborhood: the Records within p_depth hops (Links either way), at most
-- p_fanout Links per node and direction, at most p_limit Records (nearest
-- first), and the Links between the Records returned. One statement: each
-- hop is a CTE over the previous one, so no Record appears twice.
-- Rows: kind 'record' (key, kind, title, depth) or 'link' (relation, from,
-- to, origin).

CREATE FUNCTION lb_neighborhood_sql(p_branch text, p_key text, p_depth int, p_limit int, p_fanout int DEFAULT 20) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
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
    RETURN format($q$WITH %1$s,
nodes AS (SELECT a.key, min(a.depth) AS depth FROM (%2$s) a GROUP BY a.key),
recs AS (SELECT m.key::text AS key, m.kind::text AS kind, m.title, n.depth
    FROM nodes n JOIN mat_records m
      ON m.domain_id = %3$L AND m.branch_id = %4$L AND m.key = n.key AND NOT m.deleted
    ORDER BY n.depth, n.key LIMIT %5$s),
links AS (SELECT DISTINCT x.relation::text AS relation, x.from_key::text AS from_key, x.to_key::text AS to_key, x.origin
    FROM (%6$s) x
   WHERE x.from_key IN (SELECT key FROM recs) AND x.to_key IN (SELECT key FROM recs))
SELECT 'record'::text, key, kind, title, depth, NULL::text, NULL::text, NULL::text, NULL::text FROM recs
UNION ALL
SELECT 'link', NULL, NULL, NULL, NULL, relation, from_key, to_key, CASE origin WHEN 'r' THEN 'ref' ELSE 'link' END FROM links$q$,
        ctes,
        (SELECT string_agg(format('SELECT key, %s AS depth FROM n%s', j, j), ' UNION ALL ') FROM generate_series(0, p_depth) j),
        d, b, p_limit, edges);
END
$$;

CREATE FUNCTION lb_neighborhood(p_branch text, p_key text, p_depth int DEFAULT 2, p_limit int DEFAULT 200, p_fanout int DEFAULT 20)
    RETURNS TABLE (row_type text, key text, kind text, title text, depth int,
                   relation text, from_key text, to_key text, origin text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_neighborhood_sql(p_branch, p_key, p_depth, p_limit, p_fanout);
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    PERFORM lb_require_record(d, b, p_key, NULL);
    RETURN QUERY EXECUTE s;
END
$$;

------------------------------------------------------------------------------
-- History of a Record, newest first, before seq p_before.

CREATE FUNCTION lb_history_sql(p_branch text, p_key text, p_before bigint, p_limit int) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 10001 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    RETURN format($q$SELECT x.revision_id, x.seq, x.op, x.values, r.author, r.message, r.at, coalesce(x.provenance, r.provenance)
  FROM (SELECT * FROM mat_history
         WHERE domain_id = %1$L AND branch_id = %2$L AND key = %3$L AND seq < %4$L
         ORDER BY seq DESC LIMIT %5$s) x
  LEFT JOIN revisions r ON r.domain_id = %1$L AND r.seq = x.seq
 ORDER BY x.seq DESC$q$, d, b, p_key, coalesce(p_before, 9223372036854775807), p_limit);
END
$$;

CREATE FUNCTION lb_history(p_branch text, p_key text, p_before bigint, p_limit int)
    RETURNS TABLE (revision text, seq bigint, op text, "values" jsonb, author text, message text,
                   at timestamptz, provenance jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
DECLARE
    s text := lb_history_sql(p_branch, p_key, p_before, p_limit);
    d int;
    b int;
    h bigint;
    ok boolean;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    EXECUTE format('SELECT EXISTS (SELECT 1 FROM mat_history WHERE domain_id = %L AND branch_id = %L AND key = %L)',
                   d, b, p_key) INTO ok;
    IF NOT ok THEN
        RAISE EXCEPTION 'record not found' USING ERRCODE = 'P0002';
    END IF;
    RETURN QUERY EXECUTE s;
END
$$;

------------------------------------------------------------------------------
-- Lineage of a Record at the head, one statement: per Attribute of
-- mat_records.lineage the Revision that last set it (primary-key probes of
-- revisions and mat_history), the creating change and the number of changes.
-- Its cost depends on the number of Attributes, not of changes.

CREATE FUNCTION lb_lineage_sql(p_branch text, p_key text) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    RETURN format($q$SELECT m.key::text, m.kind::text, m.versions,
       cr.id, cr.author, cr.at, coalesce(ch.provenance, cr.provenance),
       (SELECT coalesce(jsonb_object_agg(l.attr, jsonb_build_object(
                   'value', m.values -> l.attr,
                   'revision', r.id, 'seq', r.seq, 'author', r.author, 'at', r.at,
                   'provenance', coalesce(hh.provenance, r.provenance))), '{}'::jsonb)
          FROM jsonb_each_text(m.lineage) l(attr, s)
          LEFT JOIN revisions r ON r.domain_id = %1$L AND r.seq = l.s::bigint
          LEFT JOIN mat_history hh ON hh.domain_id = %1$L AND hh.branch_id = %2$L
                                  AND hh.key = m.key AND hh.seq = l.s::bigint)
  FROM mat_records m
  LEFT JOIN revisions cr ON cr.domain_id = %1$L AND cr.seq = m.created_seq
  LEFT JOIN mat_history ch ON ch.domain_id = %1$L AND ch.branch_id = %2$L AND ch.key = m.key AND ch.seq = m.created_seq
 WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = %3$L AND NOT m.deleted$q$, d, b, p_key);
END
$$;

CREATE FUNCTION lb_lineage(p_branch text, p_key text)
    RETURNS TABLE (key text, kind text, versions int, created_revision text, created_author text,
                   created_at timestamptz, created_provenance jsonb, lineage jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
AS $$
BEGIN
    RETURN QUERY EXECUTE lb_lineage_sql(p_branch, p_key);
END
$$;

------------------------------------------------------------------------------
-- Word lexicon: the distinct words of the search vectors of each branch
-- with the number of Records holding them, kept by statement-level
-- triggers on mat_records (set-based, from the transition tables).

CREATE TABLE mat_lexicon (
    domain_id int NOT NULL,
    branch_id int NOT NULL,
    word      text COLLATE "C" NOT NULL,
    records   int NOT NULL,
    PRIMARY KEY (domain_id, branch_id, word)
);
CREATE INDEX mat_lexicon_trgm_idx ON mat_lexicon USING gin (domain_id, branch_id, word gin_trgm_ops);
ALTER TABLE mat_lexicon ENABLE ROW LEVEL SECURITY;
CREATE POLICY domain_isolation ON mat_lexicon USING (domain_id = lb_domain()) WITH CHECK (domain_id = lb_domain());
GRANT SELECT ON mat_lexicon TO lorebase_app;

-- lb_lexicon_apply adds the word counts of the rows in new_rows and
-- subtracts those of old_rows (either may be absent: TG_OP says which).
CREATE FUNCTION lb_lexicon_apply() RETURNS trigger
    LANGUAGE plpgsql SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
BEGIN
    IF TG_OP = 'INSERT' THEN
        INSERT INTO mat_lexicon AS l (domain_id, branch_id, word, records)
        SELECT domain_id, branch_id, w, count(*)::int
          FROM new_rows, unnest(tsvector_to_array(search)) w
         WHERE NOT deleted
         GROUP BY 1, 2, 3
         ORDER BY 1, 2, 3
        ON CONFLICT (domain_id, branch_id, word) DO UPDATE SET records = l.records + EXCLUDED.records;
    ELSIF TG_OP = 'DELETE' THEN
        WITH delta AS (
            SELECT domain_id, branch_id, w AS word, count(*)::int AS n
              FROM old_rows, unnest(tsvector_to_array(search)) w
             WHERE NOT deleted
             GROUP BY 1, 2, 3)
        UPDATE mat_lexicon l SET records = l.records - delta.n
          FROM delta
         WHERE l.domain_id = delta.domain_id AND l.branch_id = delta.branch_id AND l.word = delta.word;
        DELETE FROM mat_lexicon l
         USING (SELECT DISTINCT domain_id, branch_id FROM old_rows) o
         WHERE l.domain_id = o.domain_id AND l.branch_id = o.branch_id AND l.records <= 0
           AND l.word IN (SELECT unnest(tsvector_to_array(search)) FROM old_rows);
    ELSE
        -- UPDATE: only rows whose words changed contribute.
        WITH delta AS (
            SELECT domain_id, branch_id, w AS word, sum(n)::int AS n FROM (
                SELECT domain_id, branch_id, unnest(tsvector_to_array(search)) AS w, 1 AS n
                  FROM new_rows WHERE NOT deleted
                UNION ALL
                SELECT domain_id, branch_id, unnest(tsvector_to_array(search)), -1
                  FROM old_rows WHERE NOT deleted) x
             GROUP BY 1, 2, 3
            HAVING sum(n) <> 0)
        INSERT INTO mat_lexicon AS l (domain_id, branch_id, word, records)
        SELECT domain_id, branch_id, word, n FROM delta ORDER BY 1, 2, 3
        ON CONFLICT (domain_id, branch_id, word) DO UPDATE SET records = l.records + EXCLUDED.records;
        DELETE FROM mat_lexicon l
         USING (SELECT DISTINCT domain_id, branch_id FROM old_rows) o
         WHERE l.domain_id = o.domain_id AND l.branch_id = o.branch_id AND l.records <= 0
           AND l.word IN (SELECT unnest(tsvector_to_array(search)) FROM old_rows);
    END IF;
    RETURN NULL;
END
$$;

CREATE TRIGGER mat_records_lexicon_ins AFTER INSERT ON mat_records
    REFERENCING NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();
CREATE TRIGGER mat_records_lexicon_upd AFTER UPDATE ON mat_records
    REFERENCING OLD TABLE AS old_rows NEW TABLE AS new_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();
CREATE TRIGGER mat_records_lexicon_del AFTER DELETE ON mat_records
    REFERENCING OLD TABLE AS old_rows FOR EACH STATEMENT EXECUTE FUNCTION lb_lexicon_apply();

INSERT INTO mat_lexicon (domain_id, branch_id, word, records)
SELECT domain_id, branch_id, w, count(*)::int
  FROM mat_records, unnest(tsvector_to_array(search)) w
 WHERE NOT deleted
 GROUP BY 1, 2, 3;

------------------------------------------------------------------------------
-- Full-text search with typo corrections and partial matches.
--
-- The query's words are the lexemes of to_tsvector('simple', q) (the parser
-- the stored vectors use; at most 16). A word the branch's lexicon lacks is
-- corrected from it (trigram similarity, top 3), and its term becomes
-- (word | corrections). The full match is every term (AND); when it finds
-- fewer than p_partial_min Records, Records holding some of the terms
-- follow (at most p_partial_candidates), ranked by the terms they hold.
-- Ranking reads at most p_candidates matches. The functions run with
-- enable_seqscan off: with a LIMIT and no order the planner otherwise
-- prefers reading the partition in order over the GIN index (whose Domain
-- and branch entries it costs as reading the whole Domain). tsqueries are built with
-- plainto_tsquery per word and combined with && and ||, never parsed from
-- the query text.

-- lb_search_terms returns the query's words, each with its corrections,
-- and its term as a tsquery.
CREATE FUNCTION lb_search_terms(d int, b int, p_query text)
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
    FOR w IN SELECT x FROM unnest(tsvector_to_array(to_tsvector('simple', left(coalesce(p_query, ''), 500)))) x LIMIT 16 LOOP
        c := '{}';
        t := plainto_tsquery('simple', w);
        IF numnode(t) = 0 THEN
            CONTINUE;
        END IF;
        IF length(w) >= 3 AND w ~ '[[:alpha:]]' AND NOT EXISTS (
               SELECT 1 FROM mat_lexicon l WHERE l.domain_id = d AND l.branch_id = b AND l.word = w) THEN
            SELECT coalesce(array_agg(z.word ORDER BY z.sim DESC, z.word), '{}') INTO c FROM (
                SELECT l.word, similarity(l.word, w) AS sim FROM mat_lexicon l
                 WHERE l.domain_id = d AND l.branch_id = b AND l.word % w
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

-- lb_search_source is the FROM clause of the search statements: the
-- branch's Records at the head, or as of seq p_at (Records unchanged since
-- p_at from mat_records, the others from their history row at p_at, with
-- the search vector computed as the commit computes it).
CREATE FUNCTION lb_search_source(d int, b int, p_at bigint) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT CASE WHEN p_at IS NULL THEN
    format('FROM mat_records m WHERE m.domain_id = %L AND m.branch_id = %L AND NOT m.deleted', d, b)
ELSE format($q$FROM (
    SELECT r.key, r.kind, r.title, r.search FROM mat_records r
     WHERE r.domain_id = %1$L AND r.branch_id = %2$L AND NOT r.deleted AND r.seq <= %3$L
    UNION ALL
    SELECT x.key, x.kind, x.title,
           setweight(to_tsvector('simple', x.title), 'A') || setweight(to_tsvector('simple', coalesce((
               SELECT string_agg(x.values ->> (a ->> 'name'), ' ')
                 FROM schemas sc, jsonb_array_elements(sc.compiled -> 'kinds' -> x.kind -> 'attributes') a
                WHERE sc.domain_id = %1$L AND sc.branch_id = %2$L AND (a ->> 'search')::boolean
                  AND a ->> 'name' IS DISTINCT FROM sc.compiled -> 'kinds' -> x.kind ->> 'title'), '')), 'B')
      FROM (SELECT DISTINCT c ->> 'key' AS key FROM revisions v, jsonb_array_elements(v.changes) c
             WHERE v.domain_id = %1$L AND v.branch_id = %2$L AND v.seq > %3$L
               AND c ->> 'op' IN ('put', 'patch', 'delete')) ck
     CROSS JOIN LATERAL (SELECT * FROM mat_history h
             WHERE h.domain_id = %1$L AND h.branch_id = %2$L AND h.key = ck.key AND h.seq <= %3$L
             ORDER BY h.seq DESC LIMIT 1) x
     WHERE x.op <> 'delete') m WHERE true$q$, d, b, p_at)
END
$$;

CREATE FUNCTION lb_search_full_sql(src text, p_kind text, q tsquery, p_candidates int, p_limit int) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT format($q$SELECT c.key::text, c.kind::text, c.title, ts_rank(c.search, %2$L::tsquery) AS score, 'full'::text, NULL::jsonb
  FROM (SELECT m.key, m.kind, m.title, m.search %1$s
           AND m.search @@ %2$L::tsquery%3$s
         LIMIT %4$s) c
 ORDER BY score DESC, c.key
 LIMIT %5$s$q$, src, q::text,
    CASE WHEN coalesce(p_kind, '') <> '' THEN format(' AND m.kind = %L', p_kind) ELSE '' END,
    p_candidates, p_limit)
$$;

CREATE FUNCTION lb_search_partial_sql(src text, p_kind text, terms tsquery[], full_q tsquery,
                                      p_candidates int, p_limit int) RETURNS text
    LANGUAGE sql IMMUTABLE
AS $$
SELECT format($q$SELECT c.key::text, c.kind::text, c.title,
       (ts_rank(c.search, %2$L::tsquery) * (%3$s) / %4$s)::real AS score, 'partial'::text, NULL::jsonb
  FROM (SELECT m.key, m.kind, m.title, m.search %1$s
           AND m.search @@ %2$L::tsquery AND NOT m.search @@ %5$L::tsquery%6$s
         LIMIT %7$s) c
 ORDER BY (%3$s) DESC, score DESC, c.key
 LIMIT %8$s$q$, src,
    (SELECT string_agg('(' || t::text || ')', ' | ') FROM unnest(terms) t),
    (SELECT string_agg(format('(c.search @@ %L::tsquery)::int', t::text), ' + ') FROM unnest(terms) t),
    cardinality(terms), full_q::text,
    CASE WHEN coalesce(p_kind, '') <> '' THEN format(' AND m.kind = %L', p_kind) ELSE '' END,
    p_candidates, p_limit)
$$;

-- lb_search_sql returns the statements lb_search runs: the full match and,
-- when partial matching may follow, the partial match.
CREATE FUNCTION lb_search_sql(p_branch text, p_query text, p_kind text, p_limit int, p_at bigint DEFAULT NULL,
                              p_candidates int DEFAULT 1000, p_partial_candidates int DEFAULT 100)
    RETURNS TABLE (statement text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    terms tsquery[];
    full_q tsquery;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    SELECT array_agg(t.term) INTO terms FROM lb_search_terms(d, b, p_query) t;
    IF terms IS NULL THEN
        RETURN;
    END IF;
    SELECT string_agg('(' || x::text || ')', ' & ')::tsquery INTO full_q FROM unnest(terms) x;
    statement := lb_search_full_sql(lb_search_source(d, b, p_at), p_kind, full_q, p_candidates, p_limit);
    RETURN NEXT;
    IF cardinality(terms) > 1 THEN
        statement := lb_search_partial_sql(lb_search_source(d, b, p_at), p_kind, terms, full_q, p_partial_candidates, p_limit);
        RETURN NEXT;
    END IF;
END
$$;

-- lb_search: rows of match 'full' or 'partial', then one row of match
-- 'corrections' whose corrections column maps corrected words to their
-- corrections.
CREATE FUNCTION lb_search(p_branch text, p_query text, p_kind text, p_limit int, p_at bigint DEFAULT NULL,
                          p_candidates int DEFAULT 1000, p_partial_min int DEFAULT 5, p_partial_candidates int DEFAULT 100)
    RETURNS TABLE (key text, kind text, title text, score real, match text, corrections jsonb)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
    SET enable_seqscan = off
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    terms tsquery[];
    corr jsonb;
    full_q tsquery;
    src text;
    n int := 0;
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 OR p_candidates IS NULL OR p_candidates < 1
       OR p_partial_candidates IS NULL OR p_partial_candidates < 1 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    src := lb_search_source(d, b, p_at);
    SELECT array_agg(t.term),
           coalesce(jsonb_object_agg(t.word, to_jsonb(t.corrections)) FILTER (WHERE cardinality(t.corrections) > 0), '{}')
      INTO terms, corr
      FROM lb_search_terms(d, b, p_query) t;
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
-- Entity resolution: candidates for a mention, ranked by reason: the key
-- itself, an exact title (case-insensitive), a match through typo
-- corrections, then partial matches; by score within a reason.

CREATE FUNCTION lb_resolve_sql(p_branch text, p_mention text, p_kind text, p_limit int,
                               p_candidates int DEFAULT 1000, p_partial_candidates int DEFAULT 100) RETURNS text
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
AS $$
DECLARE
    d int;
    b int;
    h bigint;
    kind_m text := '';
BEGIN
    SELECT * INTO d, b, h FROM lb_scope_branch(p_branch);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF coalesce(p_kind, '') <> '' THEN
        kind_m := format(' AND m.kind = %L', p_kind);
    END IF;
    RETURN format($q$WITH k AS (
    SELECT m.key::text AS key, m.kind::text AS kind, m.title FROM mat_records m
     WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = %3$L AND NOT m.deleted%4$s),
s AS (
    SELECT s.key, s.kind, s.title, s.score, s.match
      FROM lb_search(%5$L, %3$L, %6$L, %7$s, NULL, %8$s, %7$s, %9$s) s
     WHERE s.match IN ('full', 'partial') AND s.key NOT IN (SELECT key FROM k)),
c AS (
    SELECT k.key, k.kind, k.title, 1::real AS score, 'key'::text AS reason, 0 AS prio FROM k
    UNION ALL
    SELECT s.key, s.kind, s.title, s.score, z.reason, z.prio
      FROM s CROSS JOIN LATERAL (
        SELECT CASE WHEN lower(s.title) = lower(%3$L) THEN 'title'
                    WHEN s.match = 'full' AND NOT EXISTS (
                         SELECT 1 FROM mat_records m
                          WHERE m.domain_id = %1$L AND m.branch_id = %2$L AND m.key = s.key
                            AND m.search @@ plainto_tsquery('simple', %3$L)) THEN 'typo'
                    ELSE 'partial' END AS reason) r
      CROSS JOIN LATERAL (SELECT r.reason, CASE r.reason WHEN 'title' THEN 1 WHEN 'typo' THEN 2 ELSE 3 END AS prio) z)
SELECT c.key, c.kind, c.title, c.score, c.reason FROM c
 ORDER BY c.prio, c.score DESC, c.key
 LIMIT %7$s$q$, d, b, p_mention, kind_m, p_branch, coalesce(p_kind, ''), p_limit, p_candidates, p_partial_candidates);
END
$$;

CREATE FUNCTION lb_resolve(p_branch text, p_mention text, p_kind text, p_limit int,
                           p_candidates int DEFAULT 1000, p_partial_candidates int DEFAULT 100)
    RETURNS TABLE (key text, kind text, title text, score real, reason text)
    LANGUAGE plpgsql STABLE SECURITY DEFINER
    SET search_path = public, pg_temp
    SET jit = off
    SET enable_seqscan = off
AS $$
BEGIN
    RETURN QUERY EXECUTE lb_resolve_sql(p_branch, p_mention, p_kind, p_limit, p_candidates, p_partial_candidates);
END
$$;

------------------------------------------------------------------------------
-- Only lorebase_app (and the owner) may call the read functions.

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
