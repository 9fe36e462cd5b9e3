-- lb_semantic: the Records of the branch (at its head, or as of seq p_at)
-- whose current version's vector of its Kind's embedding spec is nearest
-- to p_query (a unit vector), best first: score is cosine similarity.
-- p_kinds and p_specs pair each Kind searched with its spec and p_dims
-- with its dims. p_attribute/p_value (both or neither) keep only Records
-- whose Attribute has that value. Kind and Attribute filters apply before
-- the limit. path says how the rows were found: 'exact' (every vector of
-- the filtered Records compared) or 'hnsw' (pgvector's HNSW index of the
-- Domain and spec, scanned iteratively with hnsw.ef_search = p_ef_search
-- until p_limit Records pass the filters; approximate).
CREATE OR REPLACE FUNCTION lb_semantic(p_branch text, p_kinds text[], p_specs text[], p_dims integer[], p_query real[], p_limit integer, p_at bigint DEFAULT NULL::bigint, p_attribute text DEFAULT NULL::text, p_value text DEFAULT NULL::text, p_ef_search integer DEFAULT 100)
 RETURNS TABLE(key text, kind text, title text, score real, path text)
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
 SET jit TO 'off'
AS $function$
DECLARE
    c record;
    fr text := '';
    fx text := '';
    hnsw boolean;
    sql text := '';
    i int;
    q text;
BEGIN
    SELECT * INTO c FROM lb_scope_chain(p_branch, p_at);
    IF p_limit IS NULL OR p_limit < 1 OR p_limit > 1000 THEN
        RAISE EXCEPTION 'limit out of range' USING ERRCODE = '22023';
    END IF;
    IF cardinality(p_kinds) IS DISTINCT FROM cardinality(p_specs) OR cardinality(p_kinds) IS DISTINCT FROM cardinality(p_dims)
       OR cardinality(p_kinds) = 0 OR p_query IS NULL THEN
        RAISE EXCEPTION 'kinds, specs and dims must pair up' USING ERRCODE = '22023';
    END IF;
    IF p_attribute IS NOT NULL THEN
        fr := format(' AND r."values" ->> %L = %L', p_attribute, p_value);
        fx := format(' AND x."values" ->> %L = %L', p_attribute, p_value);
    END IF;
    q := p_query::text;
    hnsw := lb_vector_search() = 'hnsw';
    FOR i IN 1..cardinality(p_kinds) LOOP
        IF cardinality(p_query) <> p_dims[i] THEN
            RAISE EXCEPTION 'the query vector has % dimensions; kind % embeds %', cardinality(p_query), p_kinds[i], p_dims[i]
                USING ERRCODE = '22023';
        END IF;
        IF hnsw AND to_regclass(format('mv_hnsw_%s_%s', c.d, p_specs[i])) IS NOT NULL THEN
            -- HNSW: the index of the Domain and spec, scanned in distance
            -- order; a vector counts only when it is the version of its
            -- key that the read sees (and passes the Attribute filter).
            sql := sql || CASE WHEN sql = '' THEN '' ELSE E'\n UNION ALL\n' END || format($q$(SELECT e.key::text, e.kind::text, e.title, (1 - (v.vec::vector(%5$s) <=> %4$L::real[]::vector(%5$s)))::real AS score, 'hnsw'::text AS path
   FROM mat_vectors v
   JOIN LATERAL %6$s e ON true
  WHERE v.domain_id = %1$L AND v.spec = %3$L AND v.kind = %2$L
    AND e.present AND e.seq = v.seq AND e.kind = %2$L%7$s
  ORDER BY v.vec::vector(%5$s) <=> %4$L::real[]::vector(%5$s)
  LIMIT %8$s)$q$, c.d, p_kinds[i], p_specs[i], q, p_dims[i],
                lb_rec_eff_levels_sql(c.d, c.bs, lb_level_cuts(c.cs, c.hs), 'v.key'),
                CASE WHEN p_attribute IS NULL THEN '' ELSE format(' AND e."values" ->> %L = %L', p_attribute, p_value) END,
                p_limit);
        ELSE
            sql := sql || CASE WHEN sql = '' THEN '' ELSE E'\n UNION ALL\n' END || format($q$(SELECT m.key::text, m.kind::text, m.title, lb_dot(v.embedding, %4$L::real[])::real AS score, 'exact'::text AS path
   FROM (%5$s) m
   JOIN mat_vectors v ON v.domain_id = %1$L AND v.key = m.key AND v.seq = m.seq AND v.spec = %3$L
  ORDER BY score DESC, m.key
  LIMIT %6$s)$q$, c.d, p_kinds[i], p_specs[i], q,
                lb_semantic_source_levels(c.d, c.bs, c.cs, c.hs, format(' AND r.kind = %L', p_kinds[i]) || fr, format(' AND x.kind = %L', p_kinds[i]) || fx),
                p_limit);
        END IF;
    END LOOP;
    IF sql LIKE '%''hnsw''::text AS path%' THEN
        PERFORM set_config('hnsw.ef_search', greatest(least(p_ef_search, 1000), p_limit)::text, true);
        PERFORM set_config('hnsw.iterative_scan', 'relaxed_order', true);
    END IF;
    RETURN QUERY EXECUTE format('SELECT s.key, s.kind, s.title, s.score, s.path FROM (%s) s ORDER BY s.score DESC, s.key LIMIT %s', sql, p_limit);
END
$function$;
