-- lb_rec_kept_sql: for the current row r of branch b (a mat_records alias)
-- that changed after seq c, a condition true when the row still says what
-- it said at c about what p_what names, so the row may stand for its
-- version at c without reading its history:
--   'kind': its Kind (created at or before c: a Record changes Kind only by
--   being deleted and put again);
--   'attribute': its Kind and the value of p_attribute (created at or
--   before c, present, lineage of the Attribute at or before c).
-- The searches' test (its Kind, title and search vector) is written out in
-- lb_search_overlay and lb_search_overlay_own over lb_rec_kept_attrs.
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
    END;
END
$function$;
