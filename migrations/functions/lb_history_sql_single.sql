CREATE OR REPLACE FUNCTION lb_history_sql_single(p_branch text, p_key text, p_before bigint, p_limit integer)
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
$function$;
