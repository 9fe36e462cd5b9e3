CREATE OR REPLACE FUNCTION lb_page_sql_single(p_branch text, p_kind text, p_after text, p_limit integer, p_at bigint DEFAULT NULL::bigint)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
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
$function$;
