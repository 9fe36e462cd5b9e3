CREATE OR REPLACE FUNCTION lb_get_sql_single(p_branch text, p_key text, p_at bigint DEFAULT NULL::bigint)
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
$function$;
