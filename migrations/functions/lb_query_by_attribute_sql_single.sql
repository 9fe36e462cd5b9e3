CREATE OR REPLACE FUNCTION lb_query_by_attribute_sql_single(p_branch text, p_kind text, p_attribute text, p_value text, p_after text, p_limit integer)
 RETURNS text
 LANGUAGE plpgsql
 STABLE SECURITY DEFINER
 SET search_path TO 'public', 'pg_temp'
AS $function$
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
   AND %8$s = %5$L AND m.key > %6$L AND NOT m.deleted
 ORDER BY m.key
 LIMIT %7$s$q$, d, b, p_kind, p_attribute, p_value, coalesce(p_after, ''), p_limit,
        lb_attr_expr(d, ARRAY[b], p_kind, p_attribute, 'm'));
END
$function$;
