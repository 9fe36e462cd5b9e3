-- lb_rec_kept_sql: for the current row r of branch b (a mat_records alias)
-- that changed after seq c, a condition true when the row still says what
-- it said at c about what p_what names, so the row may stand for its
-- version at c without reading its history:
--   'search': its Kind, title and search vector (the Record was created at
--   or before c, is present, and its title Attribute and search Attributes,
--   as b's compiled schema names them, kept their values since: lineage at
--   or before c);
--   'kind': its Kind (created at or before c: a Record changes Kind only by
--   being deleted and put again).
-- With p_attribute, 'attribute': its Kind and the value of p_attribute
-- (created at or before c, lineage of the Attribute at or before c).
-- plpgsql, so a session plans its statement once.
CREATE OR REPLACE FUNCTION lb_rec_kept_sql(d integer, b integer, c bigint, r text, p_what text, p_attribute text DEFAULT NULL::text)
 RETURNS text
 LANGUAGE plpgsql
 STABLE
 SET search_path TO 'public', 'pg_temp'
AS $function$
BEGIN
    RETURN format('%1$s.created_seq <= %2$L', r, c) || CASE p_what
    WHEN 'kind' THEN ''
    WHEN 'attribute' THEN format(' AND NOT %1$s.deleted AND coalesce((%1$s.lineage ->> %3$L)::numeric <= %2$L, false)', r, c, p_attribute)
    ELSE format(' AND NOT %1$s.deleted AND %3$s', r, c,
                coalesce((SELECT 'CASE ' || r || '.kind' || string_agg(format(' WHEN %L THEN %s', z.kind, z.conds), '' ORDER BY z.kind)
                                 || ' ELSE false END'
                            FROM (SELECT k.key AS kind,
                                         string_agg(format('coalesce((%s.lineage ->> %L)::numeric <= %L, false)', r, a.name, c),
                                                    ' AND ' ORDER BY a.name) AS conds
                                    FROM schemas sc
                                   CROSS JOIN LATERAL jsonb_each(sc.compiled -> 'kinds') k
                                   CROSS JOIN LATERAL (SELECT x.a ->> 'name' AS name
                                                         FROM jsonb_array_elements(k.value -> 'attributes') x(a)
                                                        WHERE coalesce((x.a ->> 'search')::boolean, false)
                                                           OR x.a ->> 'name' = k.value ->> 'title'
                                                       UNION
                                                       SELECT k.value ->> 'title' WHERE k.value ->> 'title' IS NOT NULL) a
                                   WHERE sc.domain_id = d AND sc.branch_id = b
                                   GROUP BY k.key) z), 'false'))
    END;
END
$function$;
